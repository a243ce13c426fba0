"""The caller's tenant moved out and back in as JSON Lines: ``GET /v1/export`` streams what ``agent-memory
export`` writes (``memory/export_lines.py`` says what each line holds), ``POST /v1/import`` reads it back as
``agent-memory import`` does. Only the API key's tenant, ever: an import goes into it whatever tenant the
export's header names."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse

from agent_memory.api import ingestion
from agent_memory.api.deps import StateDep, TenantDep
from agent_memory.api.errors import ApiError
from agent_memory.api.ingestion import accepted, write_lock_busy
from agent_memory.api.schemas import JobAccepted, error_responses
from agent_memory.api.schemas_bulk import EXPORT_LINES_DOC
from agent_memory.api.schemas_transfer import IMPORT_BODY_DOC, IMPORT_MEDIA_TYPES, ImportOut
from agent_memory.core.errors import IngestError
from agent_memory.core.export_format import header_of
from agent_memory.memory.export_lines import export_names
from agent_memory.stores.jobs import JobSpec
from agent_memory.stores.pending_writes import IMPORT_KIND, IMPORT_SOURCES

router = APIRouter(tags=["upkeep"])
MEDIA_TYPE = "application/x-ndjson"
BODY_FILE = "import.jsonl"


@router.get("/v1/export", response_class=StreamingResponse, responses={200: EXPORT_LINES_DOC, **error_responses(401, 503)},
            summary="Everything the caller's tenant holds, as JSON Lines (a data request, a move)")
def export(state: StateDep, tenant: TenantDep) -> StreamingResponse:
    """The tenant's export: its sources with their text, its sessions with their settings and raw messages,
    one JSON object per line, streamed as it is read. ``agent-memory import`` (or ``Memory.import_export``)
    reads it back into any deployment, whose models and settings then make the vectors and facts again."""
    lines = state.memory.export(tenant=tenant)  # the tenant checked and the archive settled before the first byte
    body = (json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    return StreamingResponse(body, media_type=MEDIA_TYPE,
                             headers={"Content-Disposition": 'attachment; filename="agent-memory-export.jsonl"'})


@router.post("/v1/import", response_model=ImportOut, openapi_extra=IMPORT_BODY_DOC,
             responses={202: {"model": JobAccepted, "description": "A body over the job threshold (or sent while a "
                                                                   "job holds the write lock): imported by a "
                                                                   "background job, whose result is this answer"},
                        **error_responses(401, 413, 415, 422, 503)},
             summary="Import an export (JSON Lines) into the caller's tenant")
async def import_export(request: Request, state: StateDep, tenant: TenantDep):
    """An export's lines read back into the API key's tenant, as ``agent-memory import`` does: sources
    re-ingested with this server's models, ingested files recorded (the next ingestion skips an unchanged one),
    sessions appended. Importing twice changes nothing; a bad line is a skip with its number and the rest is
    imported; a body of another format or version is refused (422) before anything is stored. The body is
    held on disk while it is imported, up to the upload limit (413 past it); one larger than the job
    threshold is imported by a background job (202)."""
    state.services.check_index_format()  # a data dir of other models takes no writes: said before the body is read
    _check_media_type(request.headers.get("content-type", ""))
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > state.max_upload_bytes:
        raise ApiError(413, "too_large", f"an import of {declared} bytes exceeds the limit of "
                                         f"{state.max_upload_bytes} bytes")
    # Staged with the data, as an upload is (stores/staging.py).
    staging = state.services.staging
    expected = int(declared) if declared and declared.isdigit() else 0
    folder = await run_in_threadpool(staging.stage, "import", expected)
    try:
        path, size = folder / BODY_FILE, 0
        with path.open("wb") as out:
            async for chunk in request.stream():
                size += len(chunk)
                if size > state.max_upload_bytes:
                    raise ApiError(413, "too_large", f"the import exceeds the limit of {state.max_upload_bytes} "
                                                     "bytes")
                if not expected:
                    staging.grew("import", size, len(chunk))
                out.write(chunk)
        await run_in_threadpool(_check_header, path)
    except BaseException:
        staging.release(folder)
        raise

    def cleanup() -> None:
        staging.release(folder)

    if await run_in_threadpool(_as_job, state, size):
        # What it stores, named before it runs: a delete of one of those while it waits is refused (409).
        sources = await run_in_threadpool(_names_in, path)
        spec = JobSpec(tenant=tenant, kind=IMPORT_KIND, source_id="", size=size, params={IMPORT_SOURCES: sources},
                       path=path, cleanup=cleanup)
        return accepted(await run_in_threadpool(state.jobs.submit, spec))
    try:
        return await run_in_threadpool(ingestion.import_file, state, tenant, path)
    finally:
        cleanup()


def _check_media_type(content_type: str) -> None:
    kind = content_type.split(";")[0].strip().lower()
    if kind not in IMPORT_MEDIA_TYPES:
        raise ApiError(415, "unsupported_media_type",
                       f"send the export as {MEDIA_TYPE} (or {', '.join(IMPORT_MEDIA_TYPES[1:])}), got "
                       f"{kind[:100] or 'no content-type'!r}")


def _check_header(path: Path) -> None:
    """A 422 naming what the body is, unless its first line is an export's header of the version read here."""
    try:
        with path.open("rb") as handle:
            found = header_of(handle)
    except IngestError as exc:
        raise ApiError(422, "invalid_export", str(exc)) from None
    if found is None:
        raise ApiError(422, "invalid_export", "the body is empty: an export starts with its header line "
                                              "(GET /v1/export writes one)")


def _names_in(path: Path) -> list[str]:
    with path.open("rb") as handle:
        return export_names(handle)


def _as_job(state, size: int) -> bool:
    """As a document's upload: a large body goes to a background job; so does a small one while a job holds the
    write lock past its grace (``ingestion.write_lock_busy``). Blocking: run it in the thread pool."""
    return size > state.job_threshold_bytes or write_lock_busy(state)
