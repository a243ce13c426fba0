"""Documents in (JSON text or a multipart upload), background jobs, forgetting a source (queued behind a
running job)."""

from __future__ import annotations

import json
import posixpath
from pathlib import PurePath
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import StringConstraints, ValidationError

from agent_memory.api import ingestion
from agent_memory.api.deps import NO_BODY, CallerDep, StateDep, TenantDep
from agent_memory.api.errors import ApiError
from agent_memory.api.ingestion import BUSY, accepted, write_inline, write_lock_busy
from agent_memory.api.schemas import (
    DocumentIn,
    ForgetOut,
    IngestOut,
    JobAccepted,
    JobOut,
    error_responses,
    queued_response,
)
from agent_memory.api.schemas_bulk import SourcesForgottenOut, TenantForgottenOut
from agent_memory.api.strict import MAX_JSON_DEPTH, unknown_keys_problem
from agent_memory.core.errors import problem_of
from agent_memory.core.limits import MAX_FORGET_IDS
from agent_memory.core.storable import check_storable
from agent_memory.ingest.discovery import check_source_id
from agent_memory.stores.jobs import JobSpec

router = APIRouter(tags=["documents"])

_UPLOAD_DOC = {
    "requestBody": {"required": True, "content": {
        "application/json": {"schema": DocumentIn.model_json_schema(),
                             "example": DocumentIn.model_config["json_schema_extra"]["examples"][0]},
        "multipart/form-data": {"schema": {"type": "object", "required": ["file"], "properties": {
            "file": {"type": "string", "format": "binary",
                     "description": ".txt .md .html .json .jsonl (records or a transcript)"},
            "source_id": {"type": "string", "description": "defaults to the file name"},
            "metadata": {"type": "string", "description": "a JSON object, stored with every item"},
            "client_path": {"type": "string", "description": "the file's absolute path on the client (sent by "
                            "the CLI to the server owning its data dir): forget and inspect take it"},
            "named_by_user": {"type": "string", "enum": ["true", "false"], "default": "true",
                            "description": "false for a file a folder's walk reached: a later walk whose ignore "
                            "rules leave it out forgets it; a file the user named stays"},
            "named_by_path": {"type": "string", "enum": ["true", "false"],
                              "description": "true: source_id is the client's name for the file from its path (the "
                              "CLI's naming), so another existing file at another client_path that holds it refuses "
                              "the upload (409 source_id_held) instead of being replaced; needs client_path. "
                              "Default: true without a source_id, false with one (a chosen ID is replaced)"}}}},
    }},
}


@router.post("/v1/documents", response_model=IngestOut, openapi_extra=_UPLOAD_DOC,
             responses={202: {"model": JobAccepted, "description": "Large body: ingested by a background job"},
                        **error_responses(400, 401, 413, 422, 503)},
             summary="Ingest a document (JSON) or an uploaded file (multipart)")
async def post_document(request: Request, state: StateDep, tenant: TenantDep):
    # Before the body is read or a job queued: a data dir of other models (reindex it) takes no writes,
    # and says so once (503 reindex_required, as a question on it does) instead of in each job's report.
    state.services.check_index_format()
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > state.max_upload_bytes:
        raise ApiError(413, "too_large", f"body of {declared} bytes exceeds the limit of "
                                         f"{state.max_upload_bytes} bytes")
    content_type = request.headers.get("content-type", "")
    if content_type.startswith("multipart/form-data"):
        return await _upload(request, state, tenant)
    if not content_type.startswith("application/json"):
        raise ApiError(415, "unsupported_media_type",
                       f"send application/json or multipart/form-data, got {content_type or 'no content-type'!r}")
    body = await _read_capped(request, state.max_upload_bytes)
    try:
        doc = DocumentIn.model_validate_json(body)
    except ValidationError as exc:
        raise ApiError(422, "invalid_request", _validation_message(exc)) from None
    chosen_source_id(doc.source_id)
    size = len(doc.text.encode("utf-8"))
    if size <= state.job_threshold_bytes:
        stored = await run_in_threadpool(write_inline, state, lambda: ingestion.ingest_text(state, tenant, doc))
        if stored is not BUSY:
            return stored
    spec = JobSpec(tenant=tenant, kind="text", source_id=doc.source_id, size=size,
                   params={"title": doc.title, "metadata": doc.metadata}, body=doc.text.encode("utf-8"))
    job = await run_in_threadpool(state.jobs.submit, spec)
    return accepted(job)


# The fields of a multipart upload (documented in _UPLOAD_DOC); any other is refused by name.
UPLOAD_FIELDS = ("file", "source_id", "metadata", "client_path", "named_by_user", "named_by_path")


async def _upload(request: Request, state, tenant: str):
    form = await request.form(max_files=1, max_fields=8)
    # As a JSON body's keys (strict.ClosedBody): a misspelled field ("sourceid") would store under a default.
    if problem := unknown_keys_problem({key: None for key in form.keys()}, list(UPLOAD_FIELDS)):
        raise ApiError(422, "invalid_request", f"multipart body: {problem}")
    upload = form.get("file")
    if upload is None or isinstance(upload, str):
        raise ApiError(422, "invalid_request", "multipart body needs a 'file' part")
    filename = client_path(upload.filename)  # folders kept: "docs/a.md" and "notes/a.md" are two sources
    chosen = chosen_source_id(str(form.get("source_id") or ""))
    source_id = chosen or _file_source_id(filename)
    metadata = _metadata(form.get("metadata"))
    origin = _origin(form.get("client_path"))
    named_by_user = _flag(form.get("named_by_user"), "named_by_user", default=True)
    named_by_path = _flag(form.get("named_by_path"), "named_by_path", default=not chosen)
    if named_by_path and origin is None and form.get("named_by_path"):
        raise ApiError(422, "invalid_request", "named_by_path 'true' needs client_path: the file's absolute path "
                                               "on the client is what is compared with the file holding the ID")
    # Staged with the data (stores/staging.py), never in the system's temp dir: a process killed while it reads
    # the file leaves it where the next start removes it.
    staging = state.services.staging
    try:
        folder = await run_in_threadpool(staging.stage, "upload", min(upload.size or 0, state.max_upload_bytes))
    except BaseException:
        await upload.close()
        raise
    path = folder / PurePath(filename).name
    size = 0
    try:
        with path.open("wb") as out:
            while block := await upload.read(1 << 20):
                size += len(block)
                if size > state.max_upload_bytes:
                    raise ApiError(413, "too_large", f"upload {filename!r} exceeds the limit of "
                                                     f"{state.max_upload_bytes} bytes")
                staging.grew("upload", size, len(block))
                out.write(block)
    except BaseException:
        staging.release(folder)
        raise
    finally:
        await upload.close()

    def work(progress=None):
        return ingestion.ingest_upload(state, tenant, path, filename, source_id, metadata, progress, origin=origin,
                                       named_by_user=named_by_user, named_by_path=named_by_path)

    def cleanup():
        staging.release(folder)

    # A large body goes to a background job (202); so does a small one while the write lock stays held past
    # ``LOCK_GRACE_S`` (a job writing): ``write_inline`` decides, holding the lock it writes under.
    if size <= state.job_threshold_bytes:
        try:
            stored = await run_in_threadpool(write_inline, state, work)
        except BaseException:
            cleanup()
            raise
        if stored is not BUSY:
            cleanup()
            return stored
    spec = JobSpec(tenant=tenant, kind="upload", source_id=source_id, size=size,
                   params={"filename": filename, "metadata": metadata, "origin": origin,
                           "named_by_user": named_by_user, "named_by_path": named_by_path}, path=path,
                   cleanup=cleanup)
    job = await run_in_threadpool(state.jobs.submit, spec)
    return accepted(job)


def client_path(name: str | None) -> str:
    """The client's relative path of an upload, '/'-separated, without a root, '.', '..' or empty parts."""
    parts = [p for p in (name or "").replace("\\", "/").split("/") if p.strip() not in ("", ".", "..")]
    return "/".join(parts) or "upload.txt"


def _flag(value, name: str, *, default: bool) -> bool:
    """A multipart boolean field: "true" or "false" (absent or empty: ``default``); else 422 naming it."""
    if value is None or value == "":
        return default
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ApiError(422, "invalid_request", f"{name} must be 'true' or 'false', got {str(value)[:200]!r}")


def _origin(value) -> str | None:
    """An upload's ``client_path``: the file's absolute path on the client (the CLI sends it to the server
    that owns its data dir, on its own machine), kept as the source's path so ``forget`` and ``inspect``
    take that path as they do after a local ingestion. Only text: it is matched, never opened."""
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not value.startswith("/") or len(value) > 4096 or "\x00" in value:
        raise ApiError(422, "invalid_request", f"client_path must be an absolute path, got {str(value)[:200]!r}")
    # Stored as the CLI sends it (os.path.abspath): "/home/u/./a.md", "//home/u/a.md" and "/home/u/x/../a.md"
    # are that file, and forget, inspect and a folder's mirror find it by that one spelling.
    return "/" + posixpath.normpath(value).lstrip("/")


def chosen_source_id(source_id: str) -> str:
    """A source ID the client gave (``ingest/discovery.check_source_id``), a 422 naming it when refused."""
    try:
        return check_source_id(source_id) if source_id else source_id
    except ValueError as exc:
        raise ApiError(422, "invalid_request", str(exc)) from None


def _file_source_id(filename: str) -> str:
    """An upload's file name as its source ID, refused (422) when it could not be one (a control character)."""
    try:
        return check_source_id(filename)
    except ValueError as exc:
        raise ApiError(422, "invalid_request", f"the file name {filename!r} cannot name the source ({exc}); "
                                               "rename the file or send a source_id") from None


async def _read_capped(request: Request, limit: int) -> bytes:
    """The body, refusing it once it passes the limit (a chunked body has no content-length)."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ApiError(413, "too_large", f"body exceeds the limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _metadata(raw) -> dict:
    """The multipart ``metadata`` field: a JSON object held to what a JSON body's ``metadata`` is (strict.py,
    DocumentIn): Python's parser takes Infinity, NaN and lone surrogates, which no store keeps, so the value
    is checked after parsing, naming the key that holds one (a 422, as for a JSON body's field)."""
    if raw is None or raw == "":
        return {}
    try:
        value = json.loads(str(raw))
    except json.JSONDecodeError as exc:
        raise ApiError(422, "invalid_request",
                       f"metadata must be a JSON object: {exc} (got {str(raw)[:80]!r})") from None
    except RecursionError:
        raise ApiError(422, "invalid_request", f"metadata is nested deeper than {MAX_JSON_DEPTH} levels") from None
    if not isinstance(value, dict):
        raise ApiError(422, "invalid_request", f"metadata must be a JSON object, got {type(value).__name__}")
    try:
        check_storable(value, "metadata", MAX_JSON_DEPTH)
    except ValueError as exc:
        raise ApiError(422, "invalid_request", str(exc)) from None
    return value


def _validation_message(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err.get("loc", ())) or "body"
        parts.append(f"{where}: {problem_of(err)}")
    return "; ".join(parts)


@router.get("/v1/jobs/{job_id}", response_model=JobOut, responses=error_responses(401, 404, 503),
            summary="Progress and result of a background ingestion job")
def get_job(job_id: str, state: StateDep, caller: CallerDep) -> dict:
    # A job the caller queued: its tenant's, or for an admin key a server-wide operation's.
    return state.jobs.get(job_id, caller.job_owner).to_dict()


@router.delete("/v1/sources", response_model=SourcesForgottenOut, dependencies=[NO_BODY],
               response_model_exclude_unset=True,  # prefix, or file_ids and not_found: as asked
               responses={**queued_response("the forget"), **error_responses(401, 409, 422, 503)},
               summary="Forget every source whose ID starts with a prefix, or many IDs at once, in every store")
def delete_sources(state: StateDep, tenant: TenantDep,
                   prefix: Annotated[str | None, Query(min_length=1, max_length=512, description=(
                       "Every source whose ID starts with it goes, and every uploaded file whose ID does, with all "
                       "it held; DELETE /v1/tenant removes a whole tenant."))] = None,
                   file_ids: Annotated[list[Annotated[str, StringConstraints(min_length=1, max_length=512)]] | None,
                                       Query(max_length=MAX_FORGET_IDS, description=(
                       f"Up to {MAX_FORGET_IDS} IDs (repeated: ?file_ids=a&file_ids=b), each forgotten as DELETE "
                       "/v1/sources/{id} forgets it (a file's ID: the file and every source it held)."))] = None):
    """What ``DELETE /v1/sources/{source_id}`` of each would remove, done in batches: of every source under
    ``prefix``, or of each of ``file_ids`` (``not_found``: those that matched nothing). One of the two. Counts of
    zero: nothing matched (not an error: the prefix holds nothing now). 409 ``source_busy``, naming the jobs,
    while a job of the tenant queued or running uploads one of those sources (it would store it again after the
    delete): nothing is removed then."""
    if (prefix is None) == (file_ids is None):
        raise ApiError(422, "invalid_request", "DELETE /v1/sources takes one of prefix (every source whose ID starts "
                       "with it) or file_ids (those IDs), got " + ("both" if prefix is not None else "neither"))
    if file_ids is not None:
        ingestion.refuse_pending_upload(state, tenant, "a source of file_ids", file_ids)
        if write_lock_busy(state):
            return accepted(state.jobs.submit(JobSpec(tenant=tenant, kind="forget_ids", source_id="", size=0,
                                                      params={"file_ids": file_ids})))
        return state.memory.forget_each(file_ids, tenant=tenant)
    ingestion.refuse_pending_upload(state, tenant, f"a source under prefix {prefix!r}", prefix=prefix)
    if write_lock_busy(state):
        return accepted(state.jobs.submit(JobSpec(tenant=tenant, kind="forget_prefix", source_id=prefix, size=0)))
    return state.memory.forget_prefix(prefix, tenant=tenant)


@router.delete("/v1/tenant", response_model=TenantForgottenOut, dependencies=[NO_BODY],
               responses={**queued_response("the removal"), **error_responses(401, 409, 422, 503)},
               summary="Remove everything the caller's tenant holds: sources, sessions, facts")
def delete_tenant(state: StateDep, tenant: TenantDep,
                  confirm: Annotated[str, Query(description=(
                      "The tenant's name (GET /v1/whoami), repeated: nothing removes a whole tenant by accident."))]):
    """Every session (all agents' messages and settings) and every source, item, triple and catalog record of
    the API key's tenant, in every store. ``confirm`` must name that tenant, else 422 and nothing is removed;
    409 while the tenant has jobs queued or running (their writes would outlast the removal)."""
    if confirm != tenant:
        raise ApiError(422, "invalid_request", f"confirm must repeat the tenant's name to remove all it holds: "
                                               f"this key's tenant is {tenant!r}, got {confirm[:200]!r}")
    ingestion.refuse_busy_tenant(state, tenant)
    if write_lock_busy(state):
        return accepted(state.jobs.submit(JobSpec(tenant=tenant, kind="forget_tenant", source_id="", size=0)))
    return ingestion.remove_tenant(state, tenant)


@router.delete("/v1/sources/{source_id:path}", response_model=ForgetOut, dependencies=[NO_BODY],
               responses={**queued_response("the forget"), **error_responses(401, 404, 409, 422, 503)},
               summary="Forget a source (or an uploaded file and all it held) in every store")
def delete_source(source_id: str, state: StateDep, tenant: TenantDep):
    # Asked first, before waiting for the write lock: a job that uploads this source would store it again after
    # the delete (openapi_docs.DESCRIPTIONS says what the route answers).
    ingestion.refuse_pending_upload(state, tenant, f"source {source_id!r}", [source_id])
    if write_lock_busy(state):
        return accepted(state.jobs.submit(JobSpec(tenant=tenant, kind="forget", source_id=source_id, size=0)))
    return ingestion.forget_source(state, tenant, source_id)
