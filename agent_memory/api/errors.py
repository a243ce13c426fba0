"""Every error leaves the API as ``{"error": {"code", "message"}}`` with a status that says what went wrong.

Known conditions map to 4xx/503 here, so a client never sees a bare 500 for something the
code knows about; only a genuine bug reaches the catch-all handler (logged, then 500).
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from urllib.parse import unquote

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError as PydanticValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect
from starlette.routing import Match

from agent_memory.core.errors import (
    HIDDEN_DATA_DIR,
    AgentMemoryError,
    BudgetError,
    ConfigError,
    DimensionMismatchError,
    IndexFormatError,
    InternalError,
    LLMError,
    NotFoundError,
    SourceBusyError,
    SourceNotFoundError,
    StoreError,
    StoreUnavailableError,
    internal_message,
    new_error_id,
    problem_of,
    raised_by_us,
    refused_value_message,
)
from agent_memory.stores.jobs import internal_error

log = logging.getLogger(__name__)


class ApiError(Exception):
    """An error a route raises on purpose: status, a stable code, a message naming the bad value."""

    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers


def error_body(code: str, message: str) -> dict:
    return {"error": {"code": code, "message": message}}


def _json(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(error_body(code, message), status_code=status, headers=headers)


# Most specific first: the first isinstance match wins.
DOMAIN_STATUS: list[tuple[type[Exception], int, str]] = [
    (NotFoundError, 404, "not_found"),
    (SourceBusyError, 409, "source_busy"),
    (InternalError, 500, "internal"),
    (BudgetError, 400, "budget"),
    (StoreUnavailableError, 503, "store_unavailable"),
    (DimensionMismatchError, 503, "store_misconfigured"),
    (StoreError, 503, "store_error"),
    (LLMError, 502, "llm_error"),
    (IndexFormatError, 503, "reindex_required"),
    (ConfigError, 503, "config_error"),
    (AgentMemoryError, 400, "bad_request"),
]


def status_for(exc: Exception) -> tuple[int, str]:
    for klass, status, code in DOMAIN_STATUS:
        if isinstance(exc, klass):
            return status, code
    return 500, "internal"


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return _json(exc.status, exc.code, exc.message, exc.headers)

    @app.exception_handler(AgentMemoryError)
    async def _domain_error(request: Request, exc: AgentMemoryError) -> JSONResponse:
        status, code = status_for(exc)
        if status >= 500:
            log.warning("%s %s -> %d: %s", request.method, request.url.path, status, exc)
        body = error_body(code, without_paths(request, str(exc)))
        if isinstance(exc, SourceNotFoundError):  # the stored IDs that look like the one asked: the CLI's hint
            body["similar"] = exc.similar
        if isinstance(exc, SourceBusyError):  # the jobs to wait for, as the local SourceBusyError carries them
            body["jobs"] = exc.jobs
        return JSONResponse(body, status_code=status)

    @app.exception_handler(ValueError)
    async def _value_error(request: Request, exc: ValueError) -> JSONResponse:
        # Our checks raise ValueError for a bad argument (message role, retention class ...): their message names
        # the bad value, and is the answer. Any other's text was not written for a client (a library's may name a
        # server path or its internals): an error ID, and the log has the error under it with its traceback. A
        # model of ours that refuses what the server built is a bug (500); anything else a value the request
        # held that a library refused (400).
        if raised_by_us(exc):
            return _json(400, "bad_request", without_paths(request, str(exc)))
        error_id = new_error_id()
        if isinstance(exc, PydanticValidationError):
            log.error("unhandled error %s on %s %s", error_id, request.method, request.url.path, exc_info=exc)
            return _json(500, "internal", internal_message(error_id))
        log.warning("a value refused on %s %s: error %s", request.method, request.url.path, error_id, exc_info=exc)
        return _json(400, "bad_request", refused_value_message(error_id))

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        unparsed = _unparsed_body(request, exc)
        if unparsed is not None:
            return _json(415, "unsupported_media_type", unparsed)
        parts = []
        for err in exc.errors()[:5]:
            where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
            parts.append(f"{where}: {problem_of(err)} (got {_short(err.get('input'))})")
        return _json(422, "invalid_request", "; ".join(parts) or "invalid request")

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {400: "bad_request", 404: "not_found", 405: "method_not_allowed", 401: "unauthorized",
                413: "too_large"}.get(
            exc.status_code, "http_error")
        headers = getattr(exc, "headers", None)
        message = str(exc.detail)
        if exc.status_code == 404 and message == "Not Found":  # the router's: no route matched
            bad_session = _session_id_with_slash(request)
            if bad_session is not None:
                return _json(422, "invalid_request", f"a session ID cannot contain '/', got {bad_session!r}")
            message = f"nothing at {request.method} {request.url.path!r} (the routes are in /openapi.json)"
        elif exc.status_code == 405:
            allowed = _allowed_methods(request) or (headers or {}).get("Allow", "")
            headers = {**(headers or {}), "Allow": allowed}
            message = f"{request.method} is not allowed on {request.url.path!r} (allowed: {allowed or 'none'})"
        return _json(exc.status_code, code, message, headers)

    @app.exception_handler(ClientDisconnect)
    async def _gone(request: Request, _: ClientDisconnect) -> JSONResponse:
        # The client went away mid-body: nobody reads this answer, and it is no bug of ours (no traceback).
        log.info("client disconnected during %s %s", request.method, request.url.path)
        return _json(400, "client_disconnected", "the client closed the connection before its body arrived")

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        # A bug's text may name anything (a library's file, a query, another tenant's value): the client gets
        # an ID, the server's log the error under that ID with its traceback.
        error_id = new_error_id()
        log.error("unhandled error %s on %s %s", error_id, request.method, request.url.path, exc_info=exc)
        return _json(500, "internal", internal_message(error_id))


ROUTED_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


def _allowed_methods(request: Request) -> str:
    """Every method some route takes at this path, HEAD with GET (http_edges.HeadAsGet): the router's 405 names
    only those of the first route whose path matched, so ``PATCH /v1/sources`` said only DELETE was allowed.
    Each method is asked of the app's routes as the router would route it."""
    routes = request.app.router.routes
    methods = {method for method in ROUTED_METHODS
               if any(route.matches({**request.scope, "method": method})[0] is Match.FULL for route in routes)}
    if "GET" in methods:
        methods.add("HEAD")
    return ", ".join(sorted(methods))


def _unparsed_body(request: Request, exc: RequestValidationError) -> str | None:
    """Why a JSON body was not read, when it came with another content type (or none): FastAPI then
    hands the raw bytes to validation, whose "valid dictionary" complaint hides the real mistake."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind == "application/json" or kind.endswith("+json"):
        return None
    if not any(tuple(err.get("loc", ())) == ("body",) and isinstance(err.get("input"), (bytes, str))
               for err in exc.errors()):
        return None
    got = f"{kind!r}" if kind else "no content-type header"
    return f"send the body as application/json, got {got}"


def _session_id_with_slash(request: Request) -> str | None:
    """The session ID of a session route whose ID held a percent-encoded '/' (so no route matched)."""
    raw = request.scope.get("raw_path") or b""
    prefix = b"/v1/sessions/"
    if not raw.startswith(prefix) or b"%2f" not in raw.lower():
        return None
    segment = raw[len(prefix):].split(b"?")[0].split(b"/")[0]
    return unquote(segment.decode("ascii", "replace"))


def without_paths(request: Request, message: str) -> str:
    """``message`` with the server's data dir shown as ``<data dir>``: a client never learns the
    server's paths (the full message is in the server's log)."""
    state = getattr(request.app.state, "api", None)
    return message if state is None else hide_data_dir(message, state.settings.data_dir)


# A path goes on past its end with a name character: "/srv/d1" is not the start of "/srv/d10" nor of "/srv/d1.bak".
_NAME_GOES_ON = r"(?![\w\-~]|\.\w)"
_OPENS = r"(?:^|(?<=[\s'\"`(]))"  # where a relative path can start: the message's start, a space, a quote
_SEPARATORS = "/" + (re.escape(os.sep) if os.sep != "/" else "")


def hide_data_dir(message: str, data_dir: Path) -> str:
    """``message`` with each mention of the data dir as a path replaced by ``<data dir>``. Its absolute and
    resolved spellings wherever they stand as a path of their own (not inside a longer name); its relative
    spelling (``data``) where it opens a path (at the start, after a space or a quote) whose next component
    is in the data dir (``data/catalog.sqlite``): a source ID ``data/notes.md`` is the client's own name. A
    plain substring replace once read ``no source 'metadata/notes.md'`` as ``'meta<data dir>/notes.md'``, and
    a job ID 4c2eb0e67d19486c as ``4c2eb0e67<data dir>9486c`` with the data dir ``d1``."""
    absolute = {str(data_dir.resolve()), str(data_dir.absolute())}
    patterns = [rf"(?<![\w.\-~]){re.escape(shown)}{_NAME_GOES_ON}"
                for shown in sorted(absolute, key=len, reverse=True) if shown not in ("", ".", os.sep)]
    relative = str(data_dir)
    if relative not in absolute and relative not in ("", "."):
        patterns.append(rf"{_OPENS}{re.escape(relative)}(?=[{_SEPARATORS}](?P<first>[^\s{_SEPARATORS}'\"`]+))")
    if not patterns:
        return message

    def hidden(match: re.Match) -> str:
        first = match.groupdict().get("first")
        return HIDDEN_DATA_DIR if first is None or _holds(data_dir, first) else match.group(0)

    return re.sub("|".join(patterns), hidden, message)


def _holds(data_dir: Path, name: str) -> bool:
    """Whether the data dir holds ``name`` (trailing punctuation of a sentence aside)."""
    try:
        return (data_dir / name.rstrip(".,:;)]}")).exists()
    except (OSError, ValueError):
        return False


def _short(value, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def error_of(exc: Exception, job_id: str) -> dict[str, str]:
    """A failed job's error, coded like the API's error responses; anything else is the job store's
    internal error (logged with its traceback)."""
    if isinstance(exc, ApiError):
        return {"code": exc.code, "message": str(exc)}
    if isinstance(exc, AgentMemoryError):
        return {"code": status_for(exc)[1], "message": str(exc)}
    return internal_error(exc, job_id)
