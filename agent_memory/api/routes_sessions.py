"""Working memory over HTTP: append a message or a batch of them (all or none), a token-bounded view,
compaction, per-session settings, listing and deleting sessions (optionally forgetting their archived turns).

Every route takes ``agent_id`` (a query parameter): a sub-agent's history and compaction
state are its own, under the same session ID.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query
from pydantic import AfterValidator

from agent_memory.api.deps import NO_BODY, StateDep, TenantDep
from agent_memory.api.ingestion import accepted, write_lock_busy
from agent_memory.api.schemas import error_responses, queued_response
from agent_memory.api.schemas_sessions import (
    CompactOut,
    MessageIn,
    MessageOut,
    MessagesAppendedOut,
    MessagesIn,
    MessagesOut,
    SessionConfigIn,
    SessionConfigOut,
    SessionDeletedOut,
    SessionsOut,
    ViewOut,
)
from agent_memory.conversation.message_validation import check_session_id
from agent_memory.core.errors import NotFoundError
from agent_memory.core.limits import MAX_LIST_LIMIT
from agent_memory.core.names import SESSION_ID_PATTERN
from agent_memory.stores.jobs import JobSpec

router = APIRouter(tags=["sessions"])


# The checks every surface makes (blank, control characters: conversation/message_validation.py), as a 422
# naming the rule; the schema states them as a pattern.
SessionId = Annotated[str, Path(min_length=1, max_length=256, pattern=r"^[^/]+$", examples=["s1"],
                                json_schema_extra={"pattern": SESSION_ID_PATTERN}),
                      AfterValidator(check_session_id)]
AgentId = Annotated[str | None, Query(min_length=1, max_length=256, examples=["researcher"],
                                      description="A sub-agent of the session; omitted: the main agent.")]


def _existing(state, tenant: str, session_id: str, agent_id: str | None, *, configured: bool = False):
    """The session, or a 404 when it holds no message (``configured``: nor settings of its own, so that a
    config set before the first message reads back)."""
    if not (state.working_memory.exists(tenant, session_id, agent_id)
            or (configured and state.memory.session_configured(session_id, agent_id=agent_id, tenant=tenant))):
        who = f" (agent {agent_id!r})" if agent_id else ""
        raise NotFoundError(f"no session {session_id!r}{who} for this tenant")
    return state.working_memory.session(tenant, session_id, agent_id)


def _stats(session, session_id: str) -> dict:
    # The internal key carries the tenant; callers only know their own session ID.
    return {**session.stats(), "session_id": session_id}


@router.post("/v1/sessions/{session_id}/messages", response_model=MessageOut,
             responses=error_responses(400, 401, 422, 503), summary="Append a message to a session")
def append_message(session_id: SessionId, body: MessageIn, state: StateDep, tenant: TenantDep,
                   agent_id: AgentId = None) -> dict:
    state.memory.check_space("a session append")  # 503 on a nearly full disk, before any write
    session = state.working_memory.session(tenant, session_id, agent_id)
    seq = session.append(body.message, retention=body.retention)
    return {"session_id": session_id, "agent_id": agent_id, "seq": seq, "stats": _stats(session, session_id)}


@router.post("/v1/sessions/{session_id}/messages/batch", response_model=MessagesAppendedOut,
             responses=error_responses(400, 401, 422, 503), summary="Append messages to a session, all or none")
def append_messages(session_id: SessionId, body: MessagesIn, state: StateDep, tenant: TenantDep,
                    agent_id: AgentId = None) -> dict:
    state.memory.check_space("a session append")
    session = state.working_memory.session(tenant, session_id, agent_id)
    # One transaction under the session's lock (Session.append_batch): a refused message, a store failure or
    # another request's append leaves none of the batch stored, where appending one by one kept the first.
    seqs = session.append_batch([m.message for m in body.messages], retention=[m.retention for m in body.messages])
    return {"session_id": session_id, "agent_id": agent_id, "seqs": seqs, "stats": _stats(session, session_id)}


@router.get("/v1/sessions/{session_id}/view", response_model=ViewOut, responses=error_responses(400, 401, 404, 422, 503),
            summary="The session's messages for the next model call, within a token budget (a pure read)")
def view(session_id: SessionId, state: StateDep, tenant: TenantDep,
         budget: Annotated[int, Query(ge=1, le=1_000_000, examples=[4000])] = 4000, agent_id: AgentId = None) -> dict:
    session = _existing(state, tenant, session_id, agent_id)
    messages = session.view(budget)
    return {"session_id": session_id, "agent_id": agent_id, "budget": budget, "tokens": session.count_view(messages),
            "messages": messages}


@router.get("/v1/sessions/{session_id}/messages", response_model=MessagesOut,
            responses=error_responses(400, 401, 404, 422, 503),
            summary="The session's messages as appended, compaction notwithstanding (a pure read)")
def messages(session_id: SessionId, state: StateDep, tenant: TenantDep, agent_id: AgentId = None,
             offset: Annotated[int, Query(ge=0)] = 0,
             limit: Annotated[int, Query(ge=1, le=MAX_LIST_LIMIT)] = MAX_LIST_LIMIT) -> dict:
    """Every message of the session (of this agent) in order, each with its ``seq``, its ``timestamp``, its
    retention class and its compaction ``status``: the raw history, where ``view`` gives the compacted window.
    Paged by ``offset`` and ``limit``; ``total`` and ``next_offset`` say what is left."""
    rows = state.memory.messages(session_id, agent_id=agent_id, tenant=tenant)
    following = offset + limit
    return {"session_id": session_id, "agent_id": agent_id, "offset": offset, "limit": limit, "total": len(rows),
            "next_offset": following if following < len(rows) else None, "messages": rows[offset:following]}


@router.post("/v1/sessions/{session_id}/compact", response_model=CompactOut, dependencies=[NO_BODY],
             responses=error_responses(401, 404, 422, 503), summary="Summarize everything that can go, now")
def compact(session_id: SessionId, state: StateDep, tenant: TenantDep, agent_id: AgentId = None) -> dict:
    session = _existing(state, tenant, session_id, agent_id)
    tier = session.compact(force=True)
    return {"session_id": session_id, "agent_id": agent_id, "tier": tier, "stats": _stats(session, session_id)}


@router.get("/v1/sessions/{session_id}/config", response_model=SessionConfigOut,
            responses=error_responses(401, 404, 503), summary="The session's compaction window and level thresholds")
def get_config(session_id: SessionId, state: StateDep, tenant: TenantDep, agent_id: AgentId = None) -> dict:
    session = _existing(state, tenant, session_id, agent_id, configured=True)
    return {"session_id": session_id, "agent_id": agent_id, "config": session.config.as_dict(),
            "utilization": session.utilization()}


@router.put("/v1/sessions/{session_id}/config", response_model=SessionConfigOut,
            responses=error_responses(400, 401, 422, 503),
            summary="Change the session's compaction window and level thresholds (stored with the session)")
def put_config(session_id: SessionId, body: SessionConfigIn, state: StateDep, tenant: TenantDep,
               agent_id: AgentId = None) -> dict:
    session = state.working_memory.session(tenant, session_id, agent_id)
    config = session.configure(**body.model_dump(exclude_unset=True))  # a ValueError is a 400
    return {"session_id": session_id, "agent_id": agent_id, "config": config.as_dict(),
            "utilization": session.utilization()}


@router.get("/v1/sessions", response_model=SessionsOut, responses=error_responses(401, 503),
            summary="The tenant's working-memory sessions")
def list_sessions(state: StateDep, tenant: TenantDep) -> dict:
    return {"sessions": state.memory.sessions(tenant=tenant)}


@router.delete("/v1/sessions/{session_id}", response_model=SessionDeletedOut, dependencies=[NO_BODY],
               responses={**queued_response("the delete (a pending archive pass of the session waits for that lock)"),
                          **error_responses(401, 404, 422, 503)},
               summary="Delete a session (every agent); forget=true also forgets its archived turns")
def delete_session(session_id: SessionId, state: StateDep, tenant: TenantDep,
                   forget: Annotated[bool, Query(description="Also remove the session's turns from long-term "
                                                             "memory (sources <session_id>/m<seq>).")] = False):
    if write_lock_busy(state):
        return accepted(state.jobs.submit(JobSpec(tenant=tenant, kind="delete_session", source_id=session_id,
                                                  size=0, params={"session_id": session_id, "forget": forget})))
    return state.memory.delete_session(session_id, forget_archived=forget, tenant=tenant)
