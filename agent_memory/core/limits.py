"""The caps every surface shares: the largest value of an argument that the HTTP API (its request models
and query parameters), the CLI (its argument types), the Python API (``Memory`` and the upkeep views) and
the MCP tools accept. One constant each, in the lowest layer, so that a call refused through a server is
refused locally too, naming the value and the cap, and one accepted locally works through a server.

The prompt budget's cap, ``MAX_PROMPT_BUDGET``, lives with the token counting (core/tokens.py).
"""

from __future__ import annotations

import math
from typing import Any, Iterator, Sequence
from urllib.parse import quote

from agent_memory.core.lookalikes import reads_blank
from agent_memory.core.storable import check_text, text_problem

MAX_QUESTION_CHARS = 20_000  # a question, or a search query (ask, prompt, recall, search)
MAX_SEARCH_LIMIT = 100  # ``search``: passages returned
MAX_ANSWER_TOKENS = 8192  # ``ask``: the longest answer asked of the LLM
MAX_SOON_DAYS = 3650  # ``stats``: what "expiring soon" means, in days
MAX_LIST_LIMIT = 1000  # ``list``: sources per page
INSPECT_TEXT_CHARS = 300  # ``inspect``: an item's text shown unless the whole is asked for (``full``)
# ``forget`` of many IDs in one request (``DELETE /v1/sources?file_ids=``, IDs of up to 512 characters as a chosen
# source ID): at most this many, in at most this many characters of query string (a request's head past 16 KiB
# is refused by the server's HTTP parser; one ID alone, 512 characters percent-encoded, is 4.6 KiB at most).
MAX_FORGET_IDS = 100
MAX_FORGET_QUERY_CHARS = 8192


def forget_batches(ids: Sequence[str]) -> Iterator[list[str]]:
    """``ids`` in order, in batches one ``DELETE /v1/sources?file_ids=`` request carries: at most
    ``MAX_FORGET_IDS`` IDs in at most ``MAX_FORGET_QUERY_CHARS`` characters of query string."""
    batch: list[str] = []
    chars = 0
    for one in ids:
        size = len("file_ids=") + len(quote(one, safe="")) + 1
        if batch and (len(batch) == MAX_FORGET_IDS or chars + size > MAX_FORGET_QUERY_CHARS):
            yield batch
            batch, chars = [], 0
        batch.append(one)
        chars += size
    if batch:
        yield batch


def whole_number(value: Any, what: str, low: int, high: int) -> int:
    """``value`` if it is an int from ``low`` to ``high`` (a bool is no number here), else a ValueError
    naming ``what``, the value and the range allowed."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{what} must be a whole number from {low} to {high}, got {value!r}")
    return value


def check_soon_days(days: Any) -> float:
    """``days`` as a float if it is a finite number from 0 to MAX_SOON_DAYS, else a ValueError naming it."""
    if isinstance(days, bool) or not isinstance(days, (int, float)) or not math.isfinite(days) \
            or not 0 <= days <= MAX_SOON_DAYS:
        raise ValueError(f"soon_days must be a finite number of days from 0 to {MAX_SOON_DAYS}, got {days!r}")
    return float(days)


def question_problem(question: str) -> str | None:
    """Why ``question`` is refused, or None: empty or only whitespace (nothing to look for), longer than
    MAX_QUESTION_CHARS (its length is named, not the text, which is long), or holding what no store holds as
    text (a NUL, a lone surrogate: core/storable.py). A question is never stored, but the text a document
    is refused for is refused as a question too, the same way on every surface."""
    if reads_blank(question):
        return f"is empty ({question[:20]!r}): give the text to look for"
    if len(question) > MAX_QUESTION_CHARS:
        return f"must be at most {MAX_QUESTION_CHARS} characters, got {len(question)}"
    return text_problem(question)


def check_document_text(text: str, what: str = "text") -> str:
    """A document's text as every surface stores it: what a store holds (core/storable.py) and not blank,
    else a ValueError naming ``what``. A blank text would store nothing while its source ID came back as
    if it had; an emptied source is forgotten, not posted again empty."""
    check_text(text, what)
    if reads_blank(text):
        raise ValueError(f"{what} is blank ({text[:20]!r}): nothing to store; to remove a source, forget it")
    return text
