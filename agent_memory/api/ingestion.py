"""The writes behind the API: POST /v1/documents (a JSON text document, or an uploaded file of any format
the ingestion job reads: text, Markdown, HTML, JSON/JSONL records, transcripts), POST /v1/import, DELETE
/v1/sources and POST /v1/gc, inline or as background jobs. The work is the Python API's (``state.memory``); this adds
progress and the HTTP errors."""

from __future__ import annotations

import io
import logging
from dataclasses import replace
from pathlib import Path, PurePath
from typing import IO, Any, Callable, Iterable, Iterator

from fastapi.responses import JSONResponse

from agent_memory.api.errors import ApiError, error_of
from agent_memory.api.schemas import DocumentIn
from agent_memory.core.errors import JobGivenUp, SourceNotFoundError
from agent_memory.ingest.consistency import check_and_repair
from agent_memory.ingest.file_ingestion import HELD_BY_ANOTHER
from agent_memory.ingest.incomplete import undo_document, undo_file
from agent_memory.ingest.ownership import FILE_KEY
from agent_memory.ingest.queued_writes import refuse_queued_writes
from agent_memory.ingest.upkeep import expire
from agent_memory.stores.jobs import Job, JobQueue, JobSpec
from agent_memory.stores.source_locks import SourceLocks

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]


def ingest_text(state, tenant: str, doc_in, progress: Progress | None = None) -> dict[str, Any]:
    if progress:
        progress("ingesting", 0, 1)
    # Under the write lock, the ingestion holds the source's lock from its first write to its entry (a repair
    # in another process leaves it alone meanwhile).
    added = state.memory.add(doc_in.text, source_id=doc_in.source_id, title=doc_in.title,
                             metadata=doc_in.metadata, tenant=tenant, progress=progress)
    if progress:
        progress("ingesting", 1, 1)
    return {"source_ids": added.source_ids, "report": added.report.to_dict()}


def ingest_upload(state, tenant: str, path: Path, filename: str, source_id: str, metadata: dict[str, Any],
                  progress: Progress | None = None, *, origin: str | None = None,
                  named_by_user: bool = True, named_by_path: bool = False) -> dict[str, Any]:
    """The file ingestion job for an upload, under the caller's ``source_id`` instead of a path:
    forgetting the upload forgets every source it held; re-uploading the same bytes is a no-op.
    ``origin``: the file's absolute path on the client, recorded as where the source came from.
    ``named_by_user``: False for a file a folder job's walk reached (``Memory.add_file``).
    ``named_by_path``: the client named ``source_id`` from the file's path (the CLI's naming): another
    existing file at another ``origin`` that holds it refuses the upload (409), as a local ingestion does;
    otherwise the upload replaces what the ID held. Only with an ``origin``: nothing else is compared."""
    added = state.memory.add_file(path, source_id=source_id, metadata={**metadata, "path": filename},
                                  progress=progress, tenant=tenant, named_by_user=named_by_user,
                                  client_path=origin, named_by_path=named_by_path and origin is not None)
    with state.memory.write_lock, state.locks.hold(tenant, source_id):  # the order every writer takes them in
        _record_client_path(state, tenant, source_id, added.source_ids, path, origin or filename)
    report = added.report
    if report.files_skipped:
        reason = _public(report.files_skipped[0][1], path, filename)
        raise ApiError(400, "unsupported_file", f"{filename!r} cannot be ingested: {reason}")
    if report.files_failed:
        reason = _public(report.files_failed[0][1], path, filename)
        if reason.startswith("source ID ") and HELD_BY_ANOTHER in reason:
            raise ApiError(409, "source_id_held", f"{filename!r} was not ingested: {reason}")
        raise ApiError(400, "unreadable_file", f"{filename!r} could not be ingested: {reason}")
    return {"source_ids": added.source_ids, "report": _public(report.to_dict(), path, filename)}


def _public(value, path: Path, filename: str):
    """``value`` (report text, dicts, lists) with the upload's temporary path shown as the client's name."""
    if isinstance(value, str):
        return value.replace(str(path), filename).replace(str(path.parent) + "/", "")
    if isinstance(value, dict):
        return {k: _public(v, path, filename) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_public(v, path, filename) for v in value]
    return value


def _record_client_path(state, tenant: str, source_id: str, source_ids: list[str], path: Path, filename: str) -> None:
    """The catalog keeps where a source came from: for an upload, the client's name (or the file's absolute
    path on the client, when it sent one), not the temporary file the server read it from."""
    catalog = state.services.catalog
    entries = catalog.get_many(tenant, [FILE_KEY + source_id, *source_ids])
    moved = [replace(e, path=_public(e.path, path, filename)) for e in entries.values() if str(path.parent) in e.path]
    if moved:
        catalog.put_many(moved)


# An import's progress is said every this many lines (a job's stage, where a stopping server may end it).
IMPORT_PROGRESS_LINES = 200


def import_file(state, tenant: str, path: Path, progress: Progress | None = None) -> dict[str, Any]:
    """``POST /v1/import``'s answer, inline or as a job's result: the export at ``path`` imported into ``tenant``."""
    with path.open("rb") as handle:
        return import_lines(state, tenant, handle, progress)


def import_lines(state, tenant: str, handle: IO[bytes], progress: Progress | None = None) -> dict[str, Any]:
    """The export read line by line from ``handle`` (as bytes: a line that is not UTF-8 is a skip with its number,
    never the request's error) into ``tenant``: the API key's, whatever tenant the export's header names."""
    return state.memory.import_export(_counted(handle, progress), tenant=tenant).to_dict()


def _counted(handle: IO[bytes], progress: Progress | None) -> Iterator[bytes]:
    total = _lines_in(handle) if progress else 0  # the units a job's progress counts: of how many lines
    if progress:
        progress("importing", 0, total)
    number = 0
    for number, line in enumerate(handle, start=1):
        if progress and number % IMPORT_PROGRESS_LINES == 0:
            progress("importing", number, total)  # a stopping server ends the job here; run again, it goes on
        yield line
    if progress:
        progress("importing", number, total)


def _lines_in(handle: IO[bytes]) -> int:
    """The lines ``handle`` holds from where it stands (read through once, then back there)."""
    start, lines, last = handle.tell(), 0, b"\n"
    while block := handle.read(1 << 20):
        lines, last = lines + block.count(b"\n"), block[-1:]
    handle.seek(start)
    return lines + (last != b"\n")


# How long a write waits for the write lock before it is queued instead: a forget, a gc pass or a session's
# turns being archived hold it for moments (the write is then done inline, 200); a job holds it for as long as
# it runs.
LOCK_GRACE_S = 10.0


def write_lock_busy(state) -> bool:
    """Whether the write lock stays held past ``LOCK_GRACE_S``: a job holds it for as long as it runs, and a
    write waiting for it inline would hold the request (and a server thread) as long; it is queued behind
    that job instead (202: :func:`accepted`). Blocking."""
    if not state.ingest_lock.acquire(timeout=LOCK_GRACE_S):
        return True
    state.ingest_lock.release()  # free now; the write takes it again (a writer in between is waited for)
    return False


# What write_inline returns when the write lock stayed held: queue the write as a job instead.
BUSY = object()


def write_inline(state, work: Callable[[], Any]) -> Any:
    """``work()`` run holding the write lock when it comes free within ``LOCK_GRACE_S``, else ``BUSY`` (queue it:
    :func:`accepted`). The lock taken to decide is kept through the write: checked and taken again in two steps,
    a job could take it in between (one resumed from the spool at the start, one queued meanwhile), and the
    request waited for the whole of that job. Only for a write that waits for nothing that needs the lock (an
    upload, a document: a forget first waits for the start's archive catch-up, which does). Blocking: run it in
    the thread pool."""
    if not state.ingest_lock.acquire(timeout=LOCK_GRACE_S):
        return BUSY
    try:
        return work()
    finally:
        state.ingest_lock.release()


def accepted(job) -> JSONResponse:
    """202 with the job's ID and URL (also in ``Location``), polled at ``GET /v1/jobs/{id}``."""
    url = f"/v1/jobs/{job.id}"
    return JSONResponse({"job_id": job.id, "status": job.status, "url": url}, status_code=202,
                        headers={"Location": url})


def forget(state, tenant: str, source_id: str) -> dict[str, int]:
    return state.memory.forget(source_id, tenant=tenant)  # under the write lock, then its sources' locks


def forget_source(state, tenant: str, source_id: str) -> dict[str, Any]:
    """``DELETE /v1/sources/{id}``'s answer, inline or as a job's result; :func:`no_source` when nothing matched."""
    removed = forget(state, tenant, source_id)
    if not any(removed.values()):
        raise no_source(state, tenant, source_id)
    return {"source_id": source_id, **removed}


def no_source(state, tenant: str, source_id: str) -> SourceNotFoundError:
    """The 404 of a source ID that matches nothing, naming the stored IDs that look like it (as the CLI does)."""
    similar = state.memory.similar_sources(source_id, tenant=tenant)
    hint = f"; similar stored IDs: {', '.join(similar)}" if similar else ""
    return SourceNotFoundError(f"no source {source_id!r} for this tenant{hint}", similar)


def refuse_pending_upload(state, tenant: str, what: str, given: Iterable[str] = (), prefix: str | None = None) -> None:
    """409 ``source_busy`` (SourceBusyError) while a job of ``tenant``, queued or running, will store a source that
    a forget of ``given`` (IDs, or file paths as ``forget`` takes them) or of ``prefix`` names: forgotten now, the
    source would be stored again once that job runs, and the delete silently undone (``ingest/queued_writes.py``).
    ``what``: the asked, for the message. Nothing is removed; the delete is asked again once the job ends. Asked
    here, when the request comes: a forget job accepted then is not refused by an upload queued after it."""
    refuse_queued_writes(state.jobs, tenant, what, given, prefix, verb="delete", wait_hint="GET /v1/jobs/{job_id}")


def refuse_busy_tenant(state, tenant: str) -> None:
    """409 while ``tenant`` has jobs queued or running: what they store after a removal of the tenant would stay.
    Both removals of a tenant (its own key's and an admin's) ask this first; nothing is removed then."""
    running = state.jobs.unfinished(tenant)
    if running:
        raise ApiError(409, "tenant_busy", f"tenant {tenant!r} has {running} job{'s' * (running > 1)} queued or "
                       "running, whose writes would outlast the removal: ask again once they end (nothing was "
                       "removed)")


def remove_tenant(state, tenant: str, *, by: str = "its own key") -> dict[str, Any]:
    """``DELETE /v1/tenant``'s and ``DELETE /v1/tenants/{tenant}``'s answer, inline or as a job's result:
    everything ``tenant`` holds out of every store (``Memory.forget_tenant``: sessions, their archived turns,
    sources, items, triples, catalog records), then the records of its finished jobs (``jobs``), whose results
    name its sources. Logged with the counts and ``by`` (who asked): a whole tenant gone is something an
    operator looks for later."""
    removed = state.memory.forget_tenant(tenant)
    removed["jobs"] = state.jobs.forget_tenant(tenant)
    log.warning("tenant %r removed by %s: %d sessions (%d messages), %d sources, %d files, %d items, %d triples, "
                "%d job records", tenant, by, removed["sessions"],
                removed["messages"], removed["sources"], removed["files"], removed["items"], removed["triples"],
                removed["jobs"])
    return removed


def check_tenant_stores(state, tenant: str | None, *, repair: bool = False, adopt: bool = False) -> dict[str, Any]:
    """``POST /v1/check``'s answer, inline or as a job's result: the tenant's stores compared (and repaired);
    ``tenant`` None: every tenant any store holds (an admin key's check, as ``agent-memory check`` locally)."""
    with state.memory.write_lock:
        return check_and_repair(state.services, state.memory.ingestion, None if tenant is None else [tenant],
                                repair_them=repair, adopt=adopt)


def expire_tenant(state, tenant: str) -> dict[str, Any]:
    """``POST /v1/gc``'s answer, inline or as a job's result: the tenant's sources past their time to live
    forgotten in every store."""
    with state.memory.write_lock:
        return {"expired": expire(state.services, tenants=[tenant])}


# ---- background jobs: run here (embedded) or by `agent-memory worker` (PostgreSQL) ---------------

def job_queue(state) -> tuple[JobQueue, SourceLocks]:
    """The services' job queue (durable on PostgreSQL when configured), running :func:`run_job`, and their
    source locks."""
    queue = state.services.job_queue(lambda spec, job: run_job_after_catch_up(state, spec, job), error_of)
    if state.services.settings.jobs_go_to_workers:
        # Said once at start: a server alone leaves such jobs queued until a worker takes them.
        log.warning("background ingestion jobs go to PostgreSQL for `agent-memory worker` processes; this server "
                    "runs none of them (AGENT_MEMORY_JOB_RUNNER=process runs them here)")
    return queue, state.services.source_locks


# How often a job waiting for the start's archive catch-up looks whether the server is stopping.
CATCH_UP_POLL_S = 1.0


def run_job_after_catch_up(state, spec: JobSpec, job: Job) -> dict[str, Any]:
    """:func:`run_job` of the server's own queue, once the start's archive catch-up (the messages a crash left
    unarchived, ``conversation/working_memory.py``) has ended. The catch-up takes the write lock session by
    session and every read waits for it; a job resumed from the spool, or posted meanwhile, holds that lock for
    as long as it runs: taken first, it stalled every tenant's questions for its whole length. A stop ends the
    wait (``Job.progress`` raises; the spool runs the job again at the next start)."""
    while not state.memory.working_memory.settle(CATCH_UP_POLL_S):
        job.progress("starting")
    return run_job(state, spec, job.progress)


def run_job(state, spec: JobSpec, progress: Progress | None = None) -> dict[str, Any]:
    """Do what a job describes; ``state`` has ``memory`` and ``locks`` (the API's, or a worker's). A job given up
    (``spec.given_up``) is not done: what its earlier runs stored is taken out, and it fails saying so."""
    if spec.given_up:
        raise JobGivenUp(f"{spec.given_up}; not run again: {undo_given_up(state, spec)}")
    params = spec.params
    if spec.kind == "text":
        doc = DocumentIn.model_construct(text=(spec.body or b"").decode("utf-8"), source_id=spec.source_id,
                                         title=params.get("title", ""), metadata=params.get("metadata") or {})
        return ingest_text(state, spec.tenant, doc, progress)
    if spec.kind == "forget":
        return forget_source(state, spec.tenant, spec.source_id)
    if spec.kind == "gc":
        return expire_tenant(state, spec.tenant)
    if spec.kind == "check":
        return check_tenant_stores(state, None if params.get("every_tenant") else spec.tenant,
                                   repair=bool(params.get("repair")), adopt=bool(params.get("adopt")))
    if spec.kind == "forget_ids":
        return state.memory.forget_each(params["file_ids"], tenant=spec.tenant)
    if spec.kind == "forget_prefix":
        return state.memory.forget_prefix(spec.source_id, tenant=spec.tenant)
    if spec.kind == "forget_tenant":  # an admin's names the tenant; a tenant's own removal is recorded under it
        return remove_tenant(state, params.get("tenant", spec.tenant), by=params.get("by", "its own key"))
    if spec.kind == "import":
        if spec.path is not None:
            return import_file(state, spec.tenant, spec.path, progress)
        return import_lines(state, spec.tenant, io.BytesIO(spec.body or b""), progress)
    if spec.kind == "backup":
        return state.memory.backup(params["destination"])
    if spec.kind == "delete_session":
        return state.memory.delete_session(params["session_id"], forget_archived=bool(params.get("forget")),
                                           tenant=spec.tenant)
    if spec.kind != "upload":
        raise ApiError(400, "invalid_job", f"unknown job kind {spec.kind!r}")
    filename = params.get("filename") or "upload.txt"
    if spec.path is not None:
        return ingest_upload(state, spec.tenant, spec.path, filename, spec.source_id, params.get("metadata") or {},
                             progress, origin=params.get("origin"), named_by_user=params.get("named_by_user", True),
                             named_by_path=params.get("named_by_path", False))
    # The body from the job's row (a worker's job), staged under this process's data dir while it is read: a
    # worker killed meanwhile leaves it where its next start removes it (stores/staging.py).
    staging = state.services.staging
    folder = staging.stage("job", len(spec.body or b""))
    try:
        path = folder / PurePath(filename).name
        path.write_bytes(spec.body or b"")
        return ingest_upload(state, spec.tenant, path, filename, spec.source_id, params.get("metadata") or {},
                             progress, origin=params.get("origin"), named_by_user=params.get("named_by_user", True),
                             named_by_path=params.get("named_by_path", False))
    finally:
        staging.release(folder)


def undo_given_up(state, spec: JobSpec) -> str:
    """Take out what the runs of a given-up job stored (``ingest/incomplete.py``); what the job's record says of it."""
    if spec.kind == "upload":
        name = spec.params.get("filename") or spec.source_id
        undo, again = undo_file, f"upload {name!r} again"
    elif spec.kind == "text":
        undo, again = undo_document, f"post {spec.source_id!r} again"
    else:  # a forget, a gc pass, a check, a session's deletion, an import (what it stored stays; importing
        # again skips it as unchanged and goes on): each may simply be asked again
        return "ask for it again"
    with state.memory.write_lock, state.locks.hold(spec.tenant, spec.source_id):
        return f"{undo(state.services, spec.tenant, spec.source_id)}; {again}"
