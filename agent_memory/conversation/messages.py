"""Chat messages in both wire formats: OpenAI (``tool_calls`` + ``tool`` role) and
Anthropic (``tool_use`` / ``tool_result`` content blocks).

Everything here is pure: it reads message dicts and returns new ones, never mutating
its input, so the session can keep the raw history untouched. It reads messages already
admitted: the check at append is ``message_validation.py``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agent_memory.conversation.significance import identifier_list

# ``developer`` is OpenAI's newer name for system-like instructions: treated as a system message.
INSTRUCTION_ROLES = ("system", "developer")
TRUNCATED = re.compile(r"^\[truncated: .* result, \d+ chars(?:; kept: .*)?\]$")
MARKER_IDENTIFIERS = 6  # a truncated result keeps this many of its identifiers (error codes, paths ...)


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def call_ids(message: dict[str, Any]) -> list[str]:
    """Ids of the tool calls this message issues (OpenAI ``tool_calls`` or ``tool_use`` blocks)."""
    ids = [str(c.get("id")) for c in message.get("tool_calls") or [] if isinstance(c, dict)]
    if message.get("role") == "assistant":
        ids += [str(b.get("id")) for b in _blocks(message) if b.get("type") == "tool_use"]
    return ids


def calls_only(message: dict[str, Any]) -> dict[str, Any]:
    """``message`` without its words: only the tool calls it issues."""
    content = message.get("content")
    blocks = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_use"] \
        if isinstance(content, list) else None
    return {"role": message.get("role", "assistant"), "content": blocks, "tool_calls": message.get("tool_calls")}


def call_names(message: dict[str, Any]) -> dict[str, str]:
    names = {}
    for call in message.get("tool_calls") or []:
        if isinstance(call, dict):
            names[str(call.get("id"))] = str((call.get("function") or {}).get("name", "tool"))
    for block in _blocks(message):
        if block.get("type") == "tool_use":
            names[str(block.get("id"))] = str(block.get("name", "tool"))
    return names


def result_ids(message: dict[str, Any]) -> list[str]:
    """Ids of the tool calls this message answers (``tool`` role or ``tool_result`` blocks)."""
    if message.get("role") == "tool":
        return [str(message.get("tool_call_id"))]
    return [str(b.get("tool_use_id")) for b in _blocks(message) if b.get("type") == "tool_result"]


def content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") in (None, "text"):
                parts.append(str(block.get("text", "")))
        return "\n".join(p for p in parts if p)
    return str(content)


def text_of(message: dict[str, Any]) -> str:
    """The plain text a person wrote or read (no tool payloads)."""
    return content_text(message.get("content"))


def is_instruction(message: dict[str, Any]) -> bool:
    """System or developer instructions: never compacted, shown first in a view."""
    return message.get("role") in INSTRUCTION_ROLES


def is_user_turn(message: dict[str, Any]) -> bool:
    """A user message with words in it (an Anthropic message of only tool_results is not a turn)."""
    return message.get("role") == "user" and bool(text_of(message).strip())


def serialize(message: dict[str, Any]) -> str:
    """What a provider sees, flattened for token counting: role, content and tool calls."""
    parts = [message.get("role", "")]
    content = message.get("content")
    if isinstance(content, str):
        parts.append(content)
    elif content is not None:
        parts.append(json.dumps(content, ensure_ascii=False, separators=(",", ":")))
    if message.get("tool_calls"):
        parts.append(json.dumps(message["tool_calls"], ensure_ascii=False, separators=(",", ":")))
    if message.get("tool_call_id"):
        parts.append(str(message["tool_call_id"]))
    if message.get("name"):
        parts.append(str(message["name"]))
    return "\n".join(parts)


# The marker ``readable`` starts each part's line with: the words of a message (its role), a call's
# arguments or a result. A payload's own lines carry none (a line of one that looks like a marker, "[INFO]",
# names no role).
PART_MARKER = re.compile(r"\[(?:(?P<role>system|developer|user|assistant)|(?P<part>tool_use|tool_result):[^\]\n]*)\] ?")


def readable_parts(text: str) -> list[tuple[str, str]]:
    """The lines of a :func:`readable` text, each with the part it belongs to: ``words`` (a message's own
    text), ``tool_use`` (a call's arguments) or ``tool_result``, the marker taken off. Lines before the
    first marker (a piece of a longer text) are read as a result's."""
    parts, part = [], "tool_result"
    for line in text.splitlines():
        marker = PART_MARKER.match(line)
        if marker:
            part = marker.group("part") or "words"
            line = line[marker.end():]
        parts.append((part, line))
    return parts


def readable(messages: list[dict[str, Any]], *, max_chars_per_part: int | None = 2000, salient: bool = False,
             names: dict[str, str] | None = None) -> str:
    """A span as lines a summarizer can read: ``[role]``, ``[tool_use:name] {args}``, ``[tool_result:name]``;
    ``salient``: tool results reduced to :func:`salient_payload` (what validation holds a summary to);
    ``max_chars_per_part`` None: nothing cut (the archive); ``names``: call IDs' tool names issued before
    ``messages`` (a late result's call)."""
    names = dict(names or {})
    lines: list[str] = []

    def clip(text: str, payload: bool = False) -> str:
        text = (salient_payload(text) if payload and salient else text).strip()
        if max_chars_per_part is None or len(text) <= max_chars_per_part:
            return text
        return text[:max_chars_per_part] + " ..."

    for message in messages:
        names.update(call_names(message))
        role = message.get("role", "?")
        if role == "tool":
            name = message.get("name") or names.get(str(message.get("tool_call_id")), "tool")
            lines.append(f"[tool_result:{name}] {clip(text_of(message), payload=True)}")
            continue
        text = text_of(message)
        if text.strip():
            lines.append(f"[{role}] {clip(text)}")
        for call in message.get("tool_calls") or []:
            fn = call.get("function") or {}
            lines.append(f"[tool_use:{fn.get('name', 'tool')}] {clip(str(fn.get('arguments', '')))}")
        for block in _blocks(message):
            if block.get("type") == "tool_use":
                args = json.dumps(block.get("input", {}), ensure_ascii=False)
                lines.append(f"[tool_use:{block.get('name', 'tool')}] {clip(args)}")
            elif block.get("type") == "tool_result":
                name = names.get(str(block.get("tool_use_id")), "tool")
                lines.append(f"[tool_result:{name}] {clip(content_text(block.get('content')), payload=True)}")
    return "\n".join(lines)


# Lines of a tool payload that state an outcome (what a later step needs): errors, test results, timings.
OUTCOME = re.compile(
    r"\b(?:errors?|fatal|exception|traceback|fail(?:ed|ure|s)?|passed|warning|mismatch|denied|declined|refused|"
    r"time(?:d)? ?out|latency|finished|succeeded|not found|invalid)\b|错误|失败|异常|超时|完成|延迟|拒绝",
    re.IGNORECASE)
MARKER_LINES = 2  # ... and this many outcome lines, each at most 200 characters


def outcome_lines(text: str, limit: int = MARKER_LINES) -> list[str]:
    """A tool payload's lines that state an outcome (errors, test results, timings), at most ``limit``."""
    lines: list[str] = []
    for line in text.splitlines():
        line = " ".join(line.split())
        if line and OUTCOME.search(line) and line not in lines:
            lines.append(line if len(line) <= 200 else line[:197] + "...")
            if len(lines) >= limit:
                break
    return lines


def salient_payload(text: str) -> str:
    """What of a tool payload a summary must keep: its outcome lines and the lines holding identifiers.
    The rest (code, listings, line numbers) is noise a digest cannot and need not carry."""
    keep = set(outcome_lines(text, 1_000))
    out = [" ".join(line.split()) for line in text.splitlines()
           if " ".join(line.split()) in keep or identifier_list(line)]
    return "\n".join(out)


def _marker(tool: str, text: str) -> str:
    """``[truncated: run_tests result, 812 chars; kept: FAILED test_pay.py: E4471 | ids: src/net/retry.py]``:
    the payload goes; its outcome lines and identifiers (an error code, a path) stay visible."""
    lines = outcome_lines(text)
    shown = " | ".join(lines)
    ids = [t for t in identifier_list(text) if t not in shown][:MARKER_IDENTIFIERS]
    parts = ([shown] if lines else []) + ([f"ids: {', '.join(ids)}"] if ids else [])
    kept = " | ".join(parts).replace("]", ")")  # the marker's own bracket ends it
    return f"[truncated: {tool} result, {len(text)} chars" + (f"; kept: {kept}]" if kept else "]")


def is_truncated(text: str) -> bool:
    return bool(TRUNCATED.match(text))


def truncate_results(message: dict[str, Any], ids: set[str], names: dict[str, str]) -> dict[str, Any]:
    """A copy with the tool results answering ``ids`` replaced by a marker (idempotent); a result no
    longer than its marker stays (``port: 8000`` says more than ``[truncated: ..., 10 chars]``)."""
    if message.get("role") == "tool":
        text = text_of(message)
        if str(message.get("tool_call_id")) not in ids or is_truncated(text):
            return message
        tool = message.get("name") or names.get(str(message.get("tool_call_id")), "tool")
        marker = _marker(tool, text)
        return {**message, "content": marker} if len(marker) < len(text) else message
    blocks = message.get("content")
    if not isinstance(blocks, list):
        return message
    changed = False
    new_blocks = []
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "tool_result" and str(block.get("tool_use_id")) in ids:
            text = content_text(block.get("content"))
            marker = _marker(names.get(str(block.get("tool_use_id")), "tool"), text)
            if not is_truncated(text) and len(marker) < len(text):
                block = {**block, "content": marker}
                changed = True
        new_blocks.append(block)
    return {**message, "content": new_blocks} if changed else message


def micro_compact(messages: list[dict[str, Any]], keep: int = 3, spare: Any = ()) -> list[dict[str, Any]]:
    """Tool results older than the ``keep`` most recent become ``[truncated: <tool> result, <N> chars]``,
    except in the messages at the indices in ``spare`` (a session spares its strict messages).

    Pure and idempotent: markers are left alone, and user/assistant/system text is untouched.
    """
    names: dict[str, str] = {}
    for message in messages:
        names.update(call_names(message))
    order = [rid for message in messages for rid in result_ids(message)]
    old = set(order[: max(0, len(order) - keep)])
    if not old:
        return list(messages)
    spare = set(spare)
    return [truncate_results(m, old, names) if result_ids(m) and i not in spare else m
            for i, m in enumerate(messages)]


def without_open_calls(message: dict[str, Any], open_ids: set[str]) -> dict[str, Any]:
    """A copy where the tool calls still waiting for a result become a visible text note.

    Providers reject a call without its result, and hiding it would make the agent forget what it
    just asked for; a note keeps the view valid and says what is pending."""
    if not open_ids:
        return message
    notes: list[str] = []
    calls = []
    for call in message.get("tool_calls") or []:
        if str(call.get("id")) in open_ids:
            fn = call.get("function") or {}
            args = fn.get("arguments", "")
            args = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
            notes.append(f"[pending tool call: {fn.get('name', 'tool')}({_clip_args(args)}), id {call.get('id')},"
                         " no result yet]")
        else:
            calls.append(call)
    content = message.get("content")
    if isinstance(content, list):
        blocks = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use" and str(block.get("id")) in open_ids:
                args = json.dumps(block.get("input", {}), ensure_ascii=False)
                blocks.append({"type": "text", "text": f"[pending tool call: {block.get('name', 'tool')}"
                               f"({_clip_args(args)}), id {block.get('id')}, no result yet]"})
            else:
                blocks.append(block)
        out = {**message, "content": blocks}
        if notes:
            out["content"] = blocks + [{"type": "text", "text": n} for n in notes]
    else:
        text = content if isinstance(content, str) else ""
        out = {**message, "content": "\n".join(p for p in [text, *notes] if p)}
    if "tool_calls" in message:
        if calls:
            out["tool_calls"] = calls
        else:
            out.pop("tool_calls")
    return out


def _clip_args(args: str, limit: int = 200) -> str:
    args = " ".join(args.split())
    return args if len(args) <= limit else args[:limit] + "..."
