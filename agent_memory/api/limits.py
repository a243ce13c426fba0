"""A body limit on every endpoint: a request larger than its route allows is answered 413.

``/v1/documents`` and ``/v1/import`` have their own, larger limit (the upload limit) and stream their bodies
to disk (routes_documents.py, routes_export.py);
every other body (a session message, a question) is small, so it is read here up to the
limit, counted, and refused with 413 before any route parses or stores it. A declared
``Content-Length`` over the limit is refused before a byte is read; a chunked body without
one is counted as it arrives.
"""

from __future__ import annotations

import json

MAX_BODY_BYTES = 4 * 1024 * 1024  # a session message or a question; documents have their own limit
OWN_LIMIT_PREFIXES = ("/v1/documents", "/v1/import")


# A refused body is read and dropped up to this much before the 413, so a client still sending gets
# the answer instead of a connection reset; past it the connection is simply closed.
DRAIN_BYTES = 8 * 1024 * 1024


async def _drain(receive, declared: int) -> None:
    if declared > DRAIN_BYTES:
        return
    left = DRAIN_BYTES
    while left > 0:
        message = await receive()
        if message["type"] != "http.request":
            return
        left -= len(message.get("body", b""))
        if not message.get("more_body", False):
            return


class BodyLimit:
    """Pure ASGI middleware (no buffering of what a route streams itself)."""

    def __init__(self, app, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"].startswith(OWN_LIMIT_PREFIXES):
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers") or []).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await _drain(receive, int(declared))
            return await self._refuse(send, f"body of {int(declared)} bytes exceeds the limit of "
                                             f"{self.max_bytes} bytes for {scope['path']}")
        messages, size = [], 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if size > self.max_bytes:
                if message.get("more_body", False):
                    await _drain(receive, DRAIN_BYTES)
                return await self._refuse(send, f"body exceeds the limit of {self.max_bytes} bytes for {scope['path']}")
            if not message.get("more_body", False):
                break

        async def replay():
            return messages.pop(0) if messages else await receive()

        return await self.app(scope, replay, send)

    @staticmethod
    async def _refuse(send, message: str) -> None:
        body = json.dumps({"error": {"code": "too_large", "message": message}}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})
