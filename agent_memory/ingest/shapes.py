"""The shapes of JSON input, checked at the boundary before any reader walks it.

A JSON file is parsed with a nesting limit, then validated against the pydantic model of
the format it claims to be (a LoCoMo or LongMemEval transcript, a generic turn list,
SQuAD/HotpotQA records, plain records with a text field). A file of the wrong shape becomes
a recorded skip with the first offending field named; it never reaches a reader as a value
of an unexpected type (which used to raise out of the job and abort it).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError

from agent_memory.core.errors import IngestError, problem_of

# Real transcripts and records nest 4-6 levels; anything far deeper is hostile or broken.
MAX_JSON_DEPTH = 100
# A record's own ID becomes a source ID (a citation tag): bounded like API source IDs.
MAX_ID_CHARS = 512

Scalar = StrictStr | StrictInt


class _Open(BaseModel):
    """Unknown keys are allowed (datasets carry many); the keys we read must have our types."""

    model_config = ConfigDict(extra="allow")


class LocomoTurn(_Open):
    text: StrictStr = ""
    speaker: StrictStr = ""
    dia_id: StrictStr | None = None
    blip_caption: StrictStr | None = None


class LocomoRecord(_Open):
    conversation: dict[str, Any]
    sample_id: Scalar = "conv"


class LongMemEvalTurn(_Open):
    role: StrictStr = ""
    content: StrictStr = ""
    has_answer: StrictBool | None = None


class LongMemEvalRecord(_Open):
    haystack_sessions: list[list[LongMemEvalTurn]]
    haystack_session_ids: list[Scalar] = Field(default_factory=list)
    haystack_dates: list[StrictStr] = Field(default_factory=list)


class GenericTurn(_Open):
    text: StrictStr | None = None
    content: StrictStr | list[Any] | None = None
    speaker: StrictStr | None = None
    role: StrictStr | None = None
    session_id: Scalar | None = None
    turn_id: Scalar | None = None
    id: Scalar | None = None
    timestamp: Scalar | None = None
    date: Scalar | None = None


class HotpotContext(_Open):
    title: StrictStr = ""
    paragraph_text: StrictStr | None = None
    text: StrictStr | None = None


class SquadParagraph(_Open):
    context: StrictStr = ""
    id: Scalar | None = None


class SquadArticle(_Open):
    title: StrictStr = ""
    paragraphs: list[SquadParagraph] = Field(default_factory=list)


class TextRecord(_Open):
    id: Scalar | None = None
    source_id: Scalar | None = None
    title: Scalar | None = None


def parse_json(raw: str, *, jsonl: bool) -> Any:
    """Parsed JSON (a list of values for JSONL), or IngestError naming what is wrong and where."""
    if jsonl:
        values, broken = parse_json_lines(raw)
        if broken:
            raise IngestError(next(iter(broken.values())))
        return values
    return _parse_one(raw, 1, jsonl=False)


def parse_json_lines(raw: str) -> tuple[list[Any], dict[int, str]]:
    """JSONL, each line alone: the values of its non-blank lines in order, and, by their index in
    that list, the reason of each line that does not parse (its value is None there). A line cut
    short by a crash or a copy spoils only itself, and later lines keep their positions."""
    values: list[Any] = []
    broken: dict[int, str] = {}
    for number, text in ((n, line) for n, line in enumerate(raw.splitlines(), 1) if line.strip()):
        try:
            values.append(_parse_one(text, number, jsonl=True))
        except IngestError as exc:
            broken[len(values)] = str(exc)
            values.append(None)
    return values, broken


def _parse_one(text: str, number: int, *, jsonl: bool) -> Any:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise IngestError(f"malformed JSON: {exc.msg} at line {number if jsonl else exc.lineno}") from None
    except RecursionError:
        raise IngestError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels at line {number}") from None
    if depth(value) > MAX_JSON_DEPTH:
        raise IngestError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels at line {number}")
    return value


def depth(value: Any) -> int:
    """Nesting depth, iteratively (a recursive walk is what a hostile file would exploit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        deepest = max(deepest, level)
        if deepest > MAX_JSON_DEPTH:
            return deepest
        stack.extend((child, level + 1) for child in children)
    return deepest


def check(model: type[BaseModel], value: Any, where: str = "") -> BaseModel:
    """``model`` validated from ``value``, or IngestError naming the first bad field and its value."""
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise IngestError(f"wrong shape for {model.__name__}: {describe(exc, where)}") from None


def describe(exc: ValidationError, where: str = "") -> str:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in (where, *err.get("loc", ())) if p != "") or "(top level)"
    shown = repr(err.get("input"))
    shown = shown if len(shown) <= 60 else shown[:60] + "..."
    more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{loc}: {problem_of(err)}, got {shown}{more}"


def record_id(value: Any, where: str) -> str | None:
    """A record's own ID as a string, or IngestError when it cannot be one (a dict, a huge string)."""
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise IngestError(f"{where}: an ID must be a string or an integer, got {type(value).__name__}")
    text = str(value)
    if len(text) > MAX_ID_CHARS:
        raise IngestError(f"{where}: an ID of {len(text)} characters is longer than {MAX_ID_CHARS}")
    return text


def holds_something(value) -> bool:
    """Whether a JSON value holds a string with text, a number or a boolean anywhere (not [], {}, null, "")."""
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, (bool, int, float)):
        return True
    if isinstance(value, dict):
        return any(holds_something(v) for v in value.values())
    if isinstance(value, list):
        return any(holds_something(v) for v in value)
    return False


def string_chars(value) -> int:
    """How many characters the strings of a JSON value hold, nested ones too (not its keys, numbers or nulls)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(string_chars(v) for v in value.values())
    if isinstance(value, list):
        return sum(string_chars(v) for v in value)
    return 0
