"""Session edges through every surface: a null compaction threshold is a 422 naming it (not a 500), a
session's config set before its first message can be read back, and a batch of messages is checked
whole before any is appended (Python API and the MCP ``remember`` tool): a refused batch stores nothing
and the error names the refused message by its index."""

from __future__ import annotations

import anyio
import pytest

from tests.helpers import TOOL_CALL, TOOL_RESULT, sessions_api

CALL, RESULT = TOOL_CALL, TOOL_RESULT  # tests/helpers.py: one tool call and its result


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with sessions_api(tmp_path_factory.mktemp("api-edges")) as http:
        yield http


@pytest.mark.parametrize("field", ["light", "structural", "llm", "emergency", "target"])
def test_a_null_threshold_is_a_422_naming_it(client, field):
    path = "/v1/sessions/nulls/config"
    answer = client.put(path, json={field: None})
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"]["code"] == "invalid_request"
    assert field in answer.json()["error"]["message"] and "None" in answer.json()["error"]["message"]
    # Nothing was stored: the session still does not exist.
    assert client.get(path).status_code == 404


def test_a_null_window_still_means_never_compact_on_its_own(client):
    path = "/v1/sessions/no-window/config"
    answer = client.put(path, json={"window_tokens": None})
    assert answer.status_code == 200, answer.text
    assert answer.json()["config"]["window_tokens"] is None and answer.json()["utilization"] is None


def test_a_config_set_before_the_first_message_is_read_back(client):
    path = "/v1/sessions/h1"
    assert client.get(f"{path}/config").status_code == 404  # never written to
    put = client.put(f"{path}/config", json={"window_tokens": 300})
    assert put.status_code == 200, put.text
    got = client.get(f"{path}/config")
    assert got.status_code == 200, got.text
    assert got.json()["config"]["window_tokens"] == 300 and got.json()["session_id"] == "h1"
    # A sub-agent's config is its own: the main agent's settings do not make it exist.
    missing = client.get(f"{path}/config", params={"agent_id": "helper"})
    assert missing.status_code == 404 and "helper" in missing.json()["error"]["message"]
    assert client.put(f"{path}/config", params={"agent_id": "helper"}, json={"llm": 0.9}).status_code == 200
    helper = client.get(f"{path}/config", params={"agent_id": "helper"}).json()
    assert helper["config"]["llm"] == 0.9 and helper["agent_id"] == "helper"
    # The first message then runs under the stored window.
    sent = client.post(f"{path}/messages", json={"message": {"role": "user", "content": "Start."}})
    assert sent.status_code == 200 and sent.json()["stats"]["config"]["window_tokens"] == 300


LONG_ID = "x" * 10_000


@pytest.mark.parametrize("method, path, body", [
    ("POST", f"/v1/sessions/{LONG_ID}/messages", {"message": {"role": "user", "content": "hi"}}),
    ("GET", f"/v1/sessions/{LONG_ID}/view", None),
    ("DELETE", f"/v1/sessions/{LONG_ID}", None),
    ("POST", "/v1/prompt", {"question": "hi", "budget": 200, "session_id": LONG_ID}),
    # Within the length cap but refused by the session rule: worded by it, the ID cut at 80 characters.
    ("POST", f"/v1/sessions/{'y' * 200}%01/messages", {"message": {"role": "user", "content": "hi"}}),
])
def test_a_long_session_id_is_refused_without_echoing_it_whole(client, method, path, body):
    answer = client.request(method, path, json=body)
    assert answer.status_code in (400, 422), answer.text
    message = answer.json()["error"]["message"]
    assert "x" * 81 not in message and "y" * 81 not in message and len(message) < 500, message
    assert "session ID" in message or "at most 256 characters" in message, message


@pytest.fixture
def memory(settings):
    from agent_memory import Memory

    with Memory(settings=settings, tenant="acme") as mem:
        yield mem


def test_a_refused_batch_stores_nothing(memory):
    with pytest.raises(ValueError, match=r"messages\[1\]: message.content: a user message needs content"):
        memory.add_messages("q", [{"role": "user", "content": "first"}, {"role": "user", "content": None}])
    assert not memory.session_exists("q") and memory.session("q").messages() == []
    with pytest.raises(ValueError, match=r"messages\[2\].*\['zz'\].*orphan"):
        memory.add_messages("q", [CALL, RESULT, {"role": "tool", "tool_call_id": "zz", "content": "r"}])
    with pytest.raises(ValueError, match=r"messages\[2\].*\['c1'\].*repeated"):
        memory.add_messages("q", [CALL, RESULT, RESULT])
    with pytest.raises(ValueError, match=r"retention must be one of"):
        memory.add_messages("q", [{"role": "user", "content": "first"}], retention="sometimes")
    assert not memory.session_exists("q")
    # A call issued earlier in the session, answered in a later batch, is fine; answered twice is not.
    assert memory.add_messages("q", [{"role": "user", "content": "go"}, CALL]) == [0, 1]
    assert memory.add_messages("q", [RESULT, {"role": "assistant", "content": "done"}]) == [2, 3]
    with pytest.raises(ValueError, match=r"messages\[1\].*repeated"):
        memory.add_messages("q", [{"role": "user", "content": "again"}, RESULT])
    assert len(memory.session("q").messages()) == 4


def test_a_refused_remember_over_mcp_stores_nothing(memory):
    from mcp.client import Client

    from agent_memory.mcp_server.server import build_server

    async def scenario():
        async with Client(build_server(memory, lambda ctx: memory.tenant)) as mcp:
            bad = await mcp.call_tool("remember", {
                "session_id": "q", "documents": [{"source_id": "notes/q", "text": "A note that must not land."}],
                "messages": [{"message": {"role": "user", "content": "first"}},
                             {"message": {"role": "user", "content": None}}]})
            good = await mcp.call_tool("remember", {
                "session_id": "q", "messages": [{"message": {"role": "user", "content": "first"}}]})
            return bad, good

    bad, good = anyio.run(scenario)
    text = "".join(block.text for block in bad.content if getattr(block, "text", None))
    assert bad.is_error and "messages[1]" in text and "needs content" in text
    assert good.structured_content["seqs"] == [0]  # the refused call appended nothing before it
    assert [m["content"] for m in memory.session("q").messages()] == ["first"]
    assert memory.services.catalog.get_many("acme", ["notes/q"]) == {}


def test_remember_over_a_server_checks_every_shape_before_any_request():
    from agent_memory.mcp_server.tools import RememberIn, RemoteBackend

    class Recorder:  # stands in for RemoteMemory: any request it sees would be a write
        def __init__(self):
            self.calls = []

        def add(self, *args, **kwargs):
            self.calls.append(("add", args))
            return ["notes/q"]

        def add_message(self, *args, **kwargs):
            self.calls.append(("add_message", args))
            return len(self.calls) - 1

    remote = Recorder()
    args = RememberIn.model_validate({
        "session_id": "q", "documents": [{"source_id": "notes/q", "text": "A note that must not land."}],
        "messages": [{"message": {"role": "user", "content": "first"}},
                     {"message": {"role": "assistant"}}]})
    with pytest.raises(ValueError, match=r"messages\[1\]: message.content: an assistant message needs"):
        RemoteBackend(remote).remember(None, args)
    assert remote.calls == []
