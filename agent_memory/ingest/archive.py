"""The archive of working memory: a live session's turns stored as transcript turns are.

``agent_memory.conversation.working_memory.WorkingMemory`` reads each session's messages past its archive
watermark and hands them here as ``TurnRecord``s; ``ingest_turns`` is the one code path a
transcript's turns take too, so the two can never drift apart. No per-session summary: a live
session keeps growing, and its summary would be rewritten with every pass (docs/journal/2026-12-03-agent-write-path.md).
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from contextlib import nullcontext
from typing import Callable, Sequence

from agent_memory.core.errors import StoreUnavailableError
from agent_memory.core.records import TurnRecord
from agent_memory.ingest.ownership import SESSION_OWNER, describe_owner, holders
from agent_memory.ingest.pipeline import IngestionPipeline
from agent_memory.ingest.report import IngestReport

log = logging.getLogger(__name__)


def archiver(services, lock: threading.Lock | None = None) -> Callable[[Sequence[TurnRecord]], list[str]]:
    """The ``promote`` callback of WorkingMemory over ``services``; ``lock`` serializes it with other writers.
    A store failure is raised, so the session's watermark stays and the next pass retries.

    Each session claims its archived turns (``SESSION_OWNER`` + its ID), so no document or file record
    replaces one (ingest/ownership.py). A turn whose ID ``<session id>/m<seq>`` another owner already holds
    (a document posted under that ID first) is not archived: the document stays, the turn stays in the
    session's own history, and a warning names both; overwriting either would lose it silently. Claimed first, so
    that the pipeline's write holds each turn's lock (``ownership.writing``) where a repair looks for it."""

    def archive(turns: Sequence[TurnRecord]) -> list[str]:
        report = IngestReport()
        with lock if lock is not None else nullcontext():
            turns = _claimed(services.catalog, turns)
            ids = IngestionPipeline(services, summaries=False).ingest_turns(turns, report) if turns else []
        if report.store_error:
            raise StoreUnavailableError(f"archiving turns stopped: {report.store_error}")
        return ids

    return archive


def _claimed(catalog, turns: Sequence[TurnRecord]) -> list[TurnRecord]:
    """The turns their sessions may write, claimed for them; the others left out with a warning."""
    by_session: dict[tuple[str, str], list[TurnRecord]] = defaultdict(list)
    for turn in turns:
        by_session[(turn.tenant, turn.session_id)].append(turn)
    kept: list[TurnRecord] = []
    for (tenant, session_id), group in by_session.items():
        owner = SESSION_OWNER + session_id
        held = holders(catalog, tenant, [t.source_id for t in group], owner)
        for sid, who in held.items():
            log.warning("session %r: turn %r not archived to long-term memory: that source ID belongs to %s; "
                        "the message stays in the session's own history only (it is not archived later)",
                        session_id, sid, describe_owner(who))
        free = [t for t in group if t.source_id not in held]
        catalog.claim(tenant, owner, [t.source_id for t in free])
        kept += free
    return kept
