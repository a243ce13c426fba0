"""The MCP tools: their argument and result models, the two backends that run them (this process's
``Memory``, or a server's HTTP API) and the ``TOOLS`` table that names each with its schemas,
description and annotations.

Its own file because it is what the tools *are*, independent of how they are served: ``server.py``
only lists and dispatches this table over stdio or streamable HTTP.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Callable

import mcp_types as types
from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

from agent_memory.answer import RELEVANCE_DOC
from agent_memory.api.routes_ask import search_hits
from agent_memory.api.schemas import (
    DOCUMENT_TEXT,
    AskIn,
    DocumentIn,
    DocumentMetadata,
    DocumentTitle,
    ForgetOut,
    SearchIn,
    SearchOut,
)
from agent_memory.api.schemas_sessions import MessageIn, SessionDeletedOut, SessionsOut, ViewOut
from agent_memory.api.strict import ClosedBody
from agent_memory.conversation.message_validation import KEYS, ROLES, validate
from agent_memory.core.errors import NotFoundError
from agent_memory.memory import Memory
from agent_memory.memory.questions import prompt_notes
from agent_memory.remote import RemoteMemory
from agent_memory.retrieval.types import relevance

SessionId = Annotated[str, Field(min_length=1, max_length=256, pattern=r"^[^/]+$", examples=["chat-1"])]


GENERATED_PREFIX = "memory/"


def generated_source_id(text: str) -> str:
    """The source ID of a text remembered without one: ``memory/<hash of the text>``, so the same
    text remembered twice is stored once."""
    return GENERATED_PREFIX + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


MESSAGE_SHAPES = ('{"role": "user", "content": "Ship on Friday.", "retention": "strict"} (flat), or '
                  '{"message": {"role": "user", "content": "Ship on Friday."}, "retention": "strict"} (as the HTTP API)')


def _both_forms(schema: dict[str, Any]) -> None:
    """The schema a client reads: the HTTP API's nested message, or a flat chat message with ``retention``."""
    nested = {k: schema.pop(k) for k in ("type", "properties", "required", "additionalProperties") if k in schema}
    keys = sorted(set().union(*KEYS.values()) - {"role"})  # what a role may carry (the check names which)
    flat = {"type": "object", "required": ["role"], "additionalProperties": False, "properties": {
        "role": {"enum": list(ROLES)}, **{key: {} for key in keys}, "retention": nested["properties"]["retention"]}}
    schema.update(anyOf=[flat, nested], description="One chat message: " + MESSAGE_SHAPES + ".")
    schema["examples"] = [{"role": "user", "content": "Ship on Friday.", "retention": "strict"},
                          {"message": {"role": "user", "content": "Ship on Friday."}, "retention": "strict"}]


class RememberMessage(MessageIn):
    """A message for ``remember``: MessageIn's ``{"message": {...}, "retention": ...}``, or the flat form a
    model writes naturally, the chat message's own keys with ``retention`` beside them."""

    model_config = ConfigDict(json_schema_extra=_both_forms)

    @model_validator(mode="before")
    @classmethod
    def _flat(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        if "role" in data and "message" in data:
            raise ValueError("a message is flat or nested, not both: got both 'message' and 'role'; give "
                             + MESSAGE_SHAPES)
        if "role" in data:
            rest = {k: v for k, v in data.items() if k != "retention"}
            return {"message": rest, **({"retention": data["retention"]} if "retention" in data else {})}
        if "message" not in data:
            raise ValueError(f"a message needs 'role' (or 'message'), got keys {sorted(map(str, data))}; give "
                             + MESSAGE_SHAPES)
        return data


class RememberIn(ClosedBody):
    """A text to store, documents, and/or messages to append to a working-memory session."""

    # Checked as DocumentIn checks a document (api/schemas.py), so a refusal is this tool's "invalid arguments"
    # naming the field, not the ValidationError of the DocumentIn built later.
    text: Annotated[str, Field(min_length=1, max_length=1_000_000), DOCUMENT_TEXT] | None = Field(default=None,
                             description="A fact, note or summary to keep. Stored under `source_id`, or under "
                                         "a generated `memory/<hash>` ID (returned) when none is given.")
    source_id: str | None = Field(default=None, min_length=1, max_length=512,
                                  description="Optional ID for `text`; remembering the same ID again replaces it.")
    title: DocumentTitle = Field(default="", max_length=512, description="Optional title for `text`.")
    metadata: DocumentMetadata = Field(default_factory=dict, description="Optional metadata stored with `text`.")
    documents: list[DocumentIn] = Field(default_factory=list, description="Texts stored under their source IDs.")
    session_id: SessionId | None = Field(default=None, description="The session the messages go to.")
    messages: list[RememberMessage] = Field(default_factory=list, description=(
        "Chat messages for `session_id`, each with a retention class (strict, fuzzy, forgettable): "
        + MESSAGE_SHAPES + "."))

    @model_validator(mode="after")
    def _something(self) -> RememberIn:
        if self.text is None and (self.source_id or self.title or self.metadata):
            raise ValueError("source_id, title and metadata describe `text`: give `text` too")
        if self.text is None and not self.documents and not self.messages:
            raise ValueError("give `text` to store, documents, or a session_id with messages")
        if self.messages and not self.session_id:
            raise ValueError("messages need a session_id")
        return self

    def all_documents(self) -> list[DocumentIn]:
        docs = list(self.documents)
        if self.text is not None:
            docs.insert(0, DocumentIn(text=self.text, source_id=self.source_id or generated_source_id(self.text),
                                      title=self.title, metadata=self.metadata))
        return docs


class RememberOut(BaseModel):
    source_ids: list[str] = Field(description="The sources stored (a generated ID for `text` without one).")
    seqs: list[int] = Field(description="The sequence number of each message appended, in order.")
    session_id: str | None = None


class RecallPassage(BaseModel):
    source_id: str
    kind: str = Field(description="chunk (a document's passage), summary, turn (a chat message) ...")
    section: str = Field(description="The prompt section it sits in.")
    score: float = Field(description=RELEVANCE_DOC)


class RecallOut(BaseModel):
    prompt: str = Field(description="The memory for the question; every passage tagged [S:<source id>].")
    tokens: int = Field(description="The prompt's size in tokens (never above budget).")
    budget: int
    sources: list[str] = Field(description="The source IDs the prompt cites, in prompt order.")
    passages: list[RecallPassage]
    notes: list[str] = Field(default_factory=list, description=(
        "What changed the answer that the prompt does not say: the session named does not exist, the tenant "
        "holds nothing yet, archiving was still catching up. Empty when none; tell the user when it matters."))


# The ask body without the answer's length: recall returns the prompt, the calling model answers.
RecallIn = create_model("RecallIn", __base__=ClosedBody,
                        **{name: (f.annotation, f) for name, f in AskIn.model_fields.items()
                           if name != "max_answer_tokens"})


class ForgetIn(ClosedBody):
    source_id: str = Field(min_length=1, max_length=512, description="A source, or an uploaded/ingested file.")


class ViewIn(ClosedBody):
    session_id: SessionId
    budget: int = Field(default=4000, ge=1, le=1_000_000)


class LocalBackend:
    """The tools over this process's ``Memory``; ``caller`` is the call's tenant."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory

    def remember(self, caller: str, args: RememberIn) -> dict[str, Any]:
        out: dict[str, Any] = {"source_ids": [], "seqs": [], "session_id": args.session_id}
        messages = [m.message for m in args.messages]
        classes = [m.retention for m in args.messages]
        if messages:  # the whole batch first: a refused message (named by index) stores nothing
            self.memory.check_messages(args.session_id, messages, retention=classes, tenant=caller)
        for doc in args.all_documents():
            out["source_ids"] += self.memory.add(doc.text, source_id=doc.source_id, title=doc.title,
                                                 metadata=doc.metadata, tenant=caller).source_ids
        if messages:  # one transaction: all of them or none, no other append between them
            out["seqs"] = self.memory.add_messages(args.session_id, messages, retention=classes, tenant=caller)
        return out

    def recall(self, caller: str, args: BaseModel) -> dict[str, Any]:
        result = self.memory.prompt(args.question, budget=args.budget, session_id=args.session_id,
                                    filters=args.filters, question_date=args.question_date, preset=args.preset,
                                    overrides=args.overrides, tenant=caller)
        return recall_out(result)

    def search(self, caller: str, args: SearchIn) -> dict[str, Any]:
        hits = self.memory.search(args.query, limit=args.limit, session_id=args.session_id, filters=args.filters,
                                  tenant=caller)
        return {"passages": search_hits(hits)}

    def forget(self, caller: str, args: ForgetIn) -> dict[str, Any]:
        return {"source_id": args.source_id, **self.memory.forget(args.source_id, tenant=caller)}

    def view(self, caller: str, args: ViewIn) -> dict[str, Any]:
        messages = self.memory.view(args.session_id, args.budget, tenant=caller)
        count = self.memory.session(args.session_id, tenant=caller).count_view(messages)
        return {"session_id": args.session_id, "budget": args.budget, "tokens": count, "messages": messages}

    def sessions(self, caller: str, args: SessionsIn) -> dict[str, Any]:
        return {"sessions": self.memory.sessions(tenant=caller)}

    def delete_session(self, caller: str, args: DeleteSessionIn) -> dict[str, Any]:
        return self.memory.delete_session(args.session_id, forget_archived=args.forget, tenant=caller)


class RemoteBackend:
    """The tools over a running server's HTTP API; ``caller`` is the API key to send (None: the
    client's own, from AGENT_MEMORY_API_KEY)."""

    def __init__(self, remote: RemoteMemory) -> None:
        self.remote = remote

    def remember(self, caller: str | None, args: RememberIn) -> dict[str, Any]:
        out: dict[str, Any] = {"source_ids": [], "seqs": [], "session_id": args.session_id}
        # Each message's shape is checked here before any document is stored; that a tool result answers a
        # call is checked by the server, which stores the batch in one transaction (all or none).
        for n, message in enumerate(args.messages):
            try:
                validate(dict(message.message))
            except ValueError as exc:
                raise ValueError(f"messages[{n}]: {exc}") from None
        for doc in args.all_documents():
            out["source_ids"] += self.remote.add(doc.text, source_id=doc.source_id, title=doc.title,
                                                 metadata=doc.metadata, key=caller)
        if args.messages:
            out["seqs"] = self.remote.add_messages(args.session_id, [m.message for m in args.messages],
                                                   retention=[m.retention for m in args.messages], key=caller)
        return out

    def recall(self, caller: str | None, args: BaseModel) -> dict[str, Any]:
        return recall_out(self.remote.prompt(args.model_dump(mode="json", exclude_none=True), key=caller))

    def search(self, caller: str | None, args: SearchIn) -> dict[str, Any]:
        return self.remote.search(args.model_dump(mode="json", exclude_none=True), key=caller)

    def forget(self, caller: str | None, args: ForgetIn) -> dict[str, Any]:
        return {"source_id": args.source_id, **self.remote.forget(args.source_id, key=caller)}

    def view(self, caller: str | None, args: ViewIn) -> dict[str, Any]:
        data = self.remote.view(args.session_id, args.budget, key=caller)
        return {k: data[k] for k in ("session_id", "budget", "tokens", "messages")}


    def sessions(self, caller: str | None, args: SessionsIn) -> dict[str, Any]:
        return self.remote.json("GET", "/v1/sessions", key=caller)

    def delete_session(self, caller: str | None, args: DeleteSessionIn) -> dict[str, Any]:
        return self.remote.delete_session(args.session_id, forget=args.forget, key=caller)


def recall_out(result) -> dict[str, Any]:
    return {"prompt": result.prompt, "tokens": result.total_tokens, "budget": result.budget,
            "sources": list(dict.fromkeys(p.source_id for p in result.passages)),
            "passages": [{"source_id": p.source_id, "kind": p.kind, "section": p.section,
                          "score": relevance(p.score)} for p in result.passages],
            "notes": prompt_notes(result)}


def _forgotten(data: dict[str, Any]) -> dict[str, Any]:
    if not any(data[k] for k in ("sources", "items", "triples")):
        raise NotFoundError(f"no source {data['source_id']!r} for this tenant")
    return data


READ = types.ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                             open_world_hint=False)


class SessionsIn(ClosedBody):
    """No arguments: any key given is refused."""


class DeleteSessionIn(ClosedBody):
    session_id: SessionId
    forget: bool = Field(default=False, description="Also forget the session's turns in long-term memory.")


@dataclass(frozen=True)
class ToolSpec:
    input: type[BaseModel]
    output: type[BaseModel]
    run: Callable[[Any, Any, Any], dict[str, Any]]  # (backend, caller, args) -> output
    description: str
    annotations: types.ToolAnnotations


TOOLS: dict[str, ToolSpec] = {
    "remember": ToolSpec(
        RememberIn, RememberOut, lambda b, c, a: b.remember(c, a),
        "Store something in long-term memory: `text` (a fact, note or summary; its source ID is generated "
        "and returned unless you give `source_id`, and the same ID again replaces it), `documents` (texts "
        "under IDs of their own), and/or chat `messages` appended to the session `session_id`, each with a "
        "retention class (strict, fuzzy, forgettable). A message is flat, "
        '{"role": "user", "content": "Ship on Friday.", "retention": "strict"}, or nested as the HTTP API '
        'takes it, {"message": {"role": "user", "content": "..."}, "retention": "strict"}. Example: '
        '{"session_id": "chat-1", "messages": [{"role": "user", "content": "Ship on Friday.", '
        '"retention": "strict"}]}.',
        types.ToolAnnotations(title="Remember", read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                              open_world_hint=False)),
    "recall": ToolSpec(
        RecallIn, RecallOut, lambda b, c, a: b.recall(c, a),
        "The memory for a question, as a prompt that never exceeds `budget` tokens; every passage is "
        "tagged [S:<source id>]: answer from it and cite those tags. With `session_id` it includes that "
        "session's recent turns. Call it before answering anything that may depend on earlier facts. "
        "`notes` says what the prompt cannot: a session ID that does not exist, a tenant with nothing stored.",
        types.ToolAnnotations(title="Recall", **READ.model_dump(exclude={"title"}))),
    "search": ToolSpec(
        SearchIn, SearchOut, lambda b, c, a: b.search(c, a),
        "Ranked passages for a query, best first, each with its source ID and a relevance score in 0..1 "
        "(higher is better). For browsing what memory holds; use `recall` to answer a question.",
        types.ToolAnnotations(title="Search", **READ.model_dump(exclude={"title"}))),
    "forget": ToolSpec(
        ForgetIn, ForgetOut, lambda b, c, a: _forgotten(b.forget(c, a)),
        "Permanently remove a source (or a whole ingested file) from every store; an error names an "
        "unknown source. Only when the user asks to forget something.",
        types.ToolAnnotations(title="Forget", read_only_hint=False, destructive_hint=True, idempotent_hint=True,
                              open_world_hint=False)),
    "session_view": ToolSpec(
        ViewIn, ViewOut, lambda b, c, a: b.view(c, a),
        "A session's messages for the next model call, compacted to fit `budget` tokens (a pure read).",
        types.ToolAnnotations(title="Session view", **READ.model_dump(exclude={"title"}))),
    "session_list": ToolSpec(
        SessionsIn, SessionsOut, lambda b, c, a: b.sessions(c, a),
        "The working-memory sessions of this tenant: IDs, agents, message counts, first and last append times.",
        types.ToolAnnotations(title="Session list", **READ.model_dump(exclude={"title"}))),
    "session_delete": ToolSpec(
        DeleteSessionIn, SessionDeletedOut, lambda b, c, a: b.delete_session(c, a),
        "Delete a session's working memory (every agent); with forget=true also its archived turns in "
        "long-term memory. Only when the user asks for it.",
        types.ToolAnnotations(title="Session delete", read_only_hint=False, destructive_hint=True,
                              idempotent_hint=True, open_world_hint=False)),
}
