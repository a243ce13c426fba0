"""``agent-memory worker``: runs the durable ingestion jobs that API replicas put in PostgreSQL.

Any number of workers, on any machine, share one queue: each takes the oldest open job with
``FOR UPDATE SKIP LOCKED``, keeps a heartbeat (with the job's progress) every third of the
lease, holds the source's advisory lock while it writes, and records the outcome. A worker
that dies stops beating; once its lease expires another worker takes the job again, and the
ingestion's own idempotence (deterministic item IDs, the catalog's content hashes) makes the
second run finish what the first started without duplicating anything. SIGTERM/SIGINT let
the current job finish, then the worker exits.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
import time
import uuid
from typing import Any

from agent_memory.api.errors import error_of
from agent_memory.api.ingestion import run_job
from agent_memory.core.errors import ConfigError, JobGivenUp, StoreError, StoreUnavailableError, contained
from agent_memory.ingest.upgrade import open_services
from agent_memory.memory import Memory
from agent_memory.stores.jobs import DurableJobQueue, Job, JobSpec, job_from_row

log = logging.getLogger(__name__)
KEEP_FINISHED_S = 7 * 86400  # finished jobs stay this long for polling, then any worker forgets them
PRUNE_EVERY_S = 3600
OUTAGE_PAUSE_S = 10.0  # after a job met a store that was away: the worker waits this long before taking one again


class Worker:
    """Takes and runs jobs; ``memory``, ``locks`` and ``jobs`` are what :func:`run_job` needs of a state."""

    def __init__(self, services, *, worker_id: str | None = None, lease_s: float = 60.0, poll_s: float = 1.0,
                 max_attempts: int = 3, outage_pause_s: float = OUTAGE_PAUSE_S) -> None:
        if services.job_store is None:
            raise ConfigError("agent-memory worker takes jobs from PostgreSQL: set AGENT_MEMORY_POSTGRES_URL "
                              "(without it the API runs its jobs in process)")
        if lease_s <= 0 or poll_s <= 0:
            raise ConfigError(f"lease_s={lease_s} and poll_s={poll_s} must be positive")
        self.services = services
        services.staging.sweep()  # a killed worker's copies of job bodies: each job's bytes are in its row
        self.store = services.job_store
        # A forget job was asked about the queue when the API accepted it: an upload queued after it is no refusal.
        self.memory = Memory(services=services, tenant=services.settings.tenant, promote=False,
                             check_queued_writes=False)
        self.locks = services.source_locks
        self.jobs = DurableJobQueue(self.store)  # a tenant's removal forgets its finished jobs too
        self.id = worker_id or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.lease_s, self.poll_s, self.max_attempts = lease_s, poll_s, max_attempts
        self.outage_pause_s = outage_pause_s
        self.stopping = threading.Event()
        self.jobs_done = 0

    def run_one(self) -> bool:
        """Take one job and run it to its end; False when the queue had nothing open. A job that lost its worker
        ``max_attempts`` times is taken first, given up: what its runs stored is taken out, and it fails."""
        row = self.store.give_up(self.id, self.lease_s, self.max_attempts)
        given_up = f"the job lost its worker {row['attempts']} times (killed or out of memory?)" if row else ""
        row = row or self.store.claim(self.id, self.lease_s, self.max_attempts)
        if row is None:
            return False
        job = job_from_row(row)
        spec = JobSpec(tenant=row["tenant"], kind=row["kind"], source_id=row["source_key"], size=row["bytes"],
                       params=row["params"] or {}, body=row["body"], given_up=given_up)
        log.info("worker %s took job %s (%s %r, attempt %d)", self.id, job.id, spec.kind, spec.source_id,
                 row["attempts"])
        beating = threading.Event()
        beat = threading.Thread(target=self._heartbeat, args=(job, beating), name=f"heartbeat-{job.id}", daemon=True)
        beat.start()
        result: dict[str, Any] | None = None
        error: dict[str, str] | None = None
        away: StoreUnavailableError | None = None
        try:
            result = contained(run_job, self, spec, job.progress)  # a native panic fails this job only
        except StoreUnavailableError as exc:
            away = exc
        except JobGivenUp as exc:
            error = {"code": "worker_lost", "message": str(exc)}
        except Exception as exc:  # noqa: BLE001 - the job reports its failure; the worker goes on
            error = error_of(exc, job.id)
        finally:
            beating.set()
            beat.join()
        if away is not None:
            # A store that is away (Neo4j restarting, Qdrant unreachable) is no fault of the job: it goes back
            # in the queue and runs again once the store answers; ingestion is idempotent, so what it wrote
            # before stays and is not written twice. The worker pauses before it takes a job again. A given-up
            # job stays taken, unbeaten: once its lease has passed, a worker takes it up again (``give_up``).
            log.warning("job %s waits for a store: %s", job.id, away)
            if not spec.given_up and not self.store.requeue(job.id, self.id, str(away)):
                log.warning("job %s was taken by another worker while %s ran it", job.id, self.id)
            self.stopping.wait(self.outage_pause_s)
            return True
        done = job.units_total if error is None else job.units_done
        if not self.store.finish(job.id, self.id, result, error, done, job.units_total,
                                 chunks=(job.chunks_done, job.chunks_total),
                                 graph=(job.graph_done, job.graph_total)):
            log.warning("job %s was taken by another worker while %s ran it; its outcome is theirs", job.id, self.id)
        self.jobs_done += 1
        return True

    def _heartbeat(self, job: Job, stop: threading.Event) -> None:
        while not stop.wait(self.lease_s / 3):
            try:
                if not self.store.heartbeat(job.id, self.id, job.stage, job.units_done, job.units_total,
                                            chunks=(job.chunks_done, job.chunks_total),
                                            graph=(job.graph_done, job.graph_total)):
                    log.warning("job %s is no longer %s's (lease expired)", job.id, self.id)
            except StoreError as exc:  # the database is away: the next beat tries again
                log.warning("heartbeat for job %s failed: %s", job.id, exc)

    def run(self, *, once: bool = False) -> int:
        """Work until stopped (or, with ``once``, until the queue is empty); returns jobs run."""
        pruned_at = 0.0
        while not self.stopping.is_set():
            try:
                if time.monotonic() - pruned_at > PRUNE_EVERY_S:
                    pruned_at = time.monotonic()
                    self.store.prune(KEEP_FINISHED_S)
                took = self.run_one()
            except StoreError as exc:
                log.warning("worker %s cannot reach the queue: %s", self.id, exc)
                took = False
            if not took:
                if once:
                    break
                self.stopping.wait(self.poll_s)
        return self.jobs_done

    def stop(self, *_args) -> None:
        self.stopping.set()


def work(settings, *, once: bool = False, worker_id: str | None = None, lease_s: float = 60.0,
         poll_s: float = 1.0) -> int:
    """The CLI's entry: build the services, run a worker until SIGTERM/SIGINT (or the queue empties)."""
    if settings.postgres_url and not settings.jobs_go_to_workers:
        # Refused before any store opens. Its writes would go to its own embedded stores, which no server reads:
        # jobs "done", memory unchanged; and the API runs its jobs itself there, so none would reach the queue.
        # (Without PostgreSQL, Worker says that the queue lives there.)
        raise ConfigError("agent-memory worker writes the shared stores: set AGENT_MEMORY_QDRANT_URL and "
                          "AGENT_MEMORY_NEO4J_URI as the API replicas do (with an embedded vector store or graph, "
                          "`agent-memory serve` runs its own jobs and no worker is needed; "
                          f"AGENT_MEMORY_JOB_RUNNER is {settings.job_runner!r})")
    with open_services(settings) as services:
        worker = Worker(services, worker_id=worker_id, lease_s=lease_s, poll_s=poll_s)
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, worker.stop)
        log.info("worker %s waiting for jobs", worker.id)
        print(f"worker {worker.id} ready", flush=True)
        worker.run(once=once)
    return 0
