"""The FastAPI app: ``create_app(settings)`` builds one app with its own services.

Settings come from the ``load_settings()`` factory when the app is created, never at import
time; the services are built once in the lifespan and closed on shutdown. The model and the
stores warm up in a background thread so ``/healthz`` answers at once and ``/readyz`` says
503 until memory can actually be queried.
"""

from __future__ import annotations

import threading
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from agent_memory.api import (
    routes_ask,
    routes_backup,
    routes_documents,
    routes_export,
    routes_health,
    routes_sessions,
    routes_tenants,
    routes_upkeep,
)
from agent_memory.api.deps import KNOWN_QUERY
from agent_memory.api.errors import install_error_handlers
from agent_memory.api.http_edges import HeadAsGet, Utf8Path
from agent_memory.api.limits import MAX_BODY_BYTES, BodyLimit
from agent_memory.api.openapi_docs import describe_operations, documented_app
from agent_memory.api.routes_health import STATIC
from agent_memory.api.state import MAX_UPLOAD_BYTES, ApiState
from agent_memory.api.strict import Contain, StrictJson
from agent_memory.core.config import Settings, load_settings
from agent_memory.core.version import __version__
from agent_memory.ingest.upgrade import open_services

DESCRIPTION = """Long memory for LLM agents: ingest documents, keep working memory per session, and ask
questions answered from a token-bounded prompt with `[S:id]` citations.

Authentication: send `X-API-Key: <key>` or `Authorization: Bearer <key>`. A key is required whenever
keys are configured (`AGENT_MEMORY_API_KEYS`) or the server listens on anything but loopback; each
key is bound to one tenant, and every read and write is scoped to it. Admin keys
(`AGENT_MEMORY_ADMIN_KEYS`) run the server-wide operations (`POST /v1/backup`, `POST /v1/check` over every
tenant) and reach no tenant's memory.

Errors are JSON: `{"error": {"code": "...", "message": "..."}}`.

Scores: a passage's `score` is the reranker's raw score (higher is better, unbounded, may be
negative); `relevance` (and `score` in /v1/search and the MCP tools) is that score in 0..1, its
logistic: 0.5 is as good as the question's average candidate, 0.9 about 2.2 standard deviations above."""


def create_app(settings: Settings | None = None, *, warm: bool = True,
               job_threshold_bytes: int | None = None, max_upload_bytes: int = MAX_UPLOAD_BYTES,
               max_body_bytes: int = MAX_BODY_BYTES) -> FastAPI:
    settings = settings or load_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        services = open_services(settings)
        try:
            state = ApiState(settings, services, job_threshold_bytes=job_threshold_bytes,
                             max_upload_bytes=max_upload_bytes)
        except Exception:
            services.close()
            raise
        app.state.api = state
        # Promotion of significant messages runs off the request path (a queue, like big documents).
        state.memory.working_memory.background = True
        if warm:
            threading.Thread(target=state.warm_up, name="warm-up", daemon=True).start()
        else:
            state.warm_done.set()
            state.resume_jobs()
        try:
            yield
        finally:
            state.close()

    app = documented_app(title="agent-memory", version=__version__, description=DESCRIPTION, lifespan=lifespan)
    install_error_handlers(app)
    app.add_middleware(StrictJson)  # 400 for NaN/Infinity/lone surrogates/deep nesting in a JSON body
    # 413 on every endpoint (documents and imports: the upload limit), before the strict JSON check reads a body
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes, upload_bytes=max_upload_bytes)
    app.add_middleware(HeadAsGet)  # HEAD /healthz and every GET route, as load balancers send it
    app.add_middleware(Utf8Path)  # 400 for %ff in a path: never two IDs decoded to one '\ufffd'
    app.add_middleware(Contain)  # a panic in native code fails its own request only
    # Liveness, readiness and the debug page (whose own ?q= fills its form) take no options to misspell, and a
    # probe's cache-busting parameter must not fail them; every /v1 route refuses a parameter it does not read.
    app.include_router(describe_operations(routes_health.router, refuses_unknown_query=False))
    for routes in (routes_documents, routes_sessions, routes_ask, routes_upkeep, routes_export, routes_backup,
                   routes_tenants):
        app.include_router(describe_operations(routes.router), dependencies=[KNOWN_QUERY])
    app.mount("/debug/static", StaticFiles(directory=STATIC), name="debug-static")
    return app
