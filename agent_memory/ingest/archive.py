"""The archive of working memory: a live session's turns stored as transcript turns are.

``agent_memory.conversation.working_memory.WorkingMemory`` reads each session's messages past its archive
watermark and hands them here as ``TurnRecord``s; ``ingest_turns`` is the one code path a
transcript's turns take too, so the two can never drift apart. No per-session summary: a live
session keeps growing, and its summary would be rewritten with every pass (docs/journal/2026-12-03-agent-write-path.md).
"""

from __future__ import annotations

import threading
from contextlib import nullcontext
from typing import Callable, Sequence

from agent_memory.core.errors import StoreUnavailableError
from agent_memory.core.records import TurnRecord
from agent_memory.ingest.pipeline import IngestionPipeline
from agent_memory.ingest.report import IngestReport


def archiver(services, lock: threading.Lock | None = None) -> Callable[[Sequence[TurnRecord]], list[str]]:
    """The ``promote`` callback of WorkingMemory over ``services``; ``lock`` serializes it with other writers.
    A store failure is raised, so the session's watermark stays and the next pass retries."""

    def archive(turns: Sequence[TurnRecord]) -> list[str]:
        report = IngestReport()
        with lock if lock is not None else nullcontext():
            ids = IngestionPipeline(services, summaries=False).ingest_turns(turns, report)
        if report.store_error:
            raise StoreUnavailableError(f"archiving turns stopped: {report.store_error}")
        return ids

    return archive
