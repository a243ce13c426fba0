"""The message checks through both surfaces: ``Memory.add_message`` raises ValueError and the HTTP API
answers 400 naming the bad value, for a message a provider would refuse, a second result for one tool
call and a blank session ID (whose archived turns would be ``/m0``)."""

from __future__ import annotations

import httpx
import pytest

from tests.helpers import TOOL_CALL, TOOL_RESULT, sessions_api

CALL, RESULT = TOOL_CALL, TOOL_RESULT  # tests/helpers.py: one tool call and its result


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with sessions_api(tmp_path_factory.mktemp("api-checks")) as http:
        yield http


def post(client, session: str, message: dict) -> httpx.Response:
    return client.post(f"/v1/sessions/{session}/messages", json={"message": message})


def refused(response: httpx.Response) -> str:
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "bad_request"
    return response.json()["error"]["message"]


@pytest.mark.parametrize("message, words", [
    ({"role": "user", "content": None}, "user message needs content"),
    ({"role": "assistant"}, "assistant message needs content or tool_calls"),
    ({"role": "user", "content": "x", "extra_field": {"a": 1}}, "['extra_field']"),
])
def test_messages_a_provider_would_refuse_are_a_400(client, message, words):
    assert words in refused(post(client, "shapes", message))
    assert post(client, "shapes", {"role": "user", "content": "still here"}).status_code == 200
    view = client.get("/v1/sessions/shapes/view").json()["messages"]
    assert all(m.get("content") is not None and "extra_field" not in m for m in view)


def test_a_second_tool_result_is_a_400_and_the_view_has_one(client):
    assert post(client, "tools", CALL).status_code == 200
    assert post(client, "tools", RESULT).status_code == 200
    assert "['c1']" in refused(post(client, "tools", RESULT))
    view = client.get("/v1/sessions/tools/view").json()["messages"]
    assert [m for m in view if m["role"] == "tool"] == [RESULT]


def test_a_blank_session_id_is_a_422(client):
    # A bad path parameter, as one holding "/" or a control character (api/routes_sessions.py SessionId).
    answered = post(client, "%20", {"role": "user", "content": "hi"})
    assert answered.status_code == 422 and "got ' '" in answered.json()["error"]["message"], answered.text
    names = [s["session_id"] for s in client.get("/v1/sessions").json()["sessions"]]
    assert " " not in names


def test_memory_refuses_a_blank_session_id_and_a_second_result(settings):
    from agent_memory import Memory

    with Memory(settings=settings, tenant="acme") as memory:
        for blank in ("", "  "):
            with pytest.raises(ValueError, match=f"session IDs are non-blank strings .*; got {blank!r} \\(is blank\\)"):
                memory.add_message(blank, {"role": "user", "content": "hi"})
        assert memory.add_messages("s1", [CALL, RESULT]) == [0, 1]
        with pytest.raises(ValueError, match="repeated tool result"):
            memory.add_message("s1", RESULT)
        assert [s["session_id"] for s in memory.sessions()] == ["s1"]
