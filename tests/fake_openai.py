"""A tiny OpenAI-compatible chat server on 127.0.0.1 for tests (stands in for a paid endpoint).

Usage::

    with FakeOpenAI() as fake:
        fake.enqueue(status=429)                 # first call: rate limited
        fake.enqueue(text="hello", delay=0.1)    # second call: answer after 100 ms
        client = LLMClient("fake-model", base_url=fake.base_url)
        ...
        fake.requests[-1]["messages"]            # what the client sent

When the queue is empty the server answers with ``responder(request_json)`` if one is
set (return a str or a :class:`Reply`), else with ``default_text``. Error replies carry
``retry-after-ms: 1`` so the openai client's backoff stays fast in tests.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


@dataclass
class Reply:
    text: str | None = "ok"
    status: int = 200
    delay: float = 0.0
    prompt_tokens: int = 11
    completion_tokens: int = 7
    body: Any = None  # a raw body (dict or str) to send instead of a completion
    headers: dict[str, str] = field(default_factory=dict)


class FakeOpenAI:
    def __init__(self, default_text: str = "ok", responder: Callable[[dict], Any] | None = None) -> None:
        self.default_text = default_text
        self.responder = responder
        self.requests: list[dict] = []
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting -------------------------------------------------------------------
    def enqueue(self, text: str | None = "ok", *, status: int = 200, delay: float = 0.0, **kw) -> None:
        with self._lock:
            self._queue.append(Reply(text=text, status=status, delay=delay, **kw))

    def _next_reply(self, request: dict) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None:
            produced = self.responder(request)
            return produced if isinstance(produced, Reply) else Reply(text=str(produced))
        return Reply(text=self.default_text)

    @property
    def base_url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    # -- lifecycle -------------------------------------------------------------------
    def start(self) -> "FakeOpenAI":
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    request = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    request = {"_raw": raw.decode("utf-8", "replace")}
                request["_path"] = self.path
                reply = fake._next_reply(request)
                if reply.delay:
                    time.sleep(reply.delay)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}}, {})
                    return
                if reply.body is not None:
                    self._send(reply.status, reply.body, reply.headers)
                elif reply.status >= 400:
                    headers = {"retry-after-ms": "1", **reply.headers}
                    self._send(reply.status, {"error": {"message": f"fake error {reply.status}",
                                                        "type": "fake"}}, headers)
                else:
                    self._send(200, _completion(request, reply), reply.headers)

            def _send(self, status: int, body: Any, headers: dict[str, str]) -> None:
                data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test); nothing to do

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> "FakeOpenAI":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _completion(request: dict, reply: Reply) -> dict:
    return {
        "id": f"chatcmpl-fake-{int(time.time() * 1000)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", "fake"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        },
    }
