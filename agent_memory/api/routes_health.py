"""Liveness, readiness and the debug page."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, JSONResponse

from agent_memory.api.deps import StateDep
from agent_memory.api.errors import error_body
from agent_memory.api.schemas import error_responses
from agent_memory.api.schemas_upkeep import ReadyOut, StatusOut
from agent_memory.core.version import __version__

router = APIRouter(tags=["health"])
STATIC = Path(__file__).resolve().parent / "static"


@router.get("/healthz", response_model=StatusOut, summary="The process is up")
def healthz() -> dict:
    """Liveness: 200 as soon as the process answers, before the model or the stores are ready."""
    return {"status": "ok", "version": __version__}


@router.get("/readyz", response_model=ReadyOut, responses=error_responses(503),
            summary="Stores reachable and the model loaded")
def readyz(state: StateDep):
    """Readiness: 200 once the model is loaded and every store answers; 503 with each check's reason
    until then (a load balancer sends traffic only to a ready replica)."""
    checks = state.readiness()
    failed = {name: value for name, value in checks.items() if value != "ok"}
    if failed:
        message = "; ".join(f"{name}: {value}" for name, value in failed.items())
        return JSONResponse({**error_body("not_ready", message), "checks": checks, "version": __version__},
                            status_code=503)
    return {"status": "ready", "checks": checks, "version": __version__}


@router.get("/debug", include_in_schema=False)
def debug_page() -> FileResponse:
    return FileResponse(STATIC / "debug.html", media_type="text/html")
