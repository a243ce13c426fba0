"""``POST /v1/backup``: a consistent copy of the server's data dir, into a folder on the server's machine.

The CLI's ``agent-memory backup`` comes here when a server owns the data dir: only the server may hold its
writes still. The copy runs as a job (after any job before it, under the write lock:
agent_memory/ingest/backup.py), so a large data dir never outlasts a client's timeout; the job's result is
the report. A backup holds every tenant's memory while each API key reaches one tenant, so a server that
requires keys takes it from an admin key alone (AGENT_MEMORY_ADMIN_KEYS, api/deps.py) and refuses a tenant's
key (403, naming how to configure one). The destination is checked before the job is queued (a 400 naming
it and why), so an unusable one is never a job's failure.
"""

from __future__ import annotations

from pathlib import PurePath

from fastapi import APIRouter
from pydantic import Field

from agent_memory.api.deps import AdminDep, StateDep
from agent_memory.api.errors import ApiError
from agent_memory.api.ingestion import accepted
from agent_memory.api.schemas import JobAccepted, error_responses
from agent_memory.api.strict import ClosedBody
from agent_memory.ingest.backup import check_destination, refuse_server_stores
from agent_memory.stores.jobs import JobSpec

router = APIRouter(tags=["upkeep"])


class BackupIn(ClosedBody):
    destination: str = Field(min_length=1, max_length=4096,
                             description="An absolute folder path on the server's machine, new or empty, outside "
                                         "the data dir.")


@router.post("/v1/backup", status_code=202, response_model=JobAccepted,
             responses={**error_responses(400, 401, 403, 422)},
             summary="Copy the data dir, consistently, into a new folder on the server's machine")
def post_backup(body: BackupIn, state: StateDep, caller: AdminDep):
    """Queues a job that copies the embedded data dir (catalog, sessions, vector collections, graph) into
    ``destination`` while writes wait: the copy opens as a data dir as it is. Poll ``GET /v1/jobs/{job_id}``;
    its ``result`` says what the backup holds (``destination``; ``copied``, its files and vector collections;
    ``sources``, ``files`` and ``items`` at the moment of the copy; ``seconds``). On a server that requires API
    keys it needs an admin key (AGENT_MEMORY_ADMIN_KEYS; a tenant's key gets 403: a backup holds every tenant's
    memory), and the job is read back with that key. 400 for a destination that cannot take the copy (not
    empty, no folder, inside the data dir, not writable, a path the system cannot look up), and for a
    deployment whose stores are on servers (the message names each one's own backup tool)."""
    if not PurePath(body.destination).is_absolute():
        raise ApiError(422, "invalid_request", f"destination {body.destination!r} is not an absolute path: give "
                       "the folder's absolute path on the server's machine")
    refuse_server_stores(state.settings)
    check_destination(body.destination, state.services.data_dir)  # said now, not as the job's failure
    spec = JobSpec(tenant=caller.job_owner, kind="backup", source_id="", size=0, params={"destination": body.destination})
    return accepted(state.jobs.submit(spec))
