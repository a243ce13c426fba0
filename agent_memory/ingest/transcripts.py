"""Recognize conversation transcripts in parsed JSON and turn them into TurnRecords.

Formats: LoCoMo (``conversation`` with ``session_N`` lists), LongMemEval
(``haystack_sessions``), and a generic list of turns
``{session_id?, turn_id?, speaker|role, text|content, timestamp?}`` (or an object with
``turns``/``messages``). Turn IDs are stable: the dataset's own ID, else the position.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agent_memory.core.errors import IngestError
from agent_memory.core.records import TurnRecord
from agent_memory.ingest.shapes import GenericTurn, LocomoRecord, LocomoTurn, LongMemEvalRecord, check


@dataclass
class Transcript:
    """Turns of one or more conversations read from a transcript file."""

    source_id: str
    turns: list[TurnRecord]

_SESSION_KEY = re.compile(r"^session_(\d+)$")


def parse_transcript(data: Any, *, tenant: str, source_id: str):
    """Return a ``Transcript`` if ``data`` is a conversation, else ``None``.

    A file that looks like a transcript but has the wrong shape raises ``IngestError`` naming
    the field (the job records it as a skip); the readers below then only see checked values."""
    items = data if isinstance(data, list) else [data]
    if not items or not all(isinstance(x, dict) for x in items):
        return None
    first = items[0]
    if isinstance(first.get("conversation"), dict):
        for index, rec in enumerate(items):
            _check_locomo(rec, f"[{index}]" if isinstance(data, list) else "")
        return Transcript(source_id, [t for rec in items for t in locomo_turns(rec, tenant)])
    if "haystack_sessions" in first:
        for index, rec in enumerate(items):
            check(LongMemEvalRecord, rec, f"[{index}]" if isinstance(data, list) else "")
        seen: set[str] = set()
        turns = []
        for rec in items:
            for turn in longmemeval_turns(rec, tenant):
                if turn.source_id not in seen:
                    seen.add(turn.source_id)
                    turns.append(turn)
        return Transcript(source_id, turns)
    if isinstance(data, dict) and isinstance(data.get("turns") or data.get("messages"), list):
        key = "turns" if data.get("turns") else "messages"
        for index, turn in enumerate(data[key]):
            check(GenericTurn, turn, f"{key}.{index}")
        session = str(data.get("session_id") or source_id)
        return Transcript(source_id, generic_turns(data.get("turns") or data.get("messages"), tenant, session))
    if all(("speaker" in x or "role" in x) and ("text" in x or "content" in x) for x in items):
        for index, turn in enumerate(items):
            check(GenericTurn, turn, f"[{index}]")
        return Transcript(source_id, generic_turns(items, tenant, source_id))
    return None


def _check_locomo(record: dict, where: str) -> None:
    check(LocomoRecord, record, where)
    conv = record["conversation"]
    for key, session in conv.items():
        if not _SESSION_KEY.match(key):
            continue
        if not isinstance(session, list):
            raise IngestError(f"wrong shape: {where}conversation.{key} must be a list of turns, "
                              f"got {type(session).__name__}")
        for index, turn in enumerate(session):
            check(LocomoTurn, turn, f"{where}conversation.{key}.{index}")


def locomo_turns(record: dict, tenant: str) -> list[TurnRecord]:
    conv = record["conversation"]
    sample = str(record.get("sample_id", "conv"))
    sessions = sorted(
        (int(m.group(1)), key) for key in conv if (m := _SESSION_KEY.match(key)) and isinstance(conv[key], list)
    )
    turns = []
    for number, key in sessions:
        date = str(conv.get(f"{key}_date_time", ""))
        for index, turn in enumerate(conv[key]):
            text = str(turn.get("text", ""))
            if turn.get("blip_caption"):
                text = f"{text} [shares a photo: {turn['blip_caption']}]"
            dia_id = turn.get("dia_id")
            turns.append(
                TurnRecord(
                    session_id=f"{sample}:S{number}",
                    turn_id=str(dia_id or f"t{index}"),
                    # LoCoMo dialog IDs ("D3:12") carry the session already: unique per conversation.
                    source=f"{sample}/{dia_id}" if dia_id else "",
                    speaker=str(turn.get("speaker", "")),
                    text=text,
                    timestamp=date,
                    tenant=tenant,
                )
            )
    return turns


def longmemeval_turns(record: dict, tenant: str) -> list[TurnRecord]:
    turns = []
    ids = record.get("haystack_session_ids") or []
    dates = record.get("haystack_dates") or []
    for s_index, session in enumerate(record.get("haystack_sessions") or []):
        session_id = str(ids[s_index]) if s_index < len(ids) else f"session_{s_index}"
        date = str(dates[s_index]) if s_index < len(dates) else ""
        for t_index, turn in enumerate(session):
            turns.append(
                TurnRecord(
                    session_id=session_id,
                    turn_id=f"t{t_index}",
                    speaker=str(turn.get("role", "")),
                    text=str(turn.get("content", "")),
                    timestamp=date,
                    tenant=tenant,
                )
            )
    return turns


def generic_turns(items: list, tenant: str, default_session: str) -> list[TurnRecord]:
    turns = []
    for index, turn in enumerate(items):
        if not isinstance(turn, dict):
            continue
        text = turn.get("text", turn.get("content", ""))
        if not isinstance(text, str):
            text = str(text)
        turns.append(
            TurnRecord(
                session_id=str(turn.get("session_id") or default_session),
                turn_id=str(turn.get("turn_id") or turn.get("id") or f"t{index}"),
                speaker=str(turn.get("speaker") or turn.get("role") or ""),
                text=text,
                timestamp=str(turn.get("timestamp") or turn.get("date") or ""),
                tenant=tenant,
            )
        )
    return turns
