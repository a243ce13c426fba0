"""How ``Memory`` checks what a caller passes: a plain TypeError naming what was expected (not a
failure deep in a pipeline), tenant names, and retrieval filters. Its own module because the
document, question and session calls (``memory.py``, ``sessions.py``) share these checks.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence, TypeVar

from agent_memory.core.limits import check_document_text, question_problem
from agent_memory.core.names import tenant_named
from agent_memory.core.storable import check_storable, check_text

R = TypeVar("R")

FILTER_KEYS = ("source_ids", "kinds", "created_after", "created_before", "metadata")


def expect_type(value: Any, kinds: type | tuple[type, ...], what: str, example: str) -> Any:
    """``value`` if it is one of ``kinds``, else a TypeError naming what was expected and what came."""
    if isinstance(value, kinds) and not isinstance(value, bool):
        return value
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    raise TypeError(f"{what} must be {example}, got {type(value).__name__} {shown}")


def checked_records(records: Any, kind: type[R], what: str, example: str) -> Iterable[R]:
    """``records`` as an iterable of ``kind``, or a TypeError naming what was expected: for the whole
    argument (a str, a mapping or a non-iterable is no batch of records), or for the first element that is
    not a ``kind``, by its index and type (a dict once failed deep in the pipeline as an AttributeError).

    A sequence is checked whole before anything is stored; a lazy iterable (a generator) is checked as
    it is drawn, so a corpus streamed in batches is never held in memory to be checked first."""
    if isinstance(records, (str, bytes, Mapping)) or not isinstance(records, Iterable):
        shown = repr(records) if len(repr(records)) <= 60 else repr(records)[:57] + "..."
        raise TypeError(f"{what} must be a list (or another iterable) of {kind.__name__}, such as "
                        f"[{example}], got {type(records).__name__} {shown}")
    if isinstance(records, Sequence):
        for index, record in enumerate(records):
            expect_type(record, kind, f"{what}[{index}]", f"a {kind.__name__} like {example}")
        return records
    return _drawn_checked(records, kind, what, example)


def _drawn_checked(records: Iterable[Any], kind: type[R], what: str, example: str) -> Iterator[R]:
    for index, record in enumerate(records):
        yield expect_type(record, kind, f"{what}[{index}]", f"a {kind.__name__} like {example}")


def check_metadata(metadata: Any, what: str = "metadata") -> dict[str, Any]:
    """``metadata`` as a dict (None: empty), or a TypeError/ValueError naming the bad key: values, nested
    ones too, must be what every store holds (core/storable.py: no NUL, no Infinity or NaN)."""
    if metadata is None:
        return {}
    metadata = dict(expect_type(metadata, Mapping, what, "a mapping of names to values"))
    check_storable(metadata, what)
    return metadata


def check_document(text: Any, title: Any) -> None:
    """A document's text and title as every store holds them (str, no NUL), else TypeError/ValueError."""
    check_document_text(expect_type(text, str, "text", "a str"))
    check_text(expect_type(title, str, "title", "a str"), "title")


def message_mapping(message: Any) -> dict[str, Any]:
    """A message as a plain dict, or a TypeError naming both wire formats."""
    return dict(expect_type(message, Mapping, "a message",
                        "a mapping like {'role': 'user', 'content': 'text'} (OpenAI or Anthropic style)"))


def check_question(question: Any, what: str = "question") -> str:
    """``question`` if every surface takes it (core/limits.py: not blank, at most MAX_QUESTION_CHARS
    characters, no NUL), else a TypeError or a ValueError naming ``what`` and the problem."""
    problem = question_problem(expect_type(question, str, what, "a str"))
    if problem is not None:
        raise ValueError(f"{what} {problem}")
    return question


def check_forgotten_id(source_id: Any) -> str:
    """A source ID (or a file's path) to forget or match, as MCP's ``forget`` and ``DELETE /v1/sources/{id}``
    take it: a str (else TypeError) that is not empty (else ValueError: nothing is named by it)."""
    expect_type(source_id, str, "source_id", "a str such as 'notes/greenhouse.md' (or a file's path)")
    if not source_id:
        raise ValueError("source_id must name a source or a file, got '' (list them with `agent-memory list`)")
    return source_id


def check_tenant(tenant: Any, held: Callable[[str], bool] | None = None) -> str:
    """``tenant`` if it is a tenant name (``core/names.py``: TypeError for a non-str, else ConfigError naming
    the problem). ``held``: whether the data dir holds data under a name; a name the rule refuses that
    does is taken all the same, so a tenant stored before the rule stays readable and forgettable."""
    return tenant_named(expect_type(tenant, str, "tenant", "a str such as 'acme'"), held)


def filter_args(filters: Mapping[str, Any] | Any | None) -> dict[str, Any]:
    """Keyword arguments of ``RetrievalPipeline.run`` from a mapping or a pydantic model of filters."""
    if filters is None:
        return {}
    if hasattr(filters, "model_dump"):
        filters = filters.model_dump()
    expect_type(filters, Mapping, "filters", f"a mapping with keys among {list(FILTER_KEYS)}")
    unknown = sorted(set(filters) - set(FILTER_KEYS))
    if unknown:
        raise ValueError(f"unknown filter keys {unknown}; known: {list(FILTER_KEYS)}")
    return {k: v for k, v in filters.items() if v is not None}
