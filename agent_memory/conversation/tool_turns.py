"""How a session's tool traffic becomes archived turns (``working_memory.py`` archives them).

A tool call and its results are one turn under the call's position: the call's text, each call's tool
and arguments, the results whole, so a later question that names any of them (an error code in a test
run, the file a grep found, the arguments of the call) finds what the agent read long after compaction
dropped it from the view. A result that arrives after its call was archived without it (a late result)
is a turn of its own, named by its call's tool. Forgettable results stay out unless the pair holds a
strict message.
"""

from __future__ import annotations

from typing import Any

from agent_memory.conversation import messages as msgs
from agent_memory.conversation.compaction import RANK, Retention

# A tool call waits this many messages for its results before it is settled without them.
CALL_WAIT_MESSAGES = 20
# How far back a late result's call is looked for, to name its tool (beyond: named "tool").
LATE_RESULT_LOOKBACK = 1000


def tool_pair(rows: list[dict[str, Any]], n: int, calls: set[str]) -> list[dict[str, Any]] | None:
    """The call at ``rows[n]`` and the rows answering it; None while some result is still due (a call
    ``CALL_WAIT_MESSAGES`` back is settled with the results it has). Only results within the wait join
    the pair, however many rows follow: a result further on is a late result whether its messages came
    one by one or in one batch, and a later pass, which reads a call's results that far only
    (``answers``), never archives it a second time."""
    pair = [rows[n]]
    missing = set(calls)
    for row in rows[n + 1:n + 1 + CALL_WAIT_MESSAGES]:
        answered = missing & set(msgs.result_ids(row["message"]))
        if answered:
            pair.append(row)
            missing -= answered
        if not missing:
            return pair
    return pair if len(rows) - n > CALL_WAIT_MESSAGES else None


def answers(rows: list[dict[str, Any]], n: int, calls: set[str], within: int) -> list[dict[str, Any]]:
    """The rows at most ``within`` after ``rows[n]`` that answer one of ``calls``."""
    return [r for r in rows[n + 1:n + 1 + within] if calls & set(msgs.result_ids(r["message"]))]


def tool_pair_text(pair: list[dict[str, Any]]) -> tuple[str, list[str], str] | None:
    """The archived text of a call and its results (``pair``, the call first), the tools it names and the
    turn's retention class; None when nothing of it is kept (a forgettable call whose results are forgettable
    too). The class is the most durable one of the messages kept whole, not the call's: a forgettable call's
    kept result is archived as fuzzy (never as forgettable, which a time-to-live rule may select), a pair
    holding a strict message as strict."""
    call = pair[0]
    strict = any(r["retention"] == "strict" for r in pair)
    parts = [r for r in pair if strict or r["retention"] != "forgettable"]
    if not parts:
        return None
    messages = [r["message"] for r in parts]
    if parts[0] is not call:  # a forgettable call: its results are read by the tools and arguments alone
        messages.insert(0, msgs.calls_only(call["message"]))
    tools = sorted(set(msgs.call_names(call["message"]).values()))
    retention = max((Retention.parse(r["retention"]) for r in parts), key=RANK.__getitem__)
    return msgs.readable(messages, max_chars_per_part=None), tools, retention.value


def late_result_text(row: dict[str, Any], earlier: list[dict[str, Any]]) -> tuple[str, list[str]]:
    """The archived text of a late result and the tool that produced it, its call found in ``earlier``
    (else the result's own name or "tool", as its text names it: a tool turn all the same, which the graph
    reads as one, index/triples/prose.py)."""
    answered = set(msgs.result_ids(row["message"]))
    names: dict[str, str] = {}
    for before in earlier:
        names.update({i: name for i, name in msgs.call_names(before["message"]).items() if i in answered})
    tools = sorted(set(names.values())) or [str(row["message"].get("name") or "tool")]
    return msgs.readable([row["message"]], max_chars_per_part=None, names=names), tools
