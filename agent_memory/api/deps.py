"""Dependencies: the app's state and the caller's tenant (from the API key, never from the body)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request, Security
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from agent_memory.api.errors import ApiError
from agent_memory.api.state import ApiState, tenant_for_key

_api_key_header = APIKeyHeader(name="X-API-Key", auto_error=False, description="API key bound to a tenant.")
_bearer = HTTPBearer(auto_error=False, description="The same API key as a Bearer token.")


def get_state(request: Request) -> ApiState:
    return request.app.state.api


StateDep = Annotated[ApiState, Depends(get_state)]


def get_tenant(state: StateDep, request: Request,
               api_key: Annotated[str | None, Security(_api_key_header)] = None,
               bearer: Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)] = None) -> str:
    """The tenant bound to the caller's key; the default tenant when the server needs no key."""
    key = api_key or (bearer.credentials if bearer else None)
    if not state.auth_required:
        return state.settings.tenant
    if not key:
        # Another scheme (Basic, Token ...) is not a missing key: say which one came instead.
        scheme = request.headers.get("authorization", "").split(" ", 1)[0]
        sent = f"; got an Authorization header of scheme {scheme[:40]!r}" if scheme else ""
        raise ApiError(401, "unauthorized", f"an API key is required (X-API-Key or Authorization: Bearer){sent}",
                       {"WWW-Authenticate": "Bearer"})
    tenant = tenant_for_key(state.api_keys, key)
    if tenant is None:
        raise ApiError(401, "unauthorized", "invalid API key", {"WWW-Authenticate": "Bearer"})
    return tenant


TenantDep = Annotated[str, Depends(get_tenant)]
