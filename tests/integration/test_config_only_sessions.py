"""A session whose config was set before its first message exists: the config reads back, so the
session is listed (with zero messages) and can be deleted, through the HTTP API, ``Memory`` and the MCP
tools alike; the delete removes its config, after which reading it answers 404.
"""

from __future__ import annotations

import anyio
import pytest

from tests.helpers import sessions_api


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with sessions_api(tmp_path_factory.mktemp("config-only")) as http:
        yield http


def test_a_config_only_session_is_listed_and_deleted_over_http(client):
    assert client.put("/v1/sessions/cfg1/config", json={"window_tokens": 300}).status_code == 200
    assert client.get("/v1/sessions/cfg1/config").status_code == 200
    listed = {s["session_id"]: s for s in client.get("/v1/sessions").json()["sessions"]}
    assert "cfg1" in listed, listed
    assert listed["cfg1"]["messages"] == 0 and listed["cfg1"]["agents"] == [None]
    deleted = client.delete("/v1/sessions/cfg1")
    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["messages"] == 0
    assert client.get("/v1/sessions/cfg1/config").status_code == 404  # its config went with it
    assert "cfg1" not in {s["session_id"] for s in client.get("/v1/sessions").json()["sessions"]}
    assert client.delete("/v1/sessions/cfg1").status_code == 404


def test_a_sub_agents_config_alone_lists_the_session_under_that_agent(client):
    put = client.put("/v1/sessions/cfg2/config", params={"agent_id": "helper"}, json={"llm": 0.9})
    assert put.status_code == 200, put.text
    listed = {s["session_id"]: s for s in client.get("/v1/sessions").json()["sessions"]}
    assert listed["cfg2"]["agents"] == ["helper"] and listed["cfg2"]["messages"] == 0
    assert client.delete("/v1/sessions/cfg2").status_code == 200
    assert client.get("/v1/sessions/cfg2/config", params={"agent_id": "helper"}).status_code == 404


@pytest.fixture
def memory(settings):
    from agent_memory import Memory

    with Memory(settings=settings, tenant="acme") as mem:
        yield mem


def test_a_config_only_session_is_listed_and_deleted_by_memory(memory):
    memory.session("cfg").configure(window_tokens=300)
    assert memory.session_configured("cfg")
    assert [(s["session_id"], s["messages"]) for s in memory.sessions()] == [("cfg", 0)]
    assert memory.delete_session("cfg")["messages"] == 0
    assert not memory.session_configured("cfg") and memory.sessions() == []


def test_a_config_only_session_is_listed_and_deleted_over_mcp(memory):
    from mcp.client import Client

    from agent_memory.mcp_server.server import build_server

    memory.session("cfg").configure(window_tokens=300)

    async def scenario():
        async with Client(build_server(memory, lambda ctx: memory.tenant)) as mcp:
            listed = await mcp.call_tool("session_list", {})
            deleted = await mcp.call_tool("session_delete", {"session_id": "cfg"})
            return listed, deleted

    listed, deleted = anyio.run(scenario)
    assert [s["session_id"] for s in listed.structured_content["sessions"]] == ["cfg"]
    assert not deleted.is_error and deleted.structured_content["messages"] == 0
    assert not memory.session_configured("cfg")
