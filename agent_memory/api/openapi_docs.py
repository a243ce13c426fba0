"""The API's documentation: the app whose ``/docs`` (Swagger UI) and ``/redoc`` pages load their
scripts, styles and icon from this server, and descriptions of the operations whose handlers carry no
docstring of their own (FastAPI takes the docstring as the OpenAPI description), so every operation
in ``/openapi.json`` says what it does, for a client generator and for a model reading the document."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from fastapi_offline import FastAPIOffline

from agent_memory.api.deps import get_tenant
from agent_memory.api.schemas import ErrorOut

# Where the documentation pages' assets are served (the fastapi-offline package ships them): FastAPI's
# own pages load them from a CDN, and on a machine without the internet they stayed blank.
DOCS_ASSETS = "/docs/static"


def documented_app(**kwargs: Any) -> FastAPI:
    """A FastAPI app (``kwargs`` as FastAPI takes them) with ``/docs`` and ``/redoc`` served offline."""
    # validatorUrl: Swagger UI would otherwise send the document to validator.swagger.io for its badge.
    return FastAPIOffline(static_url=DOCS_ASSETS, swagger_ui_parameters={"validatorUrl": None}, **kwargs)

DESCRIPTIONS: dict[tuple[str, str], str] = {
    ("POST", "/v1/documents"): (
        "Ingest one document. JSON (`DocumentIn`): the text is stored under `source_id`; posting the same "
        "ID again replaces that source. Multipart: an uploaded file (.txt .md .html .json .jsonl, records or "
        "a transcript) under `source_id` (default: the file name); forgetting that ID forgets every source "
        "the file held, and re-uploading the same bytes changes nothing. A body above the job threshold is "
        "ingested by a background job: 202 with the job's URL, whose status gives the progress."),
    ("GET", "/v1/jobs/{job_id}"): (
        "A background ingestion job of the caller's tenant: status (queued, running, done, failed), the "
        "stage and units done of total, and when done the same result a direct ingestion returns. An admin "
        "key reads the jobs of the server-wide operations it queued (a backup, a check of every tenant)."),
    ("DELETE", "/v1/sources/{source_id}"): (
        "Forget a source in every store (vectors, graph, catalog), or an uploaded/ingested file and every "
        "source it held. Returns the counts removed; 404 when the tenant holds no such source; 409 "
        "`source_busy`, naming the job, while a job of the tenant that uploads this source (a posted document or "
        "file, by its ID or its client path; an import whose export holds it) is queued or running: it would store the source again after the "
        "delete, so nothing is removed; wait for the job (GET /v1/jobs/{job_id}) and delete again."),
    ("POST", "/v1/sessions/{session_id}/messages"): (
        "Append an OpenAI or Anthropic style chat message to a working-memory session (created on first "
        "use), with a retention class: forgettable, fuzzy (the default) or strict. Returns its sequence "
        "number and the session's counts; significant turns are promoted to long-term memory."),
    ("POST", "/v1/sessions/{session_id}/messages/batch"): (
        "Append several messages to a session in one transaction: all of them or none, no other append "
        "between them (a refused message, named by index, or a store failure stores none). Returns their "
        "sequence numbers and the session's counts."),
    ("GET", "/v1/sessions/{session_id}/view"): (
        "The session's messages for the next model call, compacted to fit `budget` tokens; a pure read."),
    ("POST", "/v1/sessions/{session_id}/compact"): (
        "Compact the session now, as far as its levels allow (summaries replace what can go); returns the "
        "level reached and the session's counts."),
    ("GET", "/v1/sessions/{session_id}/config"): (
        "The session's compaction window and level thresholds, and the share of the window in use."),
    ("PUT", "/v1/sessions/{session_id}/config"): (
        "Change the session's compaction window and level thresholds; fields left out keep their value."),
}


# The refusal of an admin key by every route that reads or writes a tenant's memory (deps.get_tenant).
ADMIN_KEY_REFUSED = {"model": ErrorOut, "description": "An admin key: it reaches no tenant's memory (send the "
                                                      "tenant's API key)"}


def _refusal(description: str) -> dict[str, Any]:
    return {"model": ErrorOut, "description": description}


# What the app's own layers refuse before a route's code runs (app.py), on the routes each reaches.
PATH_NOT_UTF8 = _refusal("A path parameter whose percent-escapes are not UTF-8, or a JSON body that is not "
                         "strict JSON (NaN, Infinity, a lone surrogate) or nests too deep")
BODY_TOO_LARGE = _refusal("Body too large")
NOT_JSON = _refusal("A body sent with another content type, or none")
UNKNOWN_QUERY = _refusal("Invalid request body or parameters, or a query parameter the route does not read")


def describe_operations(router: APIRouter, *, refuses_unknown_query: bool = True) -> APIRouter:
    """Fill in the description of each route that has none: from DESCRIPTIONS, else its summary; and list
    the refusals its route's code does not declare (before the router is included: the app's routes are made
    from these): the 403 of each route that takes the caller's tenant, which an admin key gets, and those of
    the app's own layers (a body over the limit on every route; a path not UTF-8 on a route with a path
    parameter, a JSON body not strict JSON on a POST or PUT; the content type on a route that reads a body;
    an unknown query parameter where ``refuses_unknown_query``, as on every /v1 route)."""
    for route in router.routes:
        if not isinstance(route, APIRoute):
            continue
        if _takes_tenant(route.dependant):
            route.responses.setdefault(403, ADMIN_KEY_REFUSED)
        route.responses.setdefault(413, BODY_TOO_LARGE)
        if route.dependant.path_params or route.methods & {"POST", "PUT", "PATCH"}:
            route.responses.setdefault(400, PATH_NOT_UTF8)
        if route.body_field is not None or "requestBody" in (route.openapi_extra or {}):
            route.responses.setdefault(415, NOT_JSON)
        if refuses_unknown_query:
            route.responses.setdefault(422, UNKNOWN_QUERY)
        if route.description:
            continue
        path = route.path.replace(":path}", "}")
        for method in route.methods:
            text = DESCRIPTIONS.get((method, path))
            if text:
                route.description = text
                break
        else:
            route.description = route.summary or ""
    return router


def _takes_tenant(dependant: Dependant) -> bool:
    return any(sub.call is get_tenant or _takes_tenant(sub) for sub in dependant.dependencies)
