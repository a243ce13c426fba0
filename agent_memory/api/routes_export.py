"""The export of the caller's tenant as JSON Lines (``GET /v1/export``): what ``agent-memory export`` writes,
streamed (``memory/export_lines.py`` says what each line holds). Only the API key's tenant, ever."""

from __future__ import annotations

import json

from fastapi import APIRouter
from fastapi.responses import StreamingResponse

from agent_memory.api.deps import StateDep, TenantDep
from agent_memory.api.schemas import error_responses
from agent_memory.api.schemas_bulk import EXPORT_LINES_DOC

router = APIRouter(tags=["upkeep"])
MEDIA_TYPE = "application/x-ndjson"


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
