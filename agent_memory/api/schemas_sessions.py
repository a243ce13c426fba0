"""Request and response bodies of the working-memory routes (``routes_sessions.py``): messages, views,
compaction, per-session settings, listing and deleting sessions (with the examples the OpenAPI page shows);
request bodies are ``ClosedBody`` (api/strict.py): an unknown key is a 422 naming it.

Its own file because sessions are a resource of their own, shared with the MCP tools
(``mcp_server/tools.py``), and these bodies need nothing from the other routes' schemas.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from agent_memory.api.strict import ClosedBody
from agent_memory.conversation.message_validation import KEYS, ROLES

# What the schema can say of every message (conversation/message_validation.py checks the rest, a 400 naming
# it): a role of ROLES, and no key that no role may carry.
_MESSAGE_SCHEMA = {"required": ["role"], "additionalProperties": False, "properties": {
    "role": {"enum": list(ROLES)}, **{key: {} for key in sorted(set().union(*KEYS.values()) - {"role"})}}}


class MessageIn(ClosedBody):
    model_config = ConfigDict(json_schema_extra={"examples": [{
        "message": {"role": "user", "content": "Order 40 units of the X-300."}, "retention": "strict"}]})

    message: dict[str, Any] = Field(description=(
        "An OpenAI or Anthropic style chat message (role, content ...). Optional: `name` (the speaker, else the "
        "role) and `timestamp` (ISO 8601 or Unix seconds; default now), the turn's time in long-term memory: "
        "date headings, time windows, supersession, TTL. A bad timestamp is a 400 naming it. An undated message "
        "in a session replaying its history takes the time of the dated message after it (`timestamp_inferred` "
        "on its archived turn)."),
        json_schema_extra=_MESSAGE_SCHEMA)
    retention: Literal["forgettable", "fuzzy", "strict"] | None = Field(
        default=None, description="Retention class; unclassified messages count as 'fuzzy'.")


class MessageOut(BaseModel):
    session_id: str
    agent_id: str | None = None
    seq: int
    stats: dict[str, Any]


class MessagesIn(ClosedBody):
    model_config = ConfigDict(json_schema_extra={"examples": [{"messages": [
        {"message": {"role": "user", "content": "Order 40 units of the X-300."}, "retention": "strict"},
        {"message": {"role": "assistant", "content": "Ordered: 40 X-300 units."}}]}]})

    messages: list[MessageIn] = Field(min_length=1, description=(
        "The messages in order, each as `POST /v1/sessions/{id}/messages` takes one: stored in one "
        "transaction, all or none, no other append to the session between them. A message the session "
        "refuses (its shape, or a tool result no call of the session or of an earlier message awaits) "
        "refuses the batch, a 400 naming it by index (`messages[1]: ...`)."))


class MessagesAppendedOut(BaseModel):
    session_id: str
    agent_id: str | None = None
    seqs: list[int] = Field(description="The messages' sequence numbers, in order (consecutive).")
    stats: dict[str, Any]


class ViewOut(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{
        "session_id": "s1", "budget": 4000, "tokens": 123,
        "messages": [{"role": "user", "content": "Order 40 units of the X-300."}]}]})

    session_id: str
    agent_id: str | None = None
    budget: int
    tokens: int
    messages: list[dict[str, Any]]


class StoredMessage(BaseModel):
    seq: int = Field(description="Its sequence number in the session.")
    message: dict[str, Any] = Field(description="The message as appended (role, content, name, tool calls ...).")
    timestamp: float = Field(description="Unix seconds: the timestamp it was given, else when it was appended.")
    retention: Literal["forgettable", "fuzzy", "strict"] | None = Field(
        description="Its retention class; null: unclassified (the session's default applied).")
    status: str = Field(description="'active', or what compaction did to it in the view (it stays here whole).")


class MessagesOut(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{
        "session_id": "s1", "agent_id": None, "offset": 0, "limit": 1000, "total": 1, "next_offset": None,
        "messages": [{"seq": 0, "message": {"role": "user", "content": "Order 40 units of the X-300."},
                      "timestamp": 1764700000.0, "retention": "strict", "status": "active"}]}]})

    session_id: str
    agent_id: str | None = None
    offset: int
    limit: int
    total: int = Field(description="The session's messages (of this agent), every page together.")
    next_offset: int | None = Field(description="The offset of the next page; null on the last page.")
    messages: list[StoredMessage]


class CompactOut(BaseModel):
    session_id: str
    agent_id: str | None = None
    tier: int
    stats: dict[str, Any]


class SessionInfo(BaseModel):
    session_id: str
    agents: list[str | None] = Field(description="The session's agents; null is the main agent.")
    messages: int = Field(description="Messages appended (all agents), compacted ones included.")
    # None: a session that holds only settings (PUT .../config before its first message) has no append time.
    created_at: float | None = Field(description="First append, Unix seconds; null before the first message.")
    updated_at: float | None = Field(description="Last append, Unix seconds; null before the first message.")


class SessionsOut(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{"sessions": [
        {"session_id": "s1", "agents": [None], "messages": 12, "created_at": 1764700000.0,
         "updated_at": 1764703600.0}]}]})

    sessions: list[SessionInfo]


class SessionDeletedOut(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{
        "session_id": "s1", "messages": 12, "sources": 7, "items": 14, "triples": 3}]})

    session_id: str
    messages: int = Field(description="Messages removed from working memory.")
    sources: int = Field(default=0, description="Archived turns forgotten (with forget=true).")
    items: int = Field(default=0, description="Long-term items removed with them.")
    triples: int = Field(default=0, description="Graph triples removed with them.")


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


class SessionConfigIn(ClosedBody):
    """A session's own compaction settings; fields left out keep their value."""

    model_config = ConfigDict(json_schema_extra={"examples": [{
        "window_tokens": 16000, "light": 0.6, "structural": 0.75, "llm": 0.88}]})

    # Only the window may be null (never compact on its own); a threshold is a share of the window, so a
    # null one is refused here, naming it (a 422), not passed on to fail as a comparison with None (a 500).
    # Their defaults are never used (fields left out are left out of ``model_dump(exclude_unset=True)``),
    # so the schema shows none: a client reads "a number, optional", not "null by default".
    window_tokens: int | None = Field(default=None, ge=64, le=10_000_000,
                                      description="Compaction window in tokens; null: never compact on its own.")
    light: float = Field(default=None, gt=0, le=1, json_schema_extra=_no_default,
                         description="Light level: old long text condensed.")
    structural: float = Field(default=None, gt=0, le=1, json_schema_extra=_no_default,
                              description="Structural level: forgettable dropped, fuzzy summarized.")
    llm: float = Field(default=None, gt=0, le=1, json_schema_extra=_no_default,
                       description="LLM level: forgettable then fuzzy dropped, strict summarized.")
    emergency: float = Field(default=None, gt=0, le=1, json_schema_extra=_no_default,
                             description="Strict material dropped too.")
    target: float = Field(default=None, gt=0, le=1, json_schema_extra=_no_default,
                          description="Share of the window kept after a pass.")

    @field_validator("light", "structural", "llm", "emergency", "target", mode="before")
    @classmethod
    def _not_null(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None:
            raise ValueError(f"{info.field_name} cannot be null (a share of the window in (0, 1]); "
                             "leave it out to keep its value")
        return value


class SessionConfigOut(BaseModel):
    session_id: str
    agent_id: str | None = None
    config: dict[str, Any]
    utilization: float | None = Field(description="Share of the window in use; null without a window.")
