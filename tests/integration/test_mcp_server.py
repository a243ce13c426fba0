"""The MCP server end to end: the official ``mcp`` client against ``agent-memory mcp`` as a real
subprocess over stdio (and the streamable HTTP app under uvicorn with API keys)."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[2]
SENSORS = "The X-300 sensor replaced the X-200 in 2025. It reads humidity every ten seconds."
BAKERY = "Greta Lind founded the Orbital Bakery in Malmo in 2019; it bakes cardamom buns."


def _text(result) -> str:
    return "".join(block.text for block in result.content if getattr(block, "text", None))


def _server(data_dir: Path) -> StdioServerParameters:
    env = {"PYTHONPATH": str(ROOT), "AGENT_MEMORY_TRIPLE_EXTRACTOR": "rules", "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "TRANSFORMERS_VERBOSITY": "error"}
    return StdioServerParameters(command=sys.executable, args=["-m", "agent_memory.cli", "--data-dir", str(data_dir),
                                                               "mcp", "--tenant", "acme"], env=env, cwd=str(ROOT))


def test_remember_recall_search_view_forget_over_stdio(tmp_path):
    async def scenario() -> None:
        async with Client(_server(tmp_path / "data"), read_timeout_seconds=300) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == {"remember", "recall", "search", "forget", "session_view", "session_list",
                                  "session_delete"}
            # The schemas are the HTTP API's models: the ask body (less the answer length), DocumentIn ...
            recall_props = tools["recall"].input_schema["properties"]
            assert {"question", "budget", "session_id", "filters"} <= set(recall_props)
            assert "max_answer_tokens" not in recall_props
            assert "DocumentIn" in tools["remember"].input_schema["$defs"]

            stored = await client.call_tool("remember", {
                "documents": [{"source_id": "notes/sensors", "text": SENSORS},
                              {"source_id": "notes/bakery", "text": BAKERY}],
                "session_id": "chat-1",
                "messages": [{"message": {"role": "user", "content": "We ordered 40 units of the X-300."},
                              "retention": "strict"}]})
            assert not stored.is_error, _text(stored)
            assert stored.structured_content["source_ids"] == ["notes/sensors", "notes/bakery"]
            assert stored.structured_content["seqs"] == [0]

            recalled = await client.call_tool("recall", {"question": "Which sensor replaced the X-200?",
                                                         "budget": 300, "session_id": "chat-1"})
            assert not recalled.is_error, _text(recalled)
            prompt = _text(recalled)
            assert "[S:notes/sensors]" in prompt and "[S:chat-1/m0]" in prompt
            assert recalled.structured_content["tokens"] <= 300 == recalled.structured_content["budget"]
            assert "notes/sensors" in recalled.structured_content["sources"]

            found = await client.call_tool("search", {"query": "cardamom buns bakery founder", "limit": 3})
            passages = found.structured_content["passages"]
            assert passages[0]["source_id"] == "notes/bakery"
            assert [p["score"] for p in passages] == sorted((p["score"] for p in passages), reverse=True)

            view = await client.call_tool("session_view", {"session_id": "chat-1", "budget": 200})
            assert view.structured_content["tokens"] <= 200
            assert any("40 units" in str(m["content"]) for m in view.structured_content["messages"])

            forgotten = await client.call_tool("forget", {"source_id": "notes/sensors"})
            assert forgotten.structured_content["sources"] == 1, _text(forgotten)
            after = await client.call_tool("recall", {"question": "Which sensor replaced the X-200?", "budget": 160})
            assert "[S:notes/sensors]" not in _text(after)

            again = await client.call_tool("forget", {"source_id": "notes/sensors"})
            assert again.is_error and "notes/sensors" in _text(again)
            bad = await client.call_tool("recall", {"question": "", "budget": 0})
            assert bad.is_error and "question" in _text(bad) and "budget" in _text(bad)
            unknown = await client.call_tool("session_view", {"session_id": "nobody"})
            assert unknown.is_error and "nobody" in _text(unknown)

            listed = await client.call_tool("session_list", {})
            assert [s["session_id"] for s in listed.structured_content["sessions"]] == ["chat-1"]
            deleted = await client.call_tool("session_delete", {"session_id": "chat-1", "forget": True})
            assert not deleted.is_error and deleted.structured_content["messages"] == 1, _text(deleted)
            assert (await client.call_tool("session_list", {})).structured_content["sessions"] == []
            gone = await client.call_tool("recall", {"question": "How many X-300 units did we order?",
                                                     "budget": 300})
            assert "40 units" not in _text(gone)
            again = await client.call_tool("session_delete", {"session_id": "chat-1"})
            assert again.is_error and "chat-1" in _text(again)

    anyio.run(scenario)


@pytest.fixture
def http_server(settings):
    from agent_memory.api.testing import serve_in_thread
    from agent_memory.mcp_server.server import http_app
    from agent_memory.memory import Memory

    settings = settings.model_copy(update={"api_keys": {"key-acme": "acme", "key-rival": "rival"}})
    with Memory(settings=settings) as memory, serve_in_thread(http_app(memory, settings, "127.0.0.1")) as url:
        yield url


def test_http_needs_a_key_and_scopes_each_key_to_its_tenant(http_server):
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    url = http_server + "/mcp"
    refused = httpx2.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert refused.status_code == 401 and "API key" in refused.text
    assert httpx2.post(url, json={}, headers={"X-API-Key": "wrong"}).status_code == 401

    async def call(key: str, tool: str, args: dict):
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=300) as http, \
                Client(streamable_http_client(url, http_client=http)) as client:
            return await client.call_tool(tool, args)

    async def scenario() -> None:
        stored = await call("key-acme", "remember", {"documents": [{"source_id": "vault", "text": BAKERY}]})
        assert not stored.is_error, _text(stored)
        mine = await call("key-acme", "recall", {"question": "Who founded the Orbital Bakery?", "budget": 200})
        assert "[S:vault]" in _text(mine)
        theirs = await call("key-rival", "recall", {"question": "Who founded the Orbital Bakery?", "budget": 200})
        assert "[S:vault]" not in _text(theirs) and "Greta" not in _text(theirs)

    anyio.run(scenario)

