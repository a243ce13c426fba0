"""``agent-memory mcp``: the memory over the Model Context Protocol (the official ``mcp`` package).

Stdio by default (one client, the settings' tenant, or ``--tenant``); streamable HTTP on
``/mcp`` with ``--http``, under the HTTP API's rules: a key (``X-API-Key`` or ``Authorization:
Bearer``) is required whenever keys are configured or the server listens beyond loopback, and
each key is bound to one tenant.

Tools: ``remember`` (documents, or messages into a session with a retention class), ``recall``
(the bounded prompt for a question, with its sources), ``search`` (ranked passages with scores),
``forget``, ``session_view``, ``session_list`` and ``session_delete``. Their input schemas are the HTTP API's pydantic models
(``agent_memory/api/schemas.py``), and the same models validate the arguments. A thin layer over
``agent_memory.Memory``; the low-level ``Server`` is used so the schemas are the models' own.
"""

from __future__ import annotations

import io
import json
import logging
import sys
from typing import Annotated, Any, Callable

import anyio
import mcp_types as types
import uvicorn
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator
from starlette.responses import JSONResponse

from .api.schemas import AskIn, DocumentIn, Filters, MessageIn
from .api.state import is_loopback, tenant_for_key
from .api.strict import Contain, StrictJson, json_problem, jsonrpc_refusal
from .config import Settings
from .errors import AgentMemoryError, ConfigError, NotFoundError, contained
from .memory import Memory

log = logging.getLogger(__name__)
SessionId = Annotated[str, Field(min_length=1, max_length=256, pattern=r"^[^/]+$", examples=["chat-1"])]


class RememberIn(BaseModel):
    """Documents to store, and/or messages to append to a working-memory session."""

    model_config = ConfigDict(extra="forbid")
    documents: list[DocumentIn] = Field(default_factory=list, description="Texts stored under their source IDs.")
    session_id: SessionId | None = Field(default=None, description="The session the messages go to.")
    messages: list[MessageIn] = Field(default_factory=list, description="Chat messages, each with a retention class.")

    @model_validator(mode="after")
    def _something(self) -> RememberIn:
        if not self.documents and not self.messages:
            raise ValueError("give documents, or a session_id with messages")
        if self.messages and not self.session_id:
            raise ValueError("messages need a session_id")
        return self


# The ask body without the answer's length: recall returns the prompt, the calling model answers.
RecallIn = create_model("RecallIn", __config__=ConfigDict(extra="forbid"),
                        **{name: (f.annotation, f) for name, f in AskIn.model_fields.items()
                           if name != "max_answer_tokens"})


class SearchIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, max_length=20_000)
    limit: int = Field(default=10, ge=1, le=100)
    session_id: SessionId | None = None
    filters: Filters = Field(default_factory=Filters)


class ForgetIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    source_id: str = Field(min_length=1, max_length=512, description="A source, or an uploaded/ingested file.")


class ViewIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    session_id: SessionId
    budget: int = Field(default=4000, ge=1, le=1_000_000)


def _remember(memory: Memory, tenant: str, args: RememberIn) -> dict[str, Any]:
    out: dict[str, Any] = {"source_ids": [], "seqs": []}
    for doc in args.documents:
        added = memory.add(doc.text, source_id=doc.source_id, title=doc.title, metadata=doc.metadata, tenant=tenant)
        out["source_ids"] += added.source_ids
    for message in args.messages:
        out["seqs"].append(memory.add_message(args.session_id, message.message, retention=message.retention,
                                              tenant=tenant))
    if args.session_id:
        out["session_id"] = args.session_id
    return out


def _recall(memory: Memory, tenant: str, args: BaseModel) -> dict[str, Any]:
    result = memory.prompt(args.question, budget=args.budget, session_id=args.session_id, filters=args.filters,
                           tenant=tenant, preset=args.preset, overrides=args.overrides,
                           question_date=args.question_date)
    return {"prompt": result.prompt, "tokens": result.total_tokens, "budget": result.budget,
            "sources": list(dict.fromkeys(p.source_id for p in result.passages)),
            "passages": [{"source_id": p.source_id, "kind": p.kind, "section": p.section,
                          "score": round(float(p.score), 5)} for p in result.passages]}


def _search(memory: Memory, tenant: str, args: SearchIn) -> dict[str, Any]:
    hits = memory.search(args.query, limit=args.limit, session_id=args.session_id, filters=args.filters,
                         tenant=tenant)
    return {"passages": [{"source_id": p.source_id, "text": p.text, "kind": p.kind,
                          "score": round(float(p.score), 5)} for p in hits]}


def _forget(memory: Memory, tenant: str, args: ForgetIn) -> dict[str, Any]:
    removed = memory.forget(args.source_id, tenant=tenant)
    if not any(removed.values()):
        raise NotFoundError(f"no source {args.source_id!r} for this tenant")
    return {"source_id": args.source_id, **removed}


class SessionsIn(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DeleteSessionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    session_id: SessionId
    forget: bool = Field(default=False, description="Also forget the session's turns in long-term memory.")


def _sessions(memory: Memory, tenant: str, args: SessionsIn) -> dict[str, Any]:
    return {"sessions": memory.sessions(tenant=tenant)}


def _delete_session(memory: Memory, tenant: str, args: DeleteSessionIn) -> dict[str, Any]:
    return memory.delete_session(args.session_id, forget_archived=args.forget, tenant=tenant)


def _view(memory: Memory, tenant: str, args: ViewIn) -> dict[str, Any]:
    messages = memory.view(args.session_id, args.budget, tenant=tenant)
    count = memory.session(args.session_id, tenant=tenant).count_view(messages)
    return {"session_id": args.session_id, "budget": args.budget, "tokens": count, "messages": messages}


# name -> (input model, handler, description)
TOOLS: dict[str, tuple[type[BaseModel], Callable[[Memory, str, Any], dict[str, Any]], str]] = {
    "remember": (RememberIn, _remember, "Store documents (text under a source ID; the same ID again replaces "
                 "it) and/or append chat messages to a session with a retention class (forgettable, fuzzy, strict)."),
    "recall": (RecallIn, _recall, "The memory for a question as a prompt that never exceeds `budget` tokens; "
               "every passage is tagged [S:<source id>]: cite those tags. Includes the session's recent turns."),
    "search": (SearchIn, _search, "Ranked passages for a query, best first, with their scores and source IDs."),
    "forget": (ForgetIn, _forget, "Remove a source (or a whole ingested file) from every store."),
    "session_view": (ViewIn, _view, "A session's messages for the next model call, compacted to fit `budget`."),
    "session_list": (SessionsIn, _sessions, "The working-memory sessions: IDs, agents, message counts, times."),
    "session_delete": (DeleteSessionIn, _delete_session, "Delete a session's working memory; with forget=true "
                       "also its turns in long-term memory."),
}


def _text_result(data: dict[str, Any], text: str | None = None) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text or json.dumps(data,
                                                                                            ensure_ascii=False))],
                                structured_content=data)


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)


def build_server(memory: Memory, tenant_of: Callable[[ServerRequestContext], str]) -> Server:
    """The MCP server over ``memory``; ``tenant_of`` tells each call's tenant (stdio: fixed; HTTP: the key's)."""

    async def list_tools(ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
                         ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name=name, description=doc, input_schema=model.model_json_schema())
                                            for name, (model, _, doc) in TOOLS.items()])

    async def call_tool(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> types.CallToolResult:
        found = TOOLS.get(params.name)
        if found is None:
            return _error(f"unknown tool {params.name!r}; tools: {sorted(TOOLS)}")
        model, handler, _ = found
        try:
            args = model.model_validate(params.arguments or {})
        except ValidationError as exc:
            where = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors()[:5])
            return _error(f"invalid arguments for {params.name}: {where}")
        try:
            tenant = tenant_of(ctx)
            # contained: a native panic (a BaseException) fails this call only, never the session
            # manager's task group (every later request) or the stdio process.
            data = await anyio.to_thread.run_sync(contained, handler, memory, tenant, args)
        except (AgentMemoryError, ValueError) as exc:
            # The server's data dir is not the client's business (the full message is in the log).
            return _error(f"{type(exc).__name__}: {exc}".replace(str(memory.settings.data_dir.resolve()), "<data dir>"))
        except Exception as exc:  # noqa: BLE001 - a bug fails its own call, with a log line
            log.exception("MCP tool %s failed", params.name)
            return _error(f"internal error ({type(exc).__name__})")
        return _text_result(data, data.get("prompt") if params.name == "recall" else None)

    return Server("agent-memory", version="0.1.0", instructions=__doc__.split("\n\n")[2],
                  on_list_tools=list_tools, on_call_tool=call_tool)


class _CheckedLines:
    """stdin's lines for the stdio transport, strict JSON only: a malformed line (or NaN, Infinity, a
    lone surrogate) is answered with a JSON-RPC parse error (-32700, id null) on the transport's own
    write stream, instead of being dropped in silence; valid lines pass on unchanged."""

    def __init__(self, lines) -> None:
        self.lines = lines
        self.write = None  # the transport's write stream, set once it exists

    async def __aiter__(self):
        async for line in self.lines:
            if not line.strip():
                continue
            problem = json_problem(line.encode("utf-8", "surrogatepass"))
            code, message, request_id = types.PARSE_ERROR, f"Parse error: {problem}", None
            if problem is None:
                try:
                    types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                    yield line
                    continue
                except ValidationError as exc:
                    value = json.loads(line)
                    found = value.get("id") if isinstance(value, dict) else None
                    request_id = found if isinstance(found, (int, str)) and not isinstance(found, bool) else None
                    code, message = types.INVALID_REQUEST, f"Invalid Request: {exc.errors()[0]['msg']}"
            log.warning("stdio MCP: refused a line: %s", message)
            if self.write is not None:
                error = types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))
                await self.write.send(SessionMessage(error))


def serve_stdio(memory: Memory) -> None:
    server = build_server(memory, lambda ctx: memory.tenant)

    async def main() -> None:
        lines = _CheckedLines(anyio.wrap_file(io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")))
        async with stdio_server(stdin=lines) as (read, write):
            lines.write = write
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)


def _request_key(headers) -> str | None:
    key = headers.get("x-api-key")
    auth = headers.get("authorization", "")
    if not key and auth.lower().startswith("bearer "):
        key = auth[7:].strip()
    return key or None


def http_app(memory: Memory, settings: Settings, host: str):
    """The streamable HTTP app (Starlette), behind the HTTP API's key → tenant check."""
    api_keys = dict(settings.api_keys)
    auth_required = bool(api_keys) or not is_loopback(host)

    def tenant_of(ctx: ServerRequestContext) -> str:
        if not auth_required:
            return memory.tenant
        tenant = tenant_for_key(api_keys, _request_key(ctx.request.headers) or "") if ctx.request else None
        if tenant is None:  # the middleware below already refused such a request
            raise ConfigError("no tenant for this request's API key")
        return tenant

    # Strict JSON (no NaN/Infinity/lone surrogates; a parse error in JSON-RPC's words) and a panic
    # contained to its request, as on the HTTP API.
    inner = Contain(StrictJson(build_server(memory, tenant_of).streamable_http_app(host=host),
                               refusal=jsonrpc_refusal))

    async def app(scope, receive, send):
        if scope["type"] == "http" and auth_required:
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            key = _request_key(headers)
            if not key or tenant_for_key(api_keys, key) is None:
                reason = "invalid API key" if key else "an API key is required (X-API-Key or Authorization: Bearer)"
                response = JSONResponse({"error": {"code": "unauthorized", "message": reason}}, status_code=401,
                                        headers={"WWW-Authenticate": "Bearer"})
                await response(scope, receive, send)
                return
        await inner(scope, receive, send)

    return app


def serve(*, http: bool = False, host: str | None = None, port: int | None = None, data_dir: str | None = None,
          tenant: str | None = None) -> int:
    """Run the MCP server until the client disconnects (stdio) or until interrupted (HTTP)."""
    with Memory(data_dir=data_dir, tenant=tenant) as memory:
        if not http:
            serve_stdio(memory)
            return 0
        settings = memory.settings
        host = host or settings.api_host
        if not is_loopback(host) and not settings.api_keys:
            raise ConfigError(f"listening on {host!r} needs API keys: set AGENT_MEMORY_API_KEYS")
        uvicorn.run(http_app(memory, settings, host), host=host, port=port or 8765, log_level="info")
    return 0
