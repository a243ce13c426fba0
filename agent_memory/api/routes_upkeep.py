"""Upkeep over HTTP: counts, the source list, one source's stored state, the expiry pass.

The same views as ``agent-memory stats | list | inspect | gc`` (ingest/upkeep.py), always
within the caller's tenant.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Response

from agent_memory.errors import NotFoundError
from ingest.upkeep import empty_tenant_note, expire, inspect, list_sources, stats

from .deps import StateDep, TenantDep
from .schemas import error_responses

router = APIRouter(tags=["upkeep"])
# A response header, so that typed bodies keep their shape: the caller's tenant holds nothing (other
# tenants are named only when no API key binds callers to their own tenant).
NOTE_HEADER = "X-Agent-Memory-Note"


def _note_if_empty(state, tenant: str, response: Response) -> None:
    note = empty_tenant_note(state.services, tenant, name_others=not state.auth_required)
    if note:
        response.headers[NOTE_HEADER] = note


@router.get("/v1/stats", responses=error_responses(401), summary="Items per kind, sources, expiring soon, graph size")
def get_stats(state: StateDep, tenant: TenantDep, response: Response,
              soon_days: Annotated[float, Query(ge=0, le=3650)] = 1.0) -> dict[str, Any]:
    _note_if_empty(state, tenant, response)
    return stats(state.services, tenant, soon_days=soon_days)[tenant]


@router.get("/v1/sources", responses=error_responses(401, 422), summary="Sources by ID, filtered and paged")
def get_sources(state: StateDep, tenant: TenantDep, response: Response,
                prefix: Annotated[str, Query(max_length=512)] = "",
                kind: Literal["chunk", "summary", "turn"] | None = None,
                offset: Annotated[int, Query(ge=0)] = 0,
                limit: Annotated[int, Query(ge=1, le=1000)] = 50) -> dict[str, Any]:
    rows = list_sources(state.services, tenant, prefix=prefix, kind=kind, offset=offset, limit=limit)
    if not rows:
        _note_if_empty(state, tenant, response)
    return {"offset": offset, "limit": limit, "sources": rows}


@router.get("/v1/sources/{source_id:path}", responses=error_responses(401, 404),
            summary="Everything stored for one source: catalog entry, items, metadata, importance")
def get_source(source_id: str, state: StateDep, tenant: TenantDep) -> dict[str, Any]:
    found = inspect(state.services, tenant, source_id)
    if found is None:
        raise NotFoundError(f"no source {source_id!r} for this tenant")
    return found


@router.post("/v1/gc", responses=error_responses(401, 503), summary="Remove expired items from every store at once")
def post_gc(state: StateDep, tenant: TenantDep) -> dict[str, Any]:
    forget = state.memory.ingestion.forget
    with state.memory.write_lock:
        return {"expired": expire(state.services, forget, tenants=[tenant])}
