"""In-process ingestion jobs that outlive the process: what a stop interrupted runs again at the next start.

The embedded job queue (``stores/jobs.JobRegistry``) lives in memory: a SIGTERM (or a crash) while a big
upload was queued or running lost it silently: the client had its 202, the upload's temporary file
was left in /tmp, and after the restart its job ID answered 404 with nothing stored. Here each job's
description and body are written under ``<data dir>/pending-jobs/<entry>/`` before it is queued and
removed once it ends; at the next start every entry left there is queued again (the ingestion is
idempotent: a job that had finished runs as a no-op) and its old job ID answers for the new job. A job
interrupted ``MAX_ATTEMPTS`` times (one that kills the process, say) is not run again: it is queued given up
(``JobSpec.given_up``), its run takes out what the earlier runs stored, and its ID answers ``failed`` with the
code ``interrupted``, as PostgreSQL's queue gives up after three lost workers.
"""

from __future__ import annotations

import json
import logging
import shutil
import threading
import time
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Collection

from agent_memory.stores.jobs import Job, JobQueue, JobSpec, not_found
from agent_memory.stores.pending_writes import PendingWrite, written

log = logging.getLogger(__name__)
META = "job.json"
MAX_ATTEMPTS = 3


class SpooledJobs:
    """A :class:`JobQueue` over an in-process one, whose jobs are kept on disk until they end."""

    def __init__(self, queue: JobQueue, folder: Path) -> None:
        self.queue, self.folder = queue, folder
        self._aliases: dict[str, str] = {}  # an interrupted job's ID -> the ID of its run after the restart
        self._closing = False
        self._lock = threading.Lock()
        # What the last process left: only these are resumed. The server resumes after its warm-up, and a
        # job submitted during the warm-up is spooled too: taken for an interrupted one, it was queued a
        # second time, and once the first run had removed its files the second failed, so the client
        # polling the job's ID read "failed" for an upload that was stored.
        self._left = [p for p in folder.glob("*/")] if folder.is_dir() else []
        # Until they are queued again (after the warm-up), their IDs answer from here: a client polling across
        # the restart read 404 "no job" for a job that would still run.
        self._waiting = _waiting_jobs(self._left)

    def submit(self, spec: JobSpec, *, attempts: int = 0, entry: Path | None = None) -> Job:
        if entry is None:
            entry = self.folder / uuid.uuid4().hex
            try:
                (entry / "files").mkdir(parents=True)
                # The description first, the file moved last: a description that cannot be written (a full
                # disk) then leaves the upload where the request staged it, and the job runs from there.
                _write_meta(entry, {"tenant": spec.tenant, "kind": spec.kind, "source_id": spec.source_id,
                                    "size": spec.size, "params": spec.params, "attempts": attempts,
                                    "filename": spec.path.name if spec.path else None, "created_at": time.time()})
                spooled = self._spool(spec, entry)
            except OSError as exc:  # a full or read-only disk: the job still runs, as before, but only once
                log.warning("job for source %r not kept on disk (%s): a stop would lose it", spec.source_id, exc)
                shutil.rmtree(entry, ignore_errors=True)
                return self.queue.submit(spec)
            spec = spooled
        spec.cleanup = lambda: self._done(entry)
        job = self.queue.submit(spec)
        with self._lock:
            if entry.exists():  # not finished yet: keep the ID the client was given, through every restart
                try:
                    _write_meta(entry, {"job_id": job.id, **_read_meta(entry)})
                except OSError as exc:  # the job is queued: the client gets its ID, which a restart would not keep
                    log.warning("job %s: its ID not kept on disk (%s): after a restart it runs under another",
                                job.id, exc)
        return job

    @staticmethod
    def _spool(spec: JobSpec, entry: Path) -> JobSpec:
        """``spec`` with its body on disk in ``entry``: an upload's file moved there (same name: its suffix
        says its format), a text's bytes written."""
        if spec.path is not None:
            kept = entry / "files" / spec.path.name
            shutil.move(str(spec.path), kept)
            if spec.cleanup is not None:
                spec.cleanup()  # the request's staged folder, now empty
            return JobSpec(spec.tenant, spec.kind, spec.source_id, spec.size, spec.params, path=kept)
        (entry / "body").write_bytes(spec.body or b"")
        return JobSpec(spec.tenant, spec.kind, spec.source_id, spec.size, spec.params, body=spec.body)

    def _done(self, entry: Path) -> None:
        with self._lock:
            if not self._closing:  # a job ended by the stop itself (its stores closed) runs again
                shutil.rmtree(entry, ignore_errors=True)

    def resume(self) -> None:
        """Queue again what the last process left unfinished (called once the stores are open)."""
        with self._lock:
            if self._closing:  # stopped before the warm-up ended: the jobs stay on disk for the next start
                return
            left, self._left = self._left, []
        for entry in sorted((p for p in left if p.is_dir()), key=lambda p: p.stat().st_mtime):
            try:
                meta = _read_meta(entry)
                self._resume(entry, meta)
            except (OSError, ValueError, KeyError, TypeError) as exc:
                log.warning("dropping an unreadable pending job %s: %s", entry.name, exc)
                shutil.rmtree(entry, ignore_errors=True)
            finally:
                with self._lock:
                    self._waiting.pop(entry.name, None)
        with self._lock:
            self._waiting.clear()

    def _resume(self, entry: Path, meta: dict) -> None:
        old_id, attempts = meta.get("job_id"), int(meta.get("attempts", 0)) + 1
        # When the client submitted it: the folder's time moves with every rewrite of its description.
        created = float(meta.get("created_at") or entry.stat().st_mtime)
        what = f"job {old_id} (tenant {meta['tenant']!r}, source {meta['source_id']!r})"
        filename = meta.get("filename")
        spec = JobSpec(meta["tenant"], meta["kind"], meta["source_id"], meta["size"], meta["params"])
        if attempts >= MAX_ATTEMPTS:
            # Not run again (nor its body read): its run takes out what the earlier ones stored, and a stop
            # during that does it again.
            log.error("%s was interrupted %d times; not run again: upload it again", what, attempts)
            spec.given_up = f"the server stopped {attempts} times while this job ran"
        elif filename:
            spec.path = entry / "files" / filename
        else:
            spec.body = (entry / "body").read_bytes()
        _write_meta(entry, {**meta, "attempts": attempts})
        job = self.submit(spec, attempts=attempts, entry=entry)
        job.created_at = created
        if old_id:
            self._aliases[old_id] = job.id
        if not spec.given_up:
            log.warning("%s was interrupted by the last stop: queued again as job %s", what, job.id)

    def get(self, job_id: str, tenant: str) -> Job:
        with self._lock:
            waiting = next((left.job for left in self._waiting.values() if left.job.id == job_id), None)
        if waiting is not None and job_id not in self._aliases:
            if waiting.tenant != tenant:
                raise not_found(job_id)
            return waiting
        return self.queue.get(self._aliases.get(job_id, job_id), tenant)

    def unfinished(self, tenant: str) -> int:
        """The queue's, and the spooled jobs not queued again yet (a tenant's removal waits for them too)."""
        with self._lock:
            waiting = sum(1 for left in self._waiting.values() if left.job.tenant == tenant)
        return self.queue.unfinished(tenant) + waiting

    def writing(self, tenant: str, names: Collection[str], prefix: str | None = None) -> list[PendingWrite]:
        """The queue's, and the jobs the last stop left that are not queued again yet (the server resumes them
        after its warm-up, each waiting until it is queued): under the IDs their clients were given."""
        with self._lock:
            found = [(left.job.id, written(left.kind, left.source_id, left.params, names, prefix))
                     for left in self._waiting.values() if left.job.tenant == tenant]
            waiting = [PendingWrite(job_id, "queued", name) for job_id, name in found if name is not None]
        given = {new: old for old, new in self._aliases.items()}  # a resumed job answers to its first ID
        queued = [replace(w, job_id=given.get(w.job_id, w.job_id)) for w in self.queue.writing(tenant, names, prefix)]
        told = {w.job_id for w in queued}  # a job queued again a moment before it leaves the waiting ones
        return [w for w in waiting if w.job_id not in told] + queued

    def forget_tenant(self, tenant: str) -> int:
        """The finished jobs' records (their spooled copies went when each ended)."""
        return self.queue.forget_tenant(tenant)

    def close(self) -> None:
        with self._lock:
            self._closing = True
        left = [p.name for p in self.folder.glob("*/")] if self.folder.exists() else []
        if left:
            log.warning("stopping with %d ingestion job(s) unfinished: they run again at the next start", len(left))
        self.queue.close()


@dataclass(frozen=True)
class _Left:
    """A job the last stop left, until it is queued again: the job its client was given (queued) and what it
    stores (``pending_writes.written``)."""

    job: Job
    kind: str
    source_id: str
    params: dict


def _waiting_jobs(entries: list[Path]) -> dict[str, _Left]:
    """Per spool entry, the job a client was given for it, as it stands until it is queued again: queued."""
    waiting: dict[str, _Left] = {}
    for entry in entries:
        try:
            meta = _read_meta(entry)
            if meta.get("job_id"):
                job = Job(id=meta["job_id"], tenant=meta["tenant"], bytes=int(meta["size"]),
                          created_at=float(meta.get("created_at") or entry.stat().st_mtime))
                params = meta.get("params")
                waiting[entry.name] = _Left(job, meta.get("kind", ""), meta.get("source_id", ""),
                                            params if isinstance(params, dict) else {})
        except (OSError, ValueError, KeyError, TypeError):
            continue  # resume() drops it, saying so
    return waiting


def _read_meta(entry: Path) -> dict:
    return json.loads((entry / META).read_text(encoding="utf-8"))


def _write_meta(entry: Path, meta: dict) -> None:
    part = entry / (META + ".part")
    part.write_text(json.dumps(meta), encoding="utf-8")
    part.replace(entry / META)  # whole or not at all: a crash never leaves half a description
