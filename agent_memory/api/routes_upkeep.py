"""Upkeep over HTTP: counts, the source list, one source's stored state, the expiry pass, the stores'
check and repair, and the files recorded under a folder.

The same views as ``agent-memory stats | list | inspect | gc | check`` (agent_memory/ingest/upkeep.py,
agent_memory/ingest/consistency.py), always within the caller's tenant (the check of an admin key: every
tenant); ``GET /v1/files`` is what a folder job through the server asks to find the
files gone from disk (agent_memory/ingest/missing.py).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Response

from agent_memory.api.deps import NO_BODY, CallerDep, StateDep, TenantDep
from agent_memory.api.errors import ApiError
from agent_memory.api.ingestion import accepted, check_tenant_stores, expire_tenant, no_source, write_lock_busy
from agent_memory.api.schemas import error_responses, queued_response
from agent_memory.api.schemas_check import CheckOut
from agent_memory.api.schemas_upkeep import FilesOut, GcOut, SourceOut, SourcesOut, StatsOut, WhoamiOut
from agent_memory.core.limits import INSPECT_TEXT_CHARS, MAX_LIST_LIMIT, MAX_SOON_DAYS
from agent_memory.ingest.missing import files_under
from agent_memory.ingest.ownership import match_sources
from agent_memory.ingest.upkeep import empty_tenant_note, inspect, source_page, stats
from agent_memory.stores.jobs import JobSpec

router = APIRouter(tags=["upkeep"])
# A response header, so that typed bodies keep their shape: the caller's tenant holds nothing (other
# tenants are named only when no API key binds callers to their own tenant).
NOTE_HEADER = "X-Agent-Memory-Note"


def _note_if_empty(state, tenant: str, response: Response) -> None:
    note = empty_tenant_note(state.services, tenant, name_others=not state.auth_required)
    if note:
        response.headers[NOTE_HEADER] = note


@router.get("/v1/whoami", response_model=WhoamiOut, responses=error_responses(401),
            summary="The tenant of the caller's API key")
def whoami(tenant: TenantDep) -> dict[str, Any]:
    """The tenant every call with this key reads and writes (the server's default tenant when it needs
    no key). The CLI asks it before it works through a server, to refuse a --tenant it cannot serve."""
    return {"tenant": tenant}


@router.get("/v1/stats", response_model=StatsOut, responses=error_responses(401, 503),
            summary="Items per kind, sources, expiring soon, graph size")
def get_stats(state: StateDep, tenant: TenantDep, response: Response,
              soon_days: Annotated[float, Query(ge=0, le=MAX_SOON_DAYS, allow_inf_nan=False, description="What 'expiring soon' means, in days.")]
              = 1.0) -> dict[str, Any]:
    """Counts for the caller's tenant: items per kind, sources, items whose time to live ends within
    ``soon_days``, entities and triples in the graph, and the share of triples a newer fact superseded."""
    _note_if_empty(state, tenant, response)
    return stats(state.services, tenant, soon_days=soon_days)[tenant]


@router.get("/v1/sources", response_model=SourcesOut, responses=error_responses(401, 422, 503),
            summary="Sources by ID, filtered and paged")
# With a trailing slash too: "/v1/sources/" would otherwise ask for the source whose ID is "" (a 404).
@router.get("/v1/sources/", response_model=SourcesOut, include_in_schema=False)
def get_sources(state: StateDep, tenant: TenantDep, response: Response,
                prefix: Annotated[str, Query(max_length=512)] = "",
                kind: Literal["chunk", "summary", "turn"] | None = None,
                offset: Annotated[int, Query(ge=0)] = 0,
                limit: Annotated[int, Query(ge=1, le=MAX_LIST_LIMIT)] = 50) -> dict[str, Any]:
    """The tenant's sources in source-ID order, each with its kinds, item count and oldest item time;
    ``prefix`` keeps IDs starting with it, ``kind`` those holding items of that kind. ``total`` counts every
    source the filter matches; ``next_offset`` is the next page's offset (null on the last page)."""
    page = source_page(state.services, tenant, prefix=prefix, kind=kind, offset=offset, limit=limit)
    if not page["sources"]:
        _note_if_empty(state, tenant, response)
    return page


@router.get("/v1/files", response_model=FilesOut, responses=error_responses(401, 422, 503),
            summary="Ingested files whose recorded path lies under a folder")
def get_files(state: StateDep, tenant: TenantDep,
              under: Annotated[str, Query(max_length=4096, description="An absolute folder path.")],
              offset: Annotated[int, Query(ge=0)] = 0,
              limit: Annotated[int, Query(ge=1, le=MAX_LIST_LIMIT)] = MAX_LIST_LIMIT) -> dict[str, Any]:
    """The tenant's ingested files whose manifest records a path under the folder ``under`` (a local
    ingestion's absolute path, or an upload's ``client_path``), by file ID, paged. The CLI asks it for a
    folder job through the server that owns its data dir: it checks each path on its own disk and forgets
    the files gone from it (DELETE /v1/sources/{file_id}), so memory mirrors the folder as after a local job."""
    try:
        rows = files_under(state.services.catalog, tenant, under)
    except ValueError as exc:
        raise ApiError(422, "invalid_request", f"under: {exc}") from None
    return {"under": under, "offset": offset, "limit": limit, "files": rows[offset:offset + limit]}


@router.get("/v1/sources/{source_id:path}", response_model=SourceOut, responses=error_responses(401, 404, 503),
            response_model_exclude_unset=True,  # file_sources only for a file's ID
            summary="Everything stored for one source: catalog entry, items, metadata, importance")
def get_source(source_id: str, state: StateDep, tenant: TenantDep,
               full: Annotated[bool, Query(description="Each item's whole text instead of its first "
                                                       f"{INSPECT_TEXT_CHARS} characters.")] = False) -> dict[str, Any]:
    """One source as stored: its catalog entry (kind, content hash, title, owning items) and its items
    with their metadata; each item's text cut at 300 characters unless ``full`` (``chars`` is its whole
    length, ``text_truncated`` says whether it was cut). A file's ID that is no source itself (a JSON or
    JSONL file of records) gives the file: its manifest, and ``file_sources``, each source it holds with its
    items count. 404 for a source the tenant does not hold."""
    # Named as forget takes it: an ID, its ./ spelling, or the ingested (or uploaded) file's absolute path.
    # The catalog names them; a source it lost is still read from the vectors under the ID given. Not the
    # graph, which forget also asks: a read must answer while Neo4j is away (inspect reads no graph).
    named = [*match_sources(state.services.catalog, tenant, source_id), source_id]
    found = next(filter(None, (inspect(state.services, tenant, sid, full=full) for sid in named)), None)
    if found is None:
        raise no_source(state, tenant, source_id)
    return found


@router.post("/v1/gc", response_model=GcOut, dependencies=[NO_BODY],
             responses={**queued_response("the pass"), **error_responses(401, 422, 503)},
             summary="Remove expired items from every store at once")
def post_gc(state: StateDep, tenant: TenantDep):
    """The expiry pass for the caller's tenant: every source holding an item past its time to live
    (AGENT_MEMORY_TTL_DAYS) is forgotten in every store; returns what was removed."""
    if write_lock_busy(state):
        return accepted(state.jobs.submit(JobSpec(tenant=tenant, kind="gc", source_id="", size=0)))
    return expire_tenant(state, tenant)


@router.post("/v1/check", response_model=CheckOut, response_model_exclude_unset=True,  # repair only with repair=true
             dependencies=[NO_BODY], responses={**queued_response("the check"), **error_responses(401, 422, 503)},
             summary="Whether the catalog, the vectors and the graph agree; repair=true mends what it can")
def post_check(state: StateDep, caller: CallerDep,
               repair: Annotated[bool, Query(description="Remove what the catalog does not know from the vectors and "
                                                         "the graph, mark sources whose items are missing to be "
                                                         "ingested again, extract missing facts again.")] = False,
               adopt: Annotated[bool, Query(description="With repair: record what the catalog does not know in it "
                                                        "instead of removing it.")] = False):
    """The caller's tenant, checked across the three stores (``agent-memory check``): sources the vectors or
    the graph hold that the catalog does not know, catalog sources whose items or facts are missing, a store
    empty beside a catalog that records data. A POST: it holds the write lock (no write lands between what it
    compares), and with ``repair`` it writes. A tenant whose catalog records nothing while the stores hold its
    data is refused a removal (restore a backup, or ``adopt``). An admin key (AGENT_MEMORY_ADMIN_KEYS) checks
    every tenant any store holds, as ``agent-memory check`` does on the data dir."""
    if adopt and not repair:
        raise ApiError(422, "invalid_request", "adopt=true goes with repair=true")
    tenant = None if caller.admin else caller.tenant
    if write_lock_busy(state):
        return accepted(state.jobs.submit(JobSpec(tenant=caller.job_owner, kind="check", source_id="", size=0,
                                                  params={"repair": repair, "adopt": adopt,
                                                          "every_tenant": tenant is None})))
    return check_tenant_stores(state, tenant, repair=repair, adopt=adopt)
