"""A body limit on every endpoint: a request larger than its route allows is answered 413.

``/v1/documents`` and ``/v1/import`` have their own, larger limit (the upload limit) and stream their bodies
to disk (routes_documents.py, routes_export.py);
every other body (a session message, a question) is small, so it is read here up to the
limit, counted, and refused with 413 before any route parses or stores it. A declared
``Content-Length`` over the limit is refused before a byte is read; a chunked body without
one is counted as it arrives.

A JSON body on those two routes is read whole by the strict JSON check (strict.py) before the route sees it, so it
is counted here too, against the upload limit: a body too large is a 413 before anything parses it, where 2 GB of
malformed JSON was read whole and answered 422.
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


def is_json_body(scope) -> bool:
    """Whether a request's body is JSON by its content type (what the strict JSON check reads whole)."""
    if scope.get("method") in ("GET", "HEAD", "DELETE"):
        return False
    for name, value in scope.get("headers") or []:
        if name == b"content-type":
            kind = value.split(b";")[0].strip().lower()
            return kind == b"application/json" or kind.endswith(b"+json")
    return False


class BodyLimit:
    """Pure ASGI middleware (no buffering of what a route streams itself)."""

    def __init__(self, app, max_bytes: int = MAX_BODY_BYTES, upload_bytes: int | None = None) -> None:
        """``upload_bytes``: the limit of a JSON body on the routes with their own limit (None: theirs alone)."""
        self.app = app
        self.max_bytes = max_bytes
        self.upload_bytes = upload_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = self.max_bytes
        if scope["path"].startswith(OWN_LIMIT_PREFIXES):
            if self.upload_bytes is None or not is_json_body(scope):
                return await self.app(scope, receive, send)  # streamed to disk by the route, which counts it
            limit = self.upload_bytes
        declared = dict(scope.get("headers") or []).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > limit:
            await _drain(receive, int(declared))
            return await self._refuse(send, f"body of {int(declared)} bytes exceeds the limit of "
                                             f"{limit} bytes for {scope['path']}")
        messages, size = [], 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if size > limit:
                if message.get("more_body", False):
                    await _drain(receive, DRAIN_BYTES)
                return await self._refuse(send, f"body exceeds the limit of {limit} bytes for {scope['path']}")
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
