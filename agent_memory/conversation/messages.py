"""Chat messages in both wire formats: OpenAI (``tool_calls`` + ``tool`` role) and
Anthropic (``tool_use`` / ``tool_result`` content blocks).

Everything here is pure: it reads message dicts and returns new ones, never mutating
its input, so the session can keep the raw history untouched.
"""

from __future__ import annotations

import json
import re
from typing import Any

ROLES = ("system", "user", "assistant", "tool")
TRUNCATED = re.compile(r"^\[truncated: .* result, \d+ chars\]$")


def validate(message: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(message, dict):
        raise ValueError(f"a message must be a dict, got {type(message).__name__}: {message!r}")
    role = message.get("role")
    if role not in ROLES:
        raise ValueError(f"message role must be one of {ROLES}, got {role!r}")
    if role == "tool" and not message.get("tool_call_id"):
        raise ValueError(f"a tool message needs a tool_call_id: {message!r}")
    return message


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


def readable(messages: list[dict[str, Any]], *, max_chars_per_part: int = 2000) -> str:
    """A span as lines a summarizer can read: ``[role]``, ``[tool_use:name] {args}``, ``[tool_result:name]``."""
    names: dict[str, str] = {}
    lines: list[str] = []

    def clip(text: str) -> str:
        text = text.strip()
        return text if len(text) <= max_chars_per_part else text[:max_chars_per_part] + " ..."

    for message in messages:
        names.update(call_names(message))
        role = message.get("role", "?")
        if role == "tool":
            name = message.get("name") or names.get(str(message.get("tool_call_id")), "tool")
            lines.append(f"[tool_result:{name}] {clip(text_of(message))}")
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
                lines.append(f"[tool_result:{name}] {clip(content_text(block.get('content')))}")
    return "\n".join(lines)


def _marker(tool: str, text: str) -> str:
    return f"[truncated: {tool} result, {len(text)} chars]"


def is_truncated(text: str) -> bool:
    return bool(TRUNCATED.match(text))


def truncate_results(message: dict[str, Any], ids: set[str], names: dict[str, str]) -> dict[str, Any]:
    """A copy with the tool results answering ``ids`` replaced by a marker (idempotent)."""
    if message.get("role") == "tool":
        text = text_of(message)
        if str(message.get("tool_call_id")) not in ids or is_truncated(text):
            return message
        tool = message.get("name") or names.get(str(message.get("tool_call_id")), "tool")
        return {**message, "content": _marker(tool, text)}
    blocks = message.get("content")
    if not isinstance(blocks, list):
        return message
    changed = False
    new_blocks = []
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "tool_result" and str(block.get("tool_use_id")) in ids:
            text = content_text(block.get("content"))
            if not is_truncated(text):
                block = {**block, "content": _marker(names.get(str(block.get("tool_use_id")), "tool"), text)}
                changed = True
        new_blocks.append(block)
    return {**message, "content": new_blocks} if changed else message


def micro_compact(messages: list[dict[str, Any]], keep: int = 3) -> list[dict[str, Any]]:
    """Tool results older than the ``keep`` most recent become ``[truncated: <tool> result, <N> chars]``.

    Pure and idempotent: markers are left alone, and user/assistant/system text is untouched.
    """
    names: dict[str, str] = {}
    for message in messages:
        names.update(call_names(message))
    order = [rid for message in messages for rid in result_ids(message)]
    old = set(order[: max(0, len(order) - keep)])
    if not old:
        return list(messages)
    return [truncate_results(m, old, names) if result_ids(m) else m for m in messages]
