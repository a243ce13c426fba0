"""HTTP at its edges, before any route: ``HEAD`` and paths that are not UTF-8.

FastAPI's routes answer only the methods they declare, so ``HEAD /healthz`` (what many load balancers
and uptime checks send) was a 405. ``HeadAsGet`` answers every ``HEAD`` as its ``GET``, headers
included, without the body (RFC 9110 §9.3.2).

The server decodes a percent-encoded path with replacement characters, so ``/v1/sessions/%ff`` and
``/v1/sessions/%fe`` both became the session ``'\\ufffd'``: two IDs silently one. ``Utf8Path`` refuses a
path whose percent-escapes are not UTF-8 (400 naming it) before a route sees it.
"""

from __future__ import annotations

import json
from urllib.parse import unquote_to_bytes


class HeadAsGet:
    """Pure ASGI middleware: a ``HEAD`` request runs as ``GET``; its response body is dropped."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("method") != "HEAD":
            return await self.app(scope, receive, send)

        async def headers_only(message):
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return  # the rest follows; only the last (empty) part is sent
                message = {"type": "http.response.body", "body": b""}
            await send(message)

        return await self.app({**scope, "method": "GET"}, receive, headers_only)


class Utf8Path:
    """Pure ASGI middleware: 400 for a path whose percent-decoded bytes are not UTF-8."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            raw = scope.get("raw_path") or scope.get("path", "").encode("utf-8", "surrogateescape")
            try:
                unquote_to_bytes(raw.split(b"?")[0]).decode("utf-8")
            except UnicodeDecodeError:
                shown = raw.decode("ascii", "backslashreplace")[:300]
                body = json.dumps({"error": {"code": "bad_request", "message":
                                             f"the path is not UTF-8 once percent-decoded: {shown!r}"}}).encode()
                await send({"type": "http.response.start", "status": 400,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return None
        return await self.app(scope, receive, send)
