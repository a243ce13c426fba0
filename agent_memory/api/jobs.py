"""Background ingestion jobs: one worker thread, so big uploads queue instead of competing for CPU."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable

from agent_memory.errors import AgentMemoryError, NotFoundError

from .errors import ApiError, status_for

log = logging.getLogger(__name__)
KEEP_FINISHED = 500  # finished jobs remembered for polling; the oldest are forgotten first


@dataclass
class Job:
    id: str
    tenant: str
    bytes: int
    status: str = "queued"
    stage: str = "queued"
    units_done: int = 0
    units_total: int = 0
    created_at: float = 0.0
    started_at: float | None = None
    finished_at: float | None = None
    result: dict[str, Any] | None = None
    error: dict[str, str] | None = None

    def progress(self, stage: str, done: int | None = None, total: int | None = None) -> None:
        self.stage = stage
        if total is not None:
            self.units_total = total
        if done is not None:
            self.units_done = done

    def to_dict(self) -> dict[str, Any]:
        return {"job_id": self.id, "status": self.status, "stage": self.stage, "units_done": self.units_done,
                "units_total": self.units_total, "bytes": self.bytes, "created_at": self.created_at,
                "started_at": self.started_at, "finished_at": self.finished_at, "result": self.result,
                "error": self.error}


class JobRegistry:
    def __init__(self, workers: int = 1) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ingest-job")
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._lock = threading.Lock()

    def submit(self, tenant: str, size: int, work: Callable[[Job], dict[str, Any]],
               cleanup: Callable[[], None] | None = None) -> Job:
        job = Job(id=uuid.uuid4().hex[:16], tenant=tenant, bytes=size, created_at=time.time())
        with self._lock:
            self._jobs[job.id] = job
            self._trim()
        self._pool.submit(self._run, job, work, cleanup)
        return job

    def _run(self, job: Job, work: Callable[[Job], dict[str, Any]], cleanup) -> None:
        job.status, job.stage, job.started_at = "running", "starting", time.time()
        try:
            job.result = work(job)
            job.status, job.stage = "done", "done"
        except Exception as exc:  # noqa: BLE001 - the job reports its failure; the server goes on
            if isinstance(exc, ApiError):
                code = exc.code
            elif isinstance(exc, AgentMemoryError):
                code = status_for(exc)[1]
            else:
                code = "internal"
                log.exception("ingestion job %s failed", job.id)
            job.status, job.error = "failed", {"code": code, "message": str(exc)}
        finally:
            job.finished_at = time.time()
            if cleanup is not None:
                cleanup()

    def get(self, job_id: str, tenant: str) -> Job:
        with self._lock:
            job = self._jobs.get(job_id)
        # Another tenant's job is reported exactly like a missing one: its existence is not leaked.
        if job is None or job.tenant != tenant:
            raise NotFoundError(f"no job {job_id!r} for this tenant")
        return job

    def _trim(self) -> None:
        finished = [j.id for j in self._jobs.values() if j.finished_at is not None]
        for job_id in finished[: max(0, len(finished) - KEEP_FINISHED)]:
            del self._jobs[job_id]

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
