"""The MCP tools over a local Memory and through a server's HTTP API say the same things: the message
shapes ``remember`` takes, the ``notes`` of ``recall``, and error texts without Python class names or HTTP
statuses. Both servers run in-process (the SDK's in-memory client), over data dirs of their own."""

from __future__ import annotations

import anyio
import httpx
import pytest
from mcp.client import Client

from agent_memory.api.app import create_app
from agent_memory.api.testing import serve_in_thread, wait_ready
from agent_memory.core.config import load_settings
from agent_memory.mcp_server.server import build_server
from agent_memory.memory import Memory
from agent_memory.remote import RemoteMemory

NESTED = {"message": {"role": "user", "content": "We ship the X-300 on Friday."}, "retention": "strict"}
FLAT = {"role": "assistant", "content": "Noted: the X-300 ships on Friday.", "retention": "fuzzy"}


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    local = load_settings(data_dir=tmp_path_factory.mktemp("local"), triple_extractor="rules", tenant="acme")
    served = load_settings(data_dir=tmp_path_factory.mktemp("served"), triple_extractor="rules",
                           api_keys={"key-acme": "acme"})
    with Memory(settings=local) as memory, serve_in_thread(create_app(served)) as url, \
            httpx.Client(base_url=url, timeout=120) as http:
        wait_ready(http)
        with RemoteMemory(url, api_key="key-acme") as remote:
            yield {"local": build_server(memory, lambda ctx: "acme"), "remote": build_server(remote, lambda ctx: None)}


def call(server, tool: str, args: dict):
    async def run():
        async with Client(server) as client:
            return await client.call_tool(tool, args)

    result = anyio.run(run)
    text = "".join(block.text for block in result.content if getattr(block, "text", None))
    return result, text


@pytest.mark.parametrize("backend", ["local", "remote"])
def test_remember_takes_flat_and_nested_messages_and_refuses_both_at_once(servers, backend):
    server = servers[backend]
    stored, text = call(server, "remember", {"session_id": f"ship-{backend}", "messages": [NESTED, FLAT]})
    assert not stored.is_error, text
    assert stored.structured_content["seqs"] == [0, 1]
    view, _ = call(server, "session_view", {"session_id": f"ship-{backend}", "budget": 500})
    said = [m for m in view.structured_content["messages"] if m["role"] != "system"]  # the view's header
    assert [(m["role"], m["content"]) for m in said] == [("user", NESTED["message"]["content"]),
                                                       ("assistant", FLAT["content"])]

    both, text = call(server, "remember", {"session_id": "x", "messages": [{**FLAT, "message": NESTED["message"]}]})
    assert both.is_error and "'message'" in text and "'role'" in text and "not both" in text
    neither, text = call(server, "remember", {"session_id": "x", "messages": [{"content": "hi"}]})
    assert neither.is_error and "needs 'role'" in text and '"retention": "strict"' in text


@pytest.mark.parametrize("backend", ["local", "remote"])
def test_remember_stores_its_messages_whole_or_not_at_all(servers, backend):
    """A batch whose second message the session refuses (a result no call awaits) stores none of it, over a
    local memory and through a server alike: a server that appended message by message kept the first."""
    server, session = servers[backend], f"whole-{backend}"
    first = {"role": "user", "content": "Check the X-300 stock, please."}
    refused, text = call(server, "remember", {"session_id": session, "messages": [
        first, {"role": "tool", "tool_call_id": "nope", "content": "42 units"}]})
    assert refused.is_error and text.startswith("messages[1]: message answers tool call id(s) ['nope']"), text
    view, text = call(server, "session_view", {"session_id": session})
    assert view.is_error and text == f"no session '{session}' for this tenant"  # nothing of the batch stored
    stored, text = call(server, "remember", {"session_id": session, "messages": [first, FLAT]})
    assert not stored.is_error and stored.structured_content["seqs"] == [0, 1], text


def test_the_remember_tool_shows_both_shapes():
    from agent_memory.mcp_server.tools import TOOLS

    spec = TOOLS["remember"]
    assert '{"role": "user", "content": "Ship on Friday.", "retention": "strict"}' in spec.description
    assert '{"message": {"role": "user"' in spec.description
    shapes = spec.input.model_json_schema()["$defs"]["RememberMessage"]["anyOf"]
    assert {"role"} == set(shapes[0]["required"]) and {"message"} == set(shapes[1]["required"])


def test_recall_notes_an_unknown_session_and_an_empty_tenant_on_both_backends(servers):
    notes = {}
    for backend, server in servers.items():
        result, text = call(server, "recall", {"question": "When does the X-300 ship?", "budget": 300,
                                               "session_id": "no-such-chat"})
        assert not result.is_error, text
        notes[backend] = result.structured_content["notes"]
    for found in notes.values():
        assert "no session 'no-such-chat' for this tenant: no recent turns shared the budget" in found[-1]
    quiet, _ = call(servers["local"], "recall", {"question": "When does the X-300 ship?", "budget": 300,
                                                 "session_id": "ship-local"})
    assert quiet.structured_content["notes"] == []


@pytest.mark.parametrize("tool, args, expected", [
    ("recall", {"question": "Who ships?", "budget": 3}, "budget of 3 tokens is smaller than the question"),
    ("recall", {"question": "Who ships?", "budget": 300, "preset": "nope"}, "unknown retrieval preset 'nope'; known:"),
    ("recall", {"question": "Who ships?", "budget": 300, "question_date": "tuesday"},
     "question_date 'tuesday' is not a date (e.g. '2024-08-01')"),
    ("session_view", {"session_id": "ghost"}, "no session 'ghost' for this tenant"),
    ("session_delete", {"session_id": "ghost"}, "no session 'ghost' for this tenant"),
    ("forget", {"source_id": "ghost"}, "no source 'ghost' for this tenant"),
    ("remember", {"session_id": "s", "messages": [{"role": "user", "content": "x", "timestamp": "tuesday"}]},
     "messages[0]: message.timestamp must be ISO 8601"),
    ("remember", {"session_id": "s2", "messages": [{"role": "tool", "content": "x", "tool_call_id": "nope"}]},
     "messages[0]: message answers tool call id(s) ['nope']"),
    ("remember", {"documents": [{"source_id": "a/../b", "text": "x"}]}, "source_id 'a/../b' must be a relative"),
])
def test_errors_read_the_same_locally_and_through_a_server(servers, tool, args, expected):
    texts = {}
    for backend, server in servers.items():
        result, text = call(server, tool, args)
        assert result.is_error, (backend, text)
        assert text.startswith(expected), (backend, text)
        assert "Error" not in text and "HTTP" not in text, (backend, text)
        texts[backend] = text
    assert texts["local"] == texts["remote"]


def test_a_library_s_value_error_is_an_error_id_and_a_check_of_ours_names_the_value(servers, monkeypatch, caplog):
    """A tool's ValueError that no check of ours raised says only its error ID (its text may name a server path);
    one of our checks keeps its message with the bad value."""
    from agent_memory.mcp_server.tools import LocalBackend

    library_file = "/srv/agent/.venv/lib/python3.11/site-packages/numpy/core/fromnumeric.py"

    def library(*_a, **_k):
        raise ValueError(f"cannot reshape array of size 384 into shape (768,) ({library_file})")

    monkeypatch.setattr(LocalBackend, "recall", library)
    with caplog.at_level("WARNING", logger="agent_memory.mcp_server.server"):
        refused, text = call(servers["local"], "recall", {"question": "When does the X-300 ship?"})
    assert refused.is_error and "site-packages" not in text and "reshape" not in text, text
    error_id = text.rsplit(" ", 1)[-1]
    assert text == f"a value in the request could not be used; the server's log has the details under error ID {error_id}"
    assert any(error_id in record.getMessage() for record in caplog.records)
    monkeypatch.undo()
    ours, text = call(servers["local"], "remember", {"session_id": "s-bad", "messages": [{"role": "wizard", "content": "x"}]})
    assert ours.is_error and "'wizard'" in text, text
