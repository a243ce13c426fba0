"""Working memory over HTTP: append a message, a token-bounded view, forced compaction."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from agent_memory.errors import NotFoundError

from .deps import StateDep, TenantDep
from .schemas import CompactOut, MessageIn, MessageOut, ViewOut, error_responses

router = APIRouter(tags=["sessions"])
SessionId = Annotated[str, Path(min_length=1, max_length=256, pattern=r"^[^/]+$", examples=["s1"])]


def _existing(state, tenant: str, session_id: str):
    if not state.session_exists(tenant, session_id):
        raise NotFoundError(f"no session {session_id!r} for this tenant")
    return state.session(tenant, session_id)


def _stats(session, session_id: str) -> dict:
    # The internal key carries the tenant; callers only know their own session ID.
    return {**session.stats(), "session_id": session_id}


@router.post("/v1/sessions/{session_id}/messages", response_model=MessageOut,
             responses=error_responses(400, 401, 422, 503), summary="Append a message to a session")
def append_message(session_id: SessionId, body: MessageIn, state: StateDep, tenant: TenantDep) -> dict:
    session = state.session(tenant, session_id)
    seq = session.append(body.message, retention=body.retention)
    return {"session_id": session_id, "seq": seq, "stats": _stats(session, session_id)}


@router.get("/v1/sessions/{session_id}/view", response_model=ViewOut, responses=error_responses(400, 401, 404, 422),
            summary="The session's messages for the next model call, within a token budget")
def view(session_id: SessionId, state: StateDep, tenant: TenantDep,
         budget: Annotated[int, Query(ge=1, le=1_000_000, examples=[4000])] = 4000) -> dict:
    session = _existing(state, tenant, session_id)
    messages = session.view(budget)
    return {"session_id": session_id, "budget": budget, "tokens": session.count_view(messages),
            "messages": messages}


@router.post("/v1/sessions/{session_id}/compact", response_model=CompactOut,
             responses=error_responses(401, 404, 503), summary="Summarize everything that can go, now")
def compact(session_id: SessionId, state: StateDep, tenant: TenantDep) -> dict:
    session = _existing(state, tenant, session_id)
    tier = session.compact(force=True)
    return {"session_id": session_id, "tier": tier, "stats": _stats(session, session_id)}
