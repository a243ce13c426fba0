"""A time to live for working-memory messages (``ttl_days`` ``"session"``): which messages of a session
``agent-memory gc`` removes from the session store, and the marker that says so in its view.

A session loses its oldest messages, counted by their ``timestamp`` (when they were said), up to the first
one still inside the time to live. Never removed:
- system and developer messages: the agent's instructions, not what was said (a view shows them first);
- a message past the archive watermark: the archive reads the log, and a message removed before it was read
  would never reach long-term memory (whose own rules, ``ttl_days`` ``"turn"``, decide how long it stays);
- the pending turn: the last user message and what follows it, until an answer (an assistant message
  without tool calls) ends the session;
- a tool call whose result stays, or the other way round (a provider refuses a view with half a pair);
- part of a compaction summary's span: a summary leaves with the last message it covers (it may hold its
  words), and the messages it covers wait for it.

What went is one marker row, a summary row of method ``marker``, ``validation.removed`` true, which
``[Removed m0-m120 ...]`` shows in the view's header; a later removal folds the earlier marker into its own.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from agent_memory.conversation import messages as msgs
from agent_memory.conversation.compaction import MARKER
from agent_memory.conversation.scheduler import describe, span_name

KEPT_ROLES = msgs.INSTRUCTION_ROLES


def is_removal(row: dict[str, Any]) -> bool:
    """Whether a summary row is a removal's marker (not a compaction's)."""
    return row.get("method") == MARKER and bool((row.get("validation") or {}).get("removed"))


def removable_through(rows: Sequence[dict[str, Any]], summaries: Sequence[dict[str, Any]], archived_through: int,
                      before: float) -> int:
    """The highest seq up to which the session's messages (``rows``, by seq, as the store loads them) may
    leave: those said before ``before`` and archived, within the limits above; -1 when none may."""
    said = [row for row in rows if not msgs.is_instruction(row["message"])]
    through = -1
    for row in said:
        if row["created_at"] >= before or row["seq"] > archived_through:
            break
        through = row["seq"]
    through = min(through, _before_pending_turn(said))
    while True:  # each limit may lower the bound below another's: until none does
        lowered = _outside_pairs(said, _outside_spans(summaries, through))
        if lowered == through:
            return through if any(row["seq"] <= through for row in said) else -1
        through = lowered


def _before_pending_turn(said: Sequence[dict[str, Any]]) -> float:
    """The seq before the last user message when no answer follows it (else no bound)."""
    if not said:
        return math.inf
    newest = said[-1]["message"]
    if newest.get("role") == "assistant" and not msgs.call_ids(newest):
        return math.inf
    users = [row["seq"] for row in said if msgs.is_user_turn(row["message"])]
    return users[-1] - 1 if users else math.inf


def _outside_spans(summaries: Sequence[dict[str, Any]], through: int) -> int:
    for row in summaries:
        if not is_removal(row) and row["first_seq"] <= through < row["last_seq"]:
            through = row["first_seq"] - 1
    return through


def _outside_pairs(said: Sequence[dict[str, Any]], through: int) -> int:
    """``through``, or the seq before the first call up to it whose result comes after it."""
    answered_later = {rid for row in said if row["seq"] > through for rid in msgs.result_ids(row["message"])}
    for row in said:
        if row["seq"] > through:
            break
        if answered_later.intersection(msgs.call_ids(row["message"])):
            return row["seq"] - 1
    return through


def removal_marker(removed: Sequence[dict[str, Any]], summaries: Sequence[dict[str, Any]], days: float,
                   count) -> dict[str, Any]:
    """The marker row of a removal of ``removed`` (message rows), folding in the session's earlier removal
    markers; ``count`` counts its text's tokens."""
    earlier = [row for row in summaries if is_removal(row)]
    tools: dict[str, int] = {}
    for row in earlier:
        for name, n in (row["validation"].get("tools") or {}).items():
            tools[name] = tools.get(name, 0) + n
    for row in removed:
        for name in msgs.call_names(row["message"]).values():
            tools[name] = tools.get(name, 0) + 1
    counts = {"messages": len(removed) + sum(row["validation"].get("messages", 0) for row in earlier),
              "tokens": sum(row["tokens"] for row in removed) + sum(row["validation"].get("tokens", 0)
                                                                    for row in earlier),
              "tools": tools, "removed": True}
    first = min([row["seq"] for row in removed] + [row["first_seq"] for row in earlier])
    last = max(row["seq"] for row in removed)
    text = f"[Removed {span_name(first, last)} (time to live: said more than {days:g} days ago): {describe(counts)}]"
    return {"first_seq": first, "last_seq": last, "tier": 0, "text": text, "tokens": count(text),
            "method": MARKER, "validation": counts}
