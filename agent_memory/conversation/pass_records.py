"""What one archive pass stores: a session's message rows past its watermark as archived turns.

``working_memory.py`` reads the rows and raises the watermark; this module decides, row by row, which
become a ``TurnRecord`` and how far the mark may rise. User and assistant messages are turns (not
forgettable ones); a tool call and its results are one turn, a late result a turn of its own
(``tool_turns.py``); the mark stops before a call whose results are still due. Each turn carries the
detector's reasons and whether its time was inferred (notes the appends left), and the turn it answers
when that is not the stored turn before it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable

from agent_memory.conversation import messages as msgs
from agent_memory.conversation.messages import text_of
from agent_memory.conversation.tool_turns import (
    CALL_WAIT_MESSAGES,
    answers,
    late_result_text,
    tool_pair,
    tool_pair_text,
)
from agent_memory.core.records import TurnRecord

TURN_ROLES = ("user", "assistant")

Rows = list[dict[str, Any]]


def iso_time(stamp: float) -> str:
    return datetime.fromtimestamp(stamp, timezone.utc).isoformat(timespec="seconds")


def speaker_of(message: dict[str, Any]) -> str:
    """Who said it, as a transcript names its speakers: the message's ``name``, else its role."""
    name = message.get("name")
    return name.strip() if isinstance(name, str) and name.strip() else str(message.get("role", ""))


@dataclass(frozen=True)
class PassNotes:
    """What the appends noted of a session's messages, read by seq: the detector's reasons (None: none noted),
    whether an undated message's time was inferred from a later one, and the rows before a seq (a late
    result's call that lies before the rows a pass read)."""

    reasons: Callable[[int], list[str] | None]
    inferred: Callable[[int], bool]
    rows_before: Callable[[int], Rows]


def pass_records(rows: Rows, mark: int, *, tenant: str, session_id: str, notes: PassNotes,
                 sub_agent: bool = False) -> tuple[list[TurnRecord], int]:
    """The turns among ``rows`` past ``mark``, and the seq the watermark may rise to. A sub-agent's own
    steps stay in its session: none is a turn, the mark rises past them all."""
    if not rows or rows[-1]["seq"] <= mark:
        return [], mark
    if sub_agent:
        return [], rows[-1]["seq"]
    records: list[TurnRecord] = []
    through = mark
    previous: dict[str, Any] | None = None  # the last user/assistant turn: the next one's context
    consumed: set[int] = set()

    def turn(row: dict[str, Any], text: str, tools: list[str] | None = None,
             retention: str | None = None) -> TurnRecord:
        return _turn(tenant, session_id, row, text, previous, notes, tools, retention)

    for n, row in enumerate(rows):
        seq, message = row["seq"], row["message"]
        text = text_of(message)
        is_turn = message.get("role") in TURN_ROLES and bool(text.strip()) and not msgs.result_ids(message)
        if seq in consumed:  # a result archived with (or settled by) its call
            through = max(through, seq)
            continue
        calls = msgs.call_ids(message)
        if seq <= mark:
            if calls:  # archived with its call already: not a late result
                consumed.update(r["seq"] for r in answers(rows, n, set(calls), CALL_WAIT_MESSAGES))
            if is_turn:
                previous = {"speaker": speaker_of(message), "text": text, "seq": seq}
            continue
        if calls:
            pair = tool_pair(rows, n, set(calls))
            if pair is None:
                break  # its results are still coming: the mark waits before the call
            consumed.update(r["seq"] for r in pair if r is not row)
            archived = tool_pair_text(pair)
            if archived is not None:
                records.append(turn(row, archived[0], tools=archived[1], retention=archived[2]))
        elif msgs.result_ids(message):
            if row["retention"] != "forgettable":  # a late result: its call was archived without it
                earlier = rows[:n]
                if not set(msgs.result_ids(message)) <= {i for r in earlier for i in msgs.call_ids(r["message"])}:
                    earlier = notes.rows_before(seq)  # its call lies before the rows this pass read (rare, bounded)
                archived = late_result_text(row, earlier)
                records.append(turn(row, archived[0], tools=archived[1]))
        elif is_turn and row["retention"] != "forgettable":
            records.append(turn(row, text))
        if is_turn:
            previous = {"speaker": speaker_of(message), "text": text, "seq": seq}
        through = seq
    return records, through


def _turn(tenant: str, session_id: str, row: dict[str, Any], text: str, previous: dict[str, Any] | None,
          notes: PassNotes, tools: list[str] | None, retention: str | None) -> TurnRecord:
    """The record of ``row`` archived as ``text``; ``retention``: its class when not the message's own
    (a tool call and its results: ``tool_pair_text``)."""
    seq, message = row["seq"], row["message"]
    reasons = notes.reasons(seq) or (["significant"] if row["significant"] else [])
    # ``promoted`` makes agent_memory/index/importance.py read the reasons and the retention class.
    metadata: dict[str, Any] = {"promoted": True, "archived": True, "significant": bool(row["significant"]),
                                "reasons": list(reasons), "retention": retention or row["retention"],
                                "role": message["role"]}
    if tools:  # a call and its results, or a late result: index/items.is_tool_turn
        metadata["tools"] = tools
    if notes.inferred(seq):  # undated; its time is that of the dated message after it (timeline.py)
        metadata["timestamp_inferred"] = True
    if previous and previous["seq"] != seq - 1:
        # The turn it answers is not the stored turn before it (a tool call, a system message, a
        # forgettable turn between): its context travels with it (agent_memory/index/context.py).
        metadata["previous_turn"] = {"speaker": previous["speaker"], "text": previous["text"][-1500:],
                                     "seq": previous["seq"]}
    return TurnRecord(session_id=session_id, turn_id=f"m{seq}", speaker=speaker_of(message), text=text,
                      tenant=tenant, seq=seq, timestamp=iso_time(row["created_at"]),
                      created_at=row["created_at"], metadata=metadata)
