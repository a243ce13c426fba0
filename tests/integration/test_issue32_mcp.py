"""Issue 32 over MCP: strict JSON on stdio and streamable HTTP (a NaN once panicked the vector engine,
killing the stdio process and every later HTTP request), malformed lines answered with JSON-RPC
errors, and ``recall`` honouring ``preset``, ``overrides`` and ``question_date``."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path

import anyio
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[2]
HARBOUR = "The harbour of Velmora opened in 1892 and handles four million tonnes of grain a year."
ENV = {"PYTHONPATH": str(ROOT), "AGENT_MEMORY_TRIPLE_EXTRACTOR": "none", "HF_HUB_OFFLINE": "1",
       "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "AGENT_MEMORY_NO_PROGRESS": "1"}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
NAN_CALL = (b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "recall", "arguments": '
            b'{"question": "When did the harbour open?", "filters": {"created_after": NaN}}}}')


def _text(result) -> str:
    return "".join(block.text for block in result.content if getattr(block, "text", None))


class RawStdio:
    """``agent-memory mcp`` as a subprocess, spoken to line by line."""

    def __init__(self, data_dir: Path) -> None:
        import os

        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agent_memory.cli", "--data-dir", str(data_dir), "mcp", "--tenant", "acme"],
            cwd=ROOT, env={**os.environ, **ENV}, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL)
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))

    def send(self, raw: bytes) -> None:
        self.proc.stdin.write(raw + b"\n")
        self.proc.stdin.flush()

    def reply(self, timeout: float = 300) -> dict:
        return self.lines.get(timeout=timeout)

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def test_stdio_answers_malformed_lines_and_nan_with_errors_and_keeps_serving(tmp_path):
    server = RawStdio(tmp_path / "data")
    try:
        server.send(b"this is not json")
        error = server.reply()
        assert error["id"] is None and error["error"]["code"] == -32700, error
        server.send(b'{"jsonrpc": "2.0", "id": 3, "method": 42}')
        invalid = server.reply()
        assert invalid["id"] == 3 and invalid["error"]["code"] == -32600, invalid
        server.send(json.dumps(INIT).encode())
        assert server.reply()["id"] == 1
        server.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode())
        remember = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "remember", "arguments": {
            "documents": [{"source_id": "harbour.md", "text": HARBOUR}]}}}
        server.send(json.dumps(remember).encode())
        assert not server.reply()["result"].get("isError")
        server.send(NAN_CALL)
        refused = server.reply()
        assert refused["error"]["code"] == -32700 and "NaN" in refused["error"]["message"], refused
        recall = {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "recall", "arguments": {
            "question": "When did the harbour of Velmora open?", "budget": 300}}}
        server.send(json.dumps(recall).encode())
        answer = server.reply()
        assert answer["id"] == 8 and "[S:harbour.md]" in answer["result"]["content"][0]["text"], answer
        assert server.proc.poll() is None  # still serving
    finally:
        server.close()


def test_stdio_recall_honours_preset_overrides_and_question_date(tmp_path):
    params = StdioServerParameters(command=sys.executable, args=["-m", "agent_memory.cli", "--data-dir",
                                                                 str(tmp_path / "data"), "mcp", "--tenant", "acme"],
                                   env=ENV, cwd=str(ROOT))

    async def scenario() -> None:
        async with Client(params, read_timeout_seconds=300) as client:
            stored = await client.call_tool("remember", {"documents": [{"source_id": "harbour.md", "text": HARBOUR}]})
            assert not stored.is_error, _text(stored)
            ask = {"question": "When did the harbour of Velmora open?", "budget": 300}
            dated = await client.call_tool("recall", {**ask, "question_date": "2024-08-01"})
            assert not dated.is_error and "(asked on 2024-08-01)" in _text(dated), _text(dated)
            unknown = await client.call_tool("recall", {**ask, "preset": "no-such-preset"})
            assert unknown.is_error and "no-such-preset" in _text(unknown)
            wrong = await client.call_tool("recall", {**ask, "overrides": {"no_such_setting": 1}})
            assert wrong.is_error and "no_such_setting" in _text(wrong)
            instructed = await client.call_tool("recall", {**ask, "overrides": {"instructions": "Answer in French."}})
            assert not instructed.is_error and "Answer in French." in _text(instructed)
            bad_date = await client.call_tool("recall", {**ask, "question_date": "not-a-date"})
            assert bad_date.is_error and "not-a-date" in _text(bad_date)

    anyio.run(scenario)


@pytest.fixture
def http_server(settings):
    from agent_memory.api.testing import serve_in_thread
    from agent_memory.mcp_server.server import http_app
    from agent_memory.memory import Memory

    settings = settings.model_copy(update={"api_keys": {"key-acme": "acme", "key-rival": "rival"},
                                           "triple_extractor": "none"})
    with Memory(settings=settings) as memory, serve_in_thread(http_app(memory, settings, "127.0.0.1")) as url:
        yield url, memory


def test_http_refuses_nan_with_a_parse_error_and_every_key_keeps_working(http_server, monkeypatch):
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    url, memory = http_server
    url += "/mcp"
    headers = {"X-API-Key": "key-acme", "Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}
    refused = httpx2.post(url, content=NAN_CALL, headers=headers)
    assert refused.status_code == 400 and refused.json()["error"]["code"] == -32700, refused.text

    async def call(key: str, tool: str, args: dict):
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=300) as http, \
                Client(streamable_http_client(url, http_client=http)) as client:
            return await client.call_tool(tool, args)

    class Panic(BaseException):
        pass

    def panic(*_a, **_k):
        raise Panic("the engine panicked")

    async def scenario() -> None:
        stored = await call("key-acme", "remember", {"documents": [{"source_id": "harbour.md", "text": HARBOUR}]})
        assert not stored.is_error, _text(stored)
        with monkeypatch.context() as patch:  # a panic inside a tool fails that call only
            patch.setattr(memory.services.vectors, "search_dense", panic)
            failed = await call("key-acme", "recall", {"question": "When did the harbour of Velmora open?"})
            assert failed.is_error and "internal" in _text(failed)
        mine = await call("key-acme", "recall", {"question": "When did the harbour of Velmora open?", "budget": 300})
        assert not mine.is_error and "[S:harbour.md]" in _text(mine)
        theirs = await call("key-rival", "search", {"query": "harbour"})
        assert not theirs.is_error

    anyio.run(scenario)


def test_http_refuses_a_body_over_the_limit_before_reading_it_and_serves_the_next(settings):
    """A tool's arguments may carry a document, so the MCP endpoint takes bodies up to the HTTP API's upload
    limit; past it a 413 names the limit (here lowered), with or without a declared length, and nothing parses it."""
    import httpx2

    from agent_memory.api.testing import serve_in_thread
    from agent_memory.mcp_server.server import http_app
    from agent_memory.memory import Memory

    settings = settings.model_copy(update={"api_keys": {"key-acme": "acme"}, "triple_extractor": "none"})
    headers = {"X-API-Key": "key-acme", "Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}
    big = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "remember", "arguments": ' \
          b'{"text": "' + b"x" * 5000 + b'"}}}'
    with Memory(settings=settings) as memory, \
            serve_in_thread(http_app(memory, settings, "127.0.0.1", max_body_bytes=4096)) as url:
        declared = httpx2.post(url + "/mcp", content=big, headers=headers)
        assert declared.status_code == 413 and "exceeds the limit of 4096 bytes" in declared.json()["error"]["message"]
        streamed = httpx2.post(url + "/mcp", content=iter([big[:3000], big[3000:]]), headers=headers)
        assert streamed.status_code == 413, streamed.text
        small = httpx2.post(url + "/mcp", content=NAN_CALL, headers=headers)  # under the limit: read, and refused as NaN
        assert small.status_code == 400 and small.json()["error"]["code"] == -32700
