"""Background ingestion jobs behind one protocol, :class:`JobQueue`:

- :class:`JobRegistry` (embedded default): one worker thread in the API process, so big uploads
  queue instead of competing for CPU; jobs live in memory and end with the process.
- :class:`DurableJobQueue` (``AGENT_MEMORY_POSTGRES_URL`` set): the API only inserts the job,
  with its body, into PostgreSQL (``postgres_jobs.py``); ``agent-memory worker`` processes
  (``api/worker.py``) run it. Any replica answers for any job.

``Services.job_queue`` picks one; the API supplies the work (``api/ingestion.py``) and how a failure is
reported (``api/errors.py``).

A job is described as data (:class:`JobSpec`) so that a process on another machine can run it.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Collection, Literal, Protocol, runtime_checkable

from agent_memory.core.errors import JobInterrupted, NotFoundError, contained, internal_message, new_error_id
from agent_memory.core.progress import CHUNKS_STAGE, GRAPH_STAGE
from agent_memory.stores.pending_writes import PendingWrite, written

log = logging.getLogger(__name__)
KEEP_FINISHED = 500  # finished jobs remembered for polling; the oldest are forgotten first
# How long a stop waits for the running job to reach its next unit (a file, a document) and end there,
# before the stores close under it: past this the stop goes on and the job's spooled copy runs again.
# Under the 10 s a container manager gives a stop before it kills (docker stop's default).
STOP_WAIT_S = 8.0
# Each stage counted inside a unit (core/progress.py), and the job's fields that record its counts beside its
# stage and units.
INNER_STAGES = {CHUNKS_STAGE: ("chunks_done", "chunks_total"), GRAPH_STAGE: ("graph_done", "graph_total")}


@dataclass
class JobSpec:
    """What a job does. ``kind`` "text": ``body`` is the UTF-8 text, ``params`` title and
    metadata; "upload": ``body`` (or, in process, ``path``) holds the file, ``params`` its
    filename and metadata; "forget": remove ``source_id``; "gc": the tenant's expiry pass;
    "delete_session": delete the session ``params["session_id"]`` (``params["forget"]``: its archived
    turns too); "check": compare the tenant's stores (``params["every_tenant"]``: every tenant's;
    ``params["repair"]``, ``params["adopt"]``: and mend them, agent_memory/ingest/consistency.py);
    "forget_prefix": every source whose ID starts with ``source_id``; "forget_ids": each of
    ``params["file_ids"]``; "forget_tenant": everything the tenant holds (``params["tenant"]``: an admin's
    removal of that tenant, the job recorded under the admin's jobs); "import": read an export back (``body`` or
    ``path``, its JSON Lines). All but the first two and "import" are queued only when a running job holds
    the write lock (a request must not wait for the whole job), but for "backup": copy the data dir into
    ``params["destination"]``, always a job (it may outlast a request). ``source_id`` is also the key of the
    per-source lock."""

    tenant: str
    kind: Literal["text", "upload", "forget", "gc", "delete_session", "check", "forget_prefix", "forget_ids",
                  "forget_tenant", "backup", "import"]
    source_id: str
    size: int
    params: dict[str, Any] = field(default_factory=dict)
    body: bytes | None = None
    path: Path | None = None
    cleanup: Callable[[], None] | None = None  # in process: removes ``path`` once the job ends
    # Why the job is given up ("the server stopped 3 times while this job ran"), set by the queue that gives
    # it up; empty: run it. A given-up job's run takes out what its earlier runs stored, then fails
    # (core/errors.JobGivenUp).
    given_up: str = ""


@dataclass
class Job:
    id: str
    tenant: str
    bytes: int
    status: str = "queued"
    stage: str = "queued"
    units_done: int = 0
    units_total: int = 0
    chunks_done: int = 0
    chunks_total: int = 0
    graph_done: int = 0
    graph_total: int = 0
    created_at: float = 0.0
    started_at: float | None = None
    finished_at: float | None = None
    result: dict[str, Any] | None = None
    error: dict[str, str] | None = None
    stop: threading.Event | None = field(default=None, repr=False, compare=False)  # set: the process stops

    def progress(self, stage: str, done: int | None = None, total: int | None = None) -> None:
        """Record how far the job is; also where a stopping process ends it (between units, never inside one).
        ``CHUNKS_STAGE`` and ``GRAPH_STAGE`` count inside a unit (``INNER_STAGES``): recorded in their own
        fields, the stage and units left as they are, and never a place to stop (the graph's are reported from
        the extraction's thread)."""
        inner = INNER_STAGES.get(stage)
        if inner is not None:
            done_field, total_field = inner
            if done is not None:
                setattr(self, done_field, done)
            if total is not None:
                setattr(self, total_field, total)
            return
        if self.stop is not None and self.stop.is_set():
            raise JobInterrupted(f"job {self.id} was stopped at {stage} {self.units_done}/{self.units_total}: "
                                 "the server is stopping")
        self.stage = stage
        if total is not None:
            self.units_total = total
        if done is not None:
            self.units_done = done

    def to_dict(self) -> dict[str, Any]:
        return {"job_id": self.id, "status": self.status, "stage": self.stage, "units_done": self.units_done,
                "units_total": self.units_total, "chunks_done": self.chunks_done,
                "chunks_total": self.chunks_total, "graph_done": self.graph_done, "graph_total": self.graph_total,
                "bytes": self.bytes, "created_at": self.created_at,
                "started_at": self.started_at, "finished_at": self.finished_at, "result": self.result,
                "error": self.error}


@runtime_checkable
class JobQueue(Protocol):
    def submit(self, spec: JobSpec) -> Job: ...

    def get(self, job_id: str, tenant: str) -> Job: ...

    def resume(self) -> None:
        """Queue again what the last stop interrupted, once the stores are open."""

    def unfinished(self, tenant: str) -> int:
        """How many of the jobs recorded under ``tenant`` are queued or running."""

    def writing(self, tenant: str, names: Collection[str], prefix: str | None = None) -> list[PendingWrite]:
        """``tenant``'s queued or running jobs that will store a source named by one of ``names`` (its source ID,
        or its file's path on the client) or, with ``prefix``, one whose ID starts with it (``pending_writes``)."""

    def forget_tenant(self, tenant: str) -> int:
        """Remove the records of the finished jobs recorded under ``tenant`` (their results name its sources);
        returns how many. Queued and running ones stay: they end as they would."""

    def close(self) -> None: ...


def internal_error(exc: Exception, job_id: str) -> dict[str, str]:
    """A failed job's error when the caller gives no way to describe it: a bug's text may name a server
    path, so the job reports an error ID, and the log has the error under it with its traceback."""
    error_id = new_error_id()
    log.error("ingestion job %s failed: error %s", job_id, error_id, exc_info=exc)
    return {"code": "internal", "message": internal_message(error_id)}


def not_found(job_id: str) -> NotFoundError:
    # Another tenant's job is reported exactly like a missing one: its existence is not leaked.
    return NotFoundError(f"no job {job_id!r} for this tenant")


class JobRegistry:
    """In-process jobs: ``run(spec, job)`` does the work on one background thread; ``describe_error(exc, job_id)``
    is what a failed job reports."""

    def __init__(self, run: Callable[[JobSpec, Job], dict[str, Any]], workers: int = 1, *,
                 describe_error: Callable[[Exception, str], dict[str, str]] = internal_error,
                 stop_wait_s: float = STOP_WAIT_S) -> None:
        self._run_job = run
        self._describe_error = describe_error
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ingest-job")
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._stop_wait_s = stop_wait_s
        self._running: set[Future] = set()
        self._specs: dict[str, JobSpec] = {}  # each unfinished job's, for ``writing``

    def submit(self, spec: JobSpec) -> Job:
        job = Job(id=uuid.uuid4().hex[:16], tenant=spec.tenant, bytes=spec.size, created_at=time.time(),
                  stop=self._stop)
        with self._lock:
            self._jobs[job.id] = job
            self._specs[job.id] = spec
            self._trim()
            future = self._pool.submit(self._run, job, spec)
            self._running.add(future)
        future.add_done_callback(self._ended)
        return job

    def _ended(self, future: Future) -> None:
        with self._lock:
            self._running.discard(future)

    def _run(self, job: Job, spec: JobSpec) -> None:
        job.status, job.stage, job.started_at = "running", "starting", time.time()
        try:
            job.result = contained(self._run_job, spec, job)  # a native panic fails the job, not the pool
            job.status, job.stage = "done", "done"
        except JobInterrupted as exc:
            job.status, job.error = "failed", {"code": "interrupted", "message": str(exc)}
        except Exception as exc:  # noqa: BLE001 - the job reports its failure; the server goes on
            job.status, job.error = "failed", self._describe_error(exc, job.id)
        finally:
            with self._lock:
                job.finished_at = time.time()
                self._specs.pop(job.id, None)
            if spec.cleanup is not None:
                spec.cleanup()

    def get(self, job_id: str, tenant: str) -> Job:
        with self._lock:
            job = self._jobs.get(job_id)
        if job is None or job.tenant != tenant:
            raise not_found(job_id)
        return job

    def unfinished(self, tenant: str) -> int:
        with self._lock:
            return sum(1 for job in self._jobs.values() if job.tenant == tenant and job.finished_at is None)

    def writing(self, tenant: str, names: Collection[str], prefix: str | None = None) -> list[PendingWrite]:
        with self._lock:
            found = [(job_id, written(spec.kind, spec.source_id, spec.params, names, prefix))
                     for job_id, spec in self._specs.items() if spec.tenant == tenant and job_id in self._jobs]
            return [PendingWrite(job_id, self._jobs[job_id].status, name) for job_id, name in found if name is not None]

    def forget_tenant(self, tenant: str) -> int:
        with self._lock:
            ended = [job_id for job_id, job in self._jobs.items() if job.tenant == tenant and job.finished_at is not None]
            for job_id in ended:
                del self._jobs[job_id]
        return len(ended)

    def _trim(self) -> None:
        finished = [j.id for j in self._jobs.values() if j.finished_at is not None]
        for job_id in finished[: max(0, len(finished) - KEEP_FINISHED)]:
            del self._jobs[job_id]

    def resume(self) -> None:
        """Nothing outlives this process here (``job_spool.SpooledJobs`` keeps jobs on disk around it)."""

    def close(self) -> None:
        """Queued jobs are dropped; the running one ends at its next unit, waited for at most ``stop_wait_s``,
        so that the stores it writes are not closed under it (``SpooledJobs`` runs both again)."""
        self._stop.set()
        self._pool.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            running = list(self._running)
        if running:
            _, late = wait(running, timeout=self._stop_wait_s)
            if late:
                log.warning("stopping while an ingestion job still runs (waited %.0f s)", self._stop_wait_s)


class DurableJobQueue:
    """Jobs in PostgreSQL (``stores/postgres_jobs.py``); workers run them."""

    def __init__(self, store) -> None:
        self.store = store

    def submit(self, spec: JobSpec) -> Job:
        body = spec.body
        if body is None and spec.path is not None:
            body = spec.path.read_bytes()  # a worker on another machine cannot read our staged file
        try:
            row = self.store.enqueue(uuid.uuid4().hex[:16], spec.tenant, spec.kind, spec.source_id, spec.params,
                                     body, spec.size)
        finally:
            if spec.cleanup is not None:
                spec.cleanup()
        return job_from_row(row)

    def get(self, job_id: str, tenant: str) -> Job:
        row = self.store.get(job_id, tenant)
        if row is None:
            raise not_found(job_id)
        return job_from_row(row)

    def unfinished(self, tenant: str) -> int:
        return self.store.unfinished(tenant)

    def writing(self, tenant: str, names: Collection[str], prefix: str | None = None) -> list[PendingWrite]:
        return [PendingWrite(row["id"], row["status"], row["source_key"])
                for row in self.store.writing(tenant, list(names), prefix)]

    def forget_tenant(self, tenant: str) -> int:
        return self.store.delete_finished(tenant)

    def resume(self) -> None:
        """Nothing to do: the jobs are rows, and a lost worker's job goes back to the queue when its lease ends."""

    def close(self) -> None:
        """The pool belongs to the services, which close it."""


def job_from_row(row: dict[str, Any]) -> Job:
    return Job(id=row["id"], tenant=row["tenant"], bytes=row["bytes"], status=row["status"], stage=row["stage"],
               units_done=row["units_done"], units_total=row["units_total"],
               chunks_done=row.get("chunks_done") or 0, chunks_total=row.get("chunks_total") or 0,
               graph_done=row.get("graph_done") or 0, graph_total=row.get("graph_total") or 0,
               created_at=row["created_at"],
               started_at=row["started_at"], finished_at=row["finished_at"], result=row["result"],
               error=row["error"])
