"""Request isolation at the ASGI boundary: strict JSON in, and no error of one request reaching others.

Python's ``json`` accepts ``NaN``, ``Infinity`` and lone surrogate escapes (``"\\ud800"``), and
recurses once per nesting level: such a value parsed into a request once made the embedded vector
engine panic and once left the session store inside a transaction. ``StrictJson`` checks every
JSON body with orjson (RFC 8259: none of those constants, valid Unicode only) and a nesting limit,
and refuses the request before any route parses it. ``Contain`` answers a ``BaseException`` that
is not a cancellation (a Rust panic surfacing through pyo3 is one) with a 500 for that request
alone: it never reaches the server, which would otherwise drop the connection or the whole task
group it ran in (the MCP session manager); ``agent_memory.core.errors.contained`` does it in a thread.

Strict JSON says nothing of a body's keys: pydantic ignores a key a model does not declare, so a
misspelled optional field (``"budgt": 50``, ``"filters": {"metdata": ...}``) once answered 200 with
its default. ``ClosedBody`` is the base of every request body (API routes and MCP tool arguments,
nested models included): an unknown key is a 422 that names it and the keys the body takes.
"""

from __future__ import annotations

import difflib
import json
import logging
from typing import Any, Callable, Mapping

import orjson
from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator, model_validator

from agent_memory.api.limits import is_json_body
from agent_memory.core.errors import passthrough

log = logging.getLogger(__name__)

MAX_JSON_DEPTH = 100  # as for uploaded JSON files (docs/api.md); far beyond any real request body


def json_problem(body: bytes, max_depth: int = MAX_JSON_DEPTH) -> str | None:
    """Why ``body`` is not strict JSON nested at most ``max_depth`` deep, or None."""
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        if str(exc).startswith("depth limit exceeded"):
            # orjson stops at 1024 levels, far past ours: deep nesting, not malformed JSON (docs/api.md: 400).
            return f"JSON nested deeper than {max_depth} levels"
        if _lenient_parse(body):
            return f"invalid JSON (NaN, Infinity and lone surrogates are not JSON): {exc}"
        return f"{MALFORMED}: {exc}"
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > max_depth:
                return f"JSON nested deeper than {max_depth} levels"
            stack.extend((inner, depth + 1) for inner in (item.values() if isinstance(item, dict) else item))
    return None


MALFORMED = "malformed JSON"


def _lenient_parse(body: bytes) -> bool:
    """Whether Python's lenient parser reads ``body`` (then only a non-standard constant or a lone
    surrogate made the strict one refuse it)."""
    try:
        json.loads(body)
        return True
    except (ValueError, RecursionError):
        return False


def api_refusal(reason: str) -> tuple[int, dict]:
    if reason.startswith(MALFORMED):  # as FastAPI answers it (docs/api.md: 422 invalid_request)
        return 422, {"error": {"code": "invalid_request", "message": reason}}
    return 400, {"error": {"code": "bad_request", "message": reason}}


def jsonrpc_refusal(reason: str) -> tuple[int, dict]:
    return 400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": f"Parse error: {reason}"}}


async def _answer(send, status: int, payload: dict) -> None:
    body = json.dumps(payload).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class StrictJson:
    """Pure ASGI middleware: a JSON body that is not strict JSON is refused (``refusal`` says how)."""

    def __init__(self, app, refusal: Callable[[str], tuple[int, dict]] = api_refusal,
                 max_depth: int = MAX_JSON_DEPTH) -> None:
        self.app, self.refusal, self.max_depth = app, refusal, max_depth

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not is_json_body(scope):
            return await self.app(scope, receive, send)
        messages, chunks = [], []
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        problem = json_problem(body, self.max_depth) if body.strip() else None
        if problem is not None:
            status, payload = self.refusal(problem)
            return await _answer(send, status, payload)

        async def replay():
            return messages.pop(0) if messages else await receive()

        return await self.app(scope, replay, send)


class Contain:
    """Pure ASGI middleware: a non-``Exception`` error of one request becomes that request's 500."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        started = False

        async def watch(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, watch)
        except BaseException as exc:
            if passthrough(exc) or scope["type"] != "http":
                raise
            log.error("native failure on %s %s: %s: %s", scope.get("method"), scope.get("path"),
                      type(exc).__name__, exc)
            if not started:
                await _answer(send, 500, {"error": {"code": "internal", "message":
                                                    f"internal failure ({type(exc).__name__}); "
                                                    "the request was not completed"}})


_NUMBERS = (int, float, int | None, float | None)


class ClosedBody(BaseModel):
    """A request body that refuses keys it does not declare (``additionalProperties: false`` in its schema).

    The check runs before the fields', so the refusal names the unknown key and the known ones (with the
    closest as a hint), not pydantic's bare "Extra inputs are not permitted"; ``extra="forbid"`` stays so
    the schema a client reads says the body is closed. Response models stay open (a newer server may add
    fields), so this is for bodies coming in only."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            problem = unknown_keys_problem(data, cls.known_keys())
            if problem is not None:
                raise ValueError(problem)
        return data

    @field_validator("*", mode="before")
    @classmethod
    def _numbers_are_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        """pydantic reads ``true`` as 1 and ``"500"`` as 500 for a number: ``"budget": true`` asked for a prompt of
        one token and was refused for the budget, not for the boolean. JSON has numbers: a number is one."""
        if cls.model_fields[info.field_name].annotation in _NUMBERS and isinstance(value, (bool, str)):
            raise ValueError(f"should be a number, not {'a boolean' if isinstance(value, bool) else 'a string'}")
        return value

    @classmethod
    def known_keys(cls) -> list[str]:
        """The keys this body takes: its fields' names (and aliases, if any), in declaration order."""
        names = []
        for name, field in cls.model_fields.items():
            names.extend(n for n in (name, field.alias, field.validation_alias) if isinstance(n, str))
        return list(dict.fromkeys(names))


def unknown_keys_problem(data: Mapping[Any, Any], known: list[str]) -> str | None:
    """Why ``data`` holds keys outside ``known`` (naming them, the known ones and a close match), or None."""
    unknown = [key for key in data if key not in known]
    if not unknown:
        return None
    names = ", ".join(repr(key) for key in unknown)
    hint = ""
    if isinstance(unknown[0], str):
        close = difflib.get_close_matches(unknown[0], known, n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
    what = "unknown key" if len(unknown) == 1 else "unknown keys"
    return f"{what} {names}{hint}; known: {', '.join(known) or 'none'}"
