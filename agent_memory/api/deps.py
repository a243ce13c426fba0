"""Dependencies: the app's state and the caller (from the API key, never from the body): a tenant's key reaches
that tenant's memory alone; an admin key (AGENT_MEMORY_ADMIN_KEYS) the server-wide operations alone (a backup,
a check over every tenant, a tenant's removal, their jobs), no tenant's memory, so that holding one never means
reading a tenant's notes through the routes a tenant key uses."""

from __future__ import annotations

import difflib
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from types import UnionType
from typing import Annotated, Union, get_args, get_origin
from urllib.parse import urlencode

from fastapi import Depends, Request, Security
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from agent_memory.api.errors import ApiError
from agent_memory.api.state import ApiState, is_admin_key, tenant_for_key

_api_key_header = APIKeyHeader(name="X-API-Key", auto_error=False, description="API key bound to a tenant.")
_bearer = HTTPBearer(auto_error=False, description="The same API key as a Bearer token.")


def get_state(request: Request) -> ApiState:
    return request.app.state.api


StateDep = Annotated[ApiState, Depends(get_state)]


# The job records of the server-wide operations an admin key queues: '/' is in no tenant's name, so no tenant
# key ever reads them (GET /v1/jobs/{id} answers a job to the tenant that queued it).
ADMIN_JOBS = "/admin"
ADMIN_KEY_FIX = ("set AGENT_MEMORY_ADMIN_KEYS on the server (a comma-separated list of long random keys, e.g. "
                 "`openssl rand -hex 32`) and send one of them as X-API-Key or Authorization: Bearer (the CLI sends "
                 "AGENT_MEMORY_ADMIN_KEY)")


@dataclass(frozen=True)
class Caller:
    """Who a request comes from: a tenant's key (``tenant``), an admin key (``admin``: the server-wide
    operations, no tenant's memory), or anyone where the server needs no key (the default tenant)."""

    tenant: str | None
    admin: bool = False

    @property
    def job_owner(self) -> str:
        """The tenant the caller's jobs are recorded under (and read back by)."""
        return self.tenant if self.tenant is not None else ADMIN_JOBS


def get_caller(state: StateDep, request: Request,
               api_key: Annotated[str | None, Security(_api_key_header)] = None,
               bearer: Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)] = None) -> Caller:
    """The caller's key read: a tenant's, an admin's, or none needed (the server's default tenant)."""
    key = api_key or (bearer.credentials if bearer else None)
    if not state.auth_required:
        return Caller(state.settings.tenant)
    if not key:
        # Another scheme (Basic, Token ...) is not a missing key: say which one came instead.
        scheme = request.headers.get("authorization", "").split(" ", 1)[0]
        sent = f"; got an Authorization header of scheme {scheme[:40]!r}" if scheme else ""
        raise ApiError(401, "unauthorized", f"an API key is required (X-API-Key or Authorization: Bearer){sent}",
                       {"WWW-Authenticate": "Bearer"})
    if is_admin_key(state.admin_keys, key):
        return Caller(None, admin=True)
    tenant = tenant_for_key(state.api_keys, key)
    if tenant is None:
        raise ApiError(401, "unauthorized", "invalid API key", {"WWW-Authenticate": "Bearer"})
    return Caller(tenant)


CallerDep = Annotated[Caller, Depends(get_caller)]


def get_tenant(caller: CallerDep, request: Request) -> str:
    """The tenant bound to the caller's key; the default tenant when the server needs no key. An admin key
    is no tenant's key: 403 on every route that reads or writes a tenant's memory."""
    if caller.tenant is None:
        raise ApiError(403, "forbidden", f"{request.method} {request.url.path} reads or writes a tenant's memory, "
                       "and an admin key reaches none (it runs the server-wide operations: POST /v1/backup, POST "
                       "/v1/check over every tenant, DELETE /v1/tenants/{tenant}): send the tenant's API key "
                       "(AGENT_MEMORY_API_KEYS)")
    return caller.tenant


TenantDep = Annotated[str, Depends(get_tenant)]


def get_admin(caller: CallerDep, state: StateDep, request: Request) -> Caller:
    """The caller of a server-wide operation: an admin key, or anyone where the server needs no key (as
    before admin keys). A tenant's key is refused: 403 naming how to configure an admin key."""
    if caller.admin or not state.auth_required:
        return caller
    raise ApiError(403, "forbidden", f"{request.method} {request.url.path} works on every tenant's memory, and this "
                   f"API key reaches one tenant ({caller.tenant!r}): it needs an admin key; {ADMIN_KEY_FIX}")


AdminDep = Annotated[Caller, Depends(get_admin)]


# ---- routes whose options are query parameters: a body would be ignored, so it is refused ----------------
_EMPTY_BODY = re.compile(rb"\s*(\{\s*\})?\s*")  # nothing, or {}: nothing that could be taken for an option


async def refuse_body(request: Request) -> None:
    """422 for a request that carries a body to a route that reads none. ``POST /v1/check`` with
    ``{"repair": true}`` once answered 200 without repairing: the body was ignored, and its sender believed it
    repaired. These routes take their options as query parameters, as every route that takes no document does
    (DELETE /v1/sources?prefix=, DELETE /v1/sessions/{id}?forget=true); a second spelling in the body would
    leave open which wins when both are sent. The refusal names the query parameters, and the body's options
    as a query string when it held them."""
    body = await request.body()
    if _EMPTY_BODY.fullmatch(body):
        return
    route = request.scope.get("route")
    names = _query_names(route.dependant) if route is not None else []
    where = f"{request.method} {request.url.path}"
    if not names:
        raise ApiError(422, "invalid_request", f"{where} takes no body and no options: send it without a body "
                       "(nothing was done)")
    raise ApiError(422, "invalid_request", f"{where} takes no body: its options are query parameters ("
                   f"{', '.join(names)}), e.g. {request.url.path}?{_as_query(body, names)} (nothing was done)")


def _query_names(dependant) -> list[str]:
    """The query parameters a route reads, its dependencies' included, in order."""
    return list(_query_fields(dependant))


def _query_fields(dependant) -> dict[str, object]:
    """The query parameters a route reads (name: field), its dependencies' included, in order."""
    fields = {field.alias: field for field in dependant.query_params}
    for inner in dependant.dependencies:
        for name, field in _query_fields(inner).items():
            fields.setdefault(name, field)
    return fields


# ---- every /v1 route: a query parameter it does not read is refused, not ignored -------------------------
MAX_NAMES_SHOWN = 5
MAX_NAME_CHARS = 40


async def refuse_unknown_query(request: Request) -> None:
    """422 for a query parameter the route does not read, or a one-value parameter given more than once.
    ``DELETE /v1/sessions/s1?froget=true`` once deleted the session and kept its archived turns, answering 200:
    its sender believed everything forgotten. As for a body's unknown key (``strict.ClosedBody``) the refusal
    names the unknown parameters (never their values) and the ones the route takes, and nothing is done: it
    runs before any other dependency, the API key's check included, as the body refusal does."""
    route = request.scope.get("route")
    if route is None or not request.query_params:
        return
    fields = _query_fields(route.dependant)
    given = Counter(name for name, _ in request.query_params.multi_items())
    where = f"{request.method} {_cut(request.url.path, 200)}"
    takes = ("it takes no query parameters" if not fields else f"it takes the query parameter{'s' * (len(fields) > 1)} "
             f"{', '.join(fields)}")
    unknown = [name for name in given if name not in fields]
    if unknown:
        close = difflib.get_close_matches(unknown[0], list(fields), n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        what = "an unknown query parameter" if len(unknown) == 1 else f"{len(unknown)} unknown query parameters"
        raise ApiError(422, "invalid_request", f"{where} got {what}: {_names(unknown)}{hint}; {takes} "
                       "(nothing was done)")
    repeated = [name for name, count in given.items() if count > 1 and not _takes_many(fields[name])]
    if repeated:
        raise ApiError(422, "invalid_request", f"{where} got {_names(repeated)} more than once, and "
                       f"{'it takes' if len(repeated) == 1 else 'each takes'} one value: send it once "
                       "(nothing was done)")


def _names(names: list[str]) -> str:
    shown = ", ".join(repr(_cut(name, MAX_NAME_CHARS)) for name in names[:MAX_NAMES_SHOWN])
    more = len(names) - MAX_NAMES_SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _takes_many(field) -> bool:
    """Whether a query parameter is a list (``?tag=a&tag=b``), whose repetitions are its values."""
    annotation = field.field_info.annotation
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    options = get_args(annotation) if get_origin(annotation) in (Union, UnionType) else (annotation,)
    for option in options:
        origin = get_origin(option) or option
        if isinstance(origin, type) and issubclass(origin, (list, tuple, set, frozenset, Sequence)) \
                and not issubclass(origin, (str, bytes)):
            return True
    return False


KNOWN_QUERY = Depends(refuse_unknown_query)


def _as_query(body: bytes, names: list[str]) -> str:
    """The options a JSON body held, as the query string that says them; else the first option, unset."""
    try:
        given = json.loads(body)
    except (ValueError, RecursionError):
        given = None
    if isinstance(given, dict):
        known = {k: v for k, v in given.items() if k in names and isinstance(v, (bool, int, float, str))}
        if known:
            return urlencode({k: str(v).lower() if isinstance(v, bool) else v for k, v in known.items()})
    return f"{names[0]}=..."


NO_BODY = Depends(refuse_body)
