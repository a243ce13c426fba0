"""Checking a message at append, before it enters a session's history: the shapes the compactor
reads (both wire formats), its ``timestamp``, that it is plain storable text, and that its tool
results answer calls still awaiting them (``ToolPairing``).

Its own file because it is the gate, not the reading: ``messages.py`` reads messages already
admitted and may assume these shapes; everything here refuses, naming the bad field.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from datetime import datetime, timezone
from typing import Any

from agent_memory.conversation import messages as msgs
from agent_memory.core.names import SESSION_ID_RULE, refusal
from agent_memory.core.storable import check_storable, control_character

ROLES = ("system", "developer", "user", "assistant", "tool")
# The top-level keys each role may carry: what OpenAI and Anthropic accept (``refusal`` is what
# LangChain's ``convert_to_openai_messages`` sends for a refused assistant turn), plus ``timestamp``,
# which ``Session.append`` moves out of the body before storing it.
_COMMON = frozenset({"role", "content", "name", "timestamp"})
KEYS = {"system": _COMMON, "developer": _COMMON, "user": _COMMON,
        "assistant": _COMMON | {"tool_calls", "refusal"}, "tool": _COMMON | {"tool_call_id"}}


def validate(message: dict[str, Any]) -> dict[str, Any]:
    """``message`` if it has the shapes the compactor reads, else ValueError naming the field.

    Checked at append so that a malformed message never enters the history (where every later
    ``view`` and ``compact`` would trip over it, and a provider would refuse the view): only the keys
    ``KEYS`` allows its role; content (a string or a list of blocks) on every role but ``assistant``,
    which needs content or ``tool_calls``; OpenAI ``tool_calls`` (id, function.name,
    function.arguments) and the ``tool`` role's ``tool_call_id``; Anthropic content blocks
    (``text``, ``tool_use`` with id/name/input, ``tool_result`` with tool_use_id/content)."""
    if not isinstance(message, dict):
        raise ValueError(f"a message must be a dict, got {type(message).__name__}: {_short(message)}")
    check_plain(message, "message")
    role = message.get("role")
    if role not in ROLES:
        raise ValueError(f"message role must be one of {ROLES}, got {_short(role)}")
    unknown = sorted(set(message) - KEYS[role], key=str)
    if unknown:  # the view hands bodies to a provider as stored, and providers refuse unknown keys
        raise ValueError(f"message has key(s) {_short(unknown)} that {role} messages cannot carry; "
                         f"known: {sorted(KEYS[role])}")
    if role == "assistant":
        if message.get("content") is None and not message.get("tool_calls"):
            raise ValueError(f"message.content: an assistant message needs content or tool_calls, "
                             f"got content {_short(message.get('content'))} and no tool calls")
    elif message.get("content") is None:
        raise ValueError(f"message.content: a {role} message needs content (a string or a list of blocks), "
                         f"got {_short(message.get('content'))}")
    if role == "tool" and not _nonempty_str(message.get("tool_call_id")):
        raise ValueError(f"message.tool_call_id: a tool message needs a non-empty string, "
                         f"got {_short(message.get('tool_call_id'))}")
    for key in ("name", "refusal"):
        if message.get(key) is not None and not isinstance(message.get(key), str):
            raise ValueError(f"message.{key} must be a string, got {_short(message.get(key))}")
    _check_content(message.get("content"), "message.content")
    message_time(message)  # a bad timestamp is refused here, before anything is stored
    calls = message.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list):
            raise ValueError(f"message.tool_calls must be a list of tool calls, got {_short(calls)}")
        for n, call in enumerate(calls):
            where = f"message.tool_calls[{n}]"
            if not isinstance(call, dict):
                raise ValueError(f"{where} must be an object, got {_short(call)}")
            _require_str(call, "id", where)
            function = call.get("function")
            if not isinstance(function, dict):
                raise ValueError(f"{where}.function must be an object with name and arguments, got {_short(function)}")
            _require_str(function, "name", f"{where}.function")
            if not isinstance(function.get("arguments", ""), (str, dict)):
                raise ValueError(f"{where}.function.arguments must be a JSON string, "
                                 f"got {_short(function.get('arguments'))}")
    return message


# 1970-01-01 .. 9999-12-31: beyond it a "timestamp" is milliseconds or garbage, not a time.
_MAX_UNIX = 253_402_300_799


def message_time(message: dict[str, Any]) -> float | None:
    """The Unix time of ``message['timestamp']`` (ISO 8601, naive read as UTC, or Unix seconds,
    a number or a numeric string); None when absent. ValueError naming the bad value otherwise.
    It is the turn's time everywhere once archived: date headings, time windows, supersession, TTL."""
    value = message.get("timestamp")
    if value is None:
        return None
    if isinstance(value, str) and re.fullmatch(r"\s*\d+(\.\d+)?\s*", value):
        value = float(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if not math.isfinite(value) or not 0 <= value <= _MAX_UNIX:
            raise ValueError(f"message.timestamp must be Unix seconds between 0 and {_MAX_UNIX} or ISO 8601, "
                             f"got {_short(value)}")
        return float(value)
    if isinstance(value, str):
        try:
            when = datetime.fromisoformat(value.strip())
        except ValueError:
            raise ValueError(f"message.timestamp must be ISO 8601 (e.g. 2023-05-08T13:56:00Z) or Unix seconds, "
                             f"got {_short(value)}") from None
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        return when.timestamp()
    raise ValueError(f"message.timestamp must be ISO 8601 or Unix seconds, got {_short(value)}")


def _check_content(content: Any, where: str) -> None:
    if content is None or isinstance(content, str):
        return
    if not isinstance(content, list):
        raise ValueError(f"{where} must be a string or a list of content blocks, got {_short(content)}")
    for n, block in enumerate(content):
        at = f"{where}[{n}]"
        if isinstance(block, str):
            continue
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise ValueError(f"{at} must be an object with a string 'type', got {_short(block)}")
        kind = block["type"]
        if kind == "text" and not isinstance(block.get("text"), str):
            raise ValueError(f"{at}.text must be a string, got {_short(block.get('text'))}")
        if kind == "tool_use":
            _require_str(block, "id", at)
            _require_str(block, "name", at)
            if not isinstance(block.get("input"), dict):
                raise ValueError(f"{at}.input must be an object, got {_short(block.get('input'))}")
        if kind == "tool_result":
            _require_str(block, "tool_use_id", at)
            inner = block.get("content")
            if isinstance(inner, list):
                _check_content(inner, f"{at}.content")
            elif inner is not None and not isinstance(inner, str):
                raise ValueError(f"{at}.content must be a string or a list of blocks, got {_short(inner)}")


MAX_DEPTH = 64  # far deeper than any real tool payload; deeper nesting would exhaust the stack later


def check_plain(value: Any, where: str) -> None:
    """ValueError unless ``value`` is nested at most MAX_DEPTH deep and holds only what every session store
    keeps (core/storable.py): no NUL or lone surrogate in a string or key (a lone surrogate ("\\ud800") can be
    parsed from JSON but not stored as UTF-8; PostgreSQL refuses NUL), no Infinity or NaN (a provider
    refuses the view that would carry it); a deep nest would raise RecursionError in every later
    json.dumps/deepcopy. Iterative: no recursion."""
    check_storable(value, where, MAX_DEPTH)


def _nonempty_str(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _require_str(obj: dict[str, Any], key: str, where: str) -> None:
    if not _nonempty_str(obj.get(key)):
        raise ValueError(f"{where}.{key} must be a non-empty string, got {_short(obj.get(key))}")


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


class ToolPairing:
    """The tool calls a history issued and the results each still awaits: a provider refuses a view with
    an orphan result or a second result for one call."""

    def __init__(self) -> None:
        self.issued: set[str] = set()
        self.awaited: Counter[str] = Counter()

    def copy(self) -> ToolPairing:
        twin = ToolPairing()
        twin.issued, twin.awaited = set(self.issued), Counter(self.awaited)
        return twin

    def check(self, message: dict[str, Any], where: str = "this session") -> None:
        """ValueError unless each tool result in ``message`` answers a call issued and awaiting a result."""
        answers = Counter(msgs.result_ids(message))
        orphans = [rid for rid in answers if rid not in self.issued]
        if orphans:  # docs/api.md: a result must answer a call this session issued
            raise ValueError(f"message answers tool call id(s) {orphans[:5]} that no earlier message of "
                             f"{where} issued (an orphan tool result)")
        repeated = [rid for rid, n in answers.items() if n > self.awaited[rid]]
        if repeated:
            raise ValueError(f"message answers tool call id(s) {repeated[:5]} that already have their result "
                             f"in {where}, or answers one twice (a repeated tool result)")

    def note(self, message: dict[str, Any]) -> None:
        # A call id may be issued again later (some models number their calls per turn): each issue
        # awaits one result. Never below zero: a repeat stored before this check must not make a later
        # issue of that id look answered already.
        for rid in msgs.result_ids(message):
            self.awaited[rid] = max(0, self.awaited[rid] - 1)
        calls = msgs.call_ids(message)
        self.issued.update(calls)
        self.awaited.update(calls)


def check_batch_pairing(pairing: ToolPairing, messages: list[dict[str, Any]]) -> None:
    """ValueError naming (by index) the first of ``messages`` whose tool results ``pairing``, then the
    batch's earlier messages, leave unawaited; ``pairing`` takes the batch's calls and results."""
    for n, message in enumerate(messages):
        try:
            pairing.check(message, where="this session or batch")
        except ValueError as exc:
            raise ValueError(f"messages[{n}]: {exc}") from None
        pairing.note(message)


def check_session_id(session_id: str) -> str:
    """``session_id`` unless it, or the caller's part of it, is blank: the working memory names a session
    ``<tenant>/<session id>`` (working_memory.session_key) and archives its turns as ``<session id>/m<seq>``,
    so a blank ID would give sources like ``/m0`` that no caller can name."""
    if not isinstance(session_id, str):
        raise TypeError(f"session ID must be a string, got {type(session_id).__name__} {_short(session_id)}")
    _, sep, name = session_id.partition("/")
    name = name if sep else session_id
    if not name.strip():
        raise ValueError(refusal(SESSION_ID_RULE, name, "is blank"))
    # A control character (NUL, which PostgreSQL's text refuses; a newline in a source ID) has no place in
    # a key of every session store and the prefix of the archived turns' source IDs (which refuse C1 too:
    # ingest/discovery.check_source_id). Worded by the one rule (core/names.py), the ID cut at 80 characters.
    bad = control_character(name)
    if bad is not None:
        raise ValueError(refusal(SESSION_ID_RULE, name, f"holds a control character ({bad!r})"))
    return session_id
