"""``DELETE /v1/tenants/{tenant}``: an operator removes a tenant with an admin key.

A tenant's own key removes its tenant (``DELETE /v1/tenant``); a customer being off-boarded who lost that key
could not be removed through the server at all, and an admin key (AGENT_MEMORY_ADMIN_KEYS, api/deps.py) reaches
no tenant's memory by any other route. This one removes everything the named tenant holds (its sessions and
their archived turns, sources, items, triples, catalog records, the records of its finished jobs) in one
request, or in one job queued behind a running one, and nothing of another tenant. A tenant's key is refused
(403), a name no tenant may have is a 422 naming it, a tenant no store holds a 404 naming it, and a tenant
with jobs queued or running a 409 (what they stored after the removal would stay): nothing is removed then.
The removal is logged with its counts (``ingestion.remove_tenant``).
"""

from __future__ import annotations

import difflib

from fastapi import APIRouter

from agent_memory.api import ingestion
from agent_memory.api.deps import NO_BODY, AdminDep, StateDep
from agent_memory.api.errors import ApiError
from agent_memory.api.ingestion import accepted, write_lock_busy
from agent_memory.api.schemas import error_responses, queued_response
from agent_memory.api.schemas_bulk import TenantForgottenOut
from agent_memory.core.names import TENANT_RULE, refusal, tenant_problem
from agent_memory.ingest.consistency import tenants_held
from agent_memory.stores.jobs import JobSpec

router = APIRouter(tags=["upkeep"])


# ``:path``: a name holding '/' reaches the route and is refused by the tenant rule (422), not by the router (404).
@router.delete("/v1/tenants/{tenant:path}", response_model=TenantForgottenOut, dependencies=[NO_BODY],
               responses={**queued_response("the removal"), **error_responses(401, 403, 404, 409, 422, 503)},
               summary="Remove a tenant and everything it holds, with an admin key")
def delete_any_tenant(tenant: str, state: StateDep, caller: AdminDep):
    """Every session (all agents' messages, settings and archived turns), every source, item, triple and catalog
    record of ``tenant``, in every store, and the records of its finished jobs; nothing of another tenant. On a
    server that requires API keys it needs an admin key (AGENT_MEMORY_ADMIN_KEYS; a tenant's key gets 403: it
    removes its own tenant with ``DELETE /v1/tenant``). 422 for a name no tenant may have (a data dir written
    before the tenant rule keeps its old names removable), 404 for a tenant no store holds, 409 while the tenant
    has jobs queued or running; nothing is removed then. The tenant's API key stays configured: remove it from
    AGENT_MEMORY_API_KEYS, or the key's holder writes into an empty tenant again."""
    problem = tenant_problem(tenant)
    held = state.memory.holds_tenant(tenant) if tenant else False
    if problem is not None and not held:
        raise ApiError(422, "invalid_request", refusal(TENANT_RULE, tenant, problem))
    if not held:
        raise ApiError(404, "not_found", f"no tenant {tenant!r}: no store holds data of it{_similar(state, tenant)}"
                                         " (nothing was removed)")
    ingestion.refuse_busy_tenant(state, tenant)
    by = "an admin key" if caller.admin else "a caller of a server that requires no key"
    if write_lock_busy(state):
        return accepted(state.jobs.submit(JobSpec(tenant=caller.job_owner, kind="forget_tenant", source_id="",
                                                  size=0, params={"tenant": tenant, "by": by})))
    return ingestion.remove_tenant(state, tenant, by=by)


def _similar(state, tenant: str) -> str:
    """The held tenant names like ``tenant``, as a hint (the operator sees every tenant: ``POST /v1/check``)."""
    close = difflib.get_close_matches(tenant, tenants_held(state.services), n=3, cutoff=0.6)
    return f"; tenants with similar names: {', '.join(map(repr, close))}" if close else ""
