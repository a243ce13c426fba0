"""Working memory over the HTTP API: sub-agents, per-session compaction settings, pure views."""

from __future__ import annotations

import os
import time

import httpx
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")

from agent_memory.api import create_app  # noqa: E402
from agent_memory.api.testing import serve_in_thread  # noqa: E402
from agent_memory.core.config import load_settings  # noqa: E402


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    settings = load_settings(data_dir=tmp_path_factory.mktemp("api-wm"), triple_extractor="rules",
                             llm_model=None)
    app = create_app(settings)
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=120) as http:
        yield http  # sessions need no model: no wait for /readyz


def texts(messages):
    return [m["content"] for m in messages if not m["content"].startswith("[Key entities]")]


def send(client, path, role, content, retention=None, **params):
    body = {"message": {"role": role, "content": content}}
    if retention:
        body["retention"] = retention
    response = client.post(f"{path}/messages", json=body, params=params)
    assert response.status_code == 200, response.text
    return response.json()


def test_sub_agents_are_reachable_through_the_api(client):
    path = "/v1/sessions/team"
    send(client, path, "user", "Plan the Lisbon offsite.")
    sent = send(client, path, "user", "Find three hotels near Alfama.", agent_id="researcher")
    assert sent["agent_id"] == "researcher" and sent["seq"] == 0  # its own history
    main = client.get(f"{path}/view").json()["messages"]
    helper = client.get(f"{path}/view", params={"agent_id": "researcher"}).json()
    assert texts(main) == ["Plan the Lisbon offsite."]
    assert helper["agent_id"] == "researcher"
    assert texts(helper["messages"]) == ["Find three hotels near Alfama."]
    missing = client.get(f"{path}/view", params={"agent_id": "nobody"})
    assert missing.status_code == 404 and "nobody" in missing.json()["error"]["message"]
    compacted = client.post(f"{path}/compact", params={"agent_id": "researcher"})
    assert compacted.status_code == 200 and compacted.json()["agent_id"] == "researcher"


def test_session_settings_through_the_api(client):
    path = "/v1/sessions/tuned"
    send(client, path, "user", "Start.")
    default = client.get(f"{path}/config").json()
    assert default["config"]["light"] == 0.6 and default["config"]["structural"] == 0.75
    assert default["config"]["llm"] == 0.88 and default["config"]["window_tokens"] == 64_000
    changed = client.put(f"{path}/config", json={"window_tokens": 600, "light": 0.5, "structural": 0.7, "llm": 0.8})
    assert changed.status_code == 200, changed.text
    assert changed.json()["config"]["window_tokens"] == 600 and changed.json()["config"]["llm"] == 0.8
    for i in range(30):
        send(client, path, "user", f"Pump P-{i} measured {100 + i * 7} litres today.", "fuzzy")
    stats = send(client, path, "user", "Which pump is best?", "strict")["stats"]
    assert stats["compactions"] >= 1 and stats["config"]["window_tokens"] == 600
    assert stats["utilization"] <= 0.8
    # Out of order thresholds and unknown keys are a 400 and a 422, not a 500; nothing changes.
    bad = client.put(f"{path}/config", json={"light": 0.95})
    assert bad.status_code == 400 and "light" in bad.json()["error"]["message"]
    assert client.put(f"{path}/config", json={"colour": "red"}).status_code == 422
    assert client.get(f"{path}/config").json()["config"]["light"] == 0.5


def test_views_through_the_api_change_nothing(client):
    path = "/v1/sessions/pure"
    for i in range(12):
        send(client, path, "user", f"Note {i}: shelf S-{i} holds {i * 3} boxes.")
    before = client.get(f"{path}/config").json()
    first = client.get(f"{path}/view", params={"budget": 2000}).json()["messages"]
    client.get(f"{path}/view", params={"budget": 30})
    client.get(f"{path}/view", params={"budget": 80})
    assert client.get(f"{path}/view", params={"budget": 2000}).json()["messages"] == first
    assert client.get(f"{path}/config").json() == before


def test_sessions_are_listed_and_deleted_with_their_archived_turns(client):
    send(client, "/v1/sessions/private", "user", "My passport number is P-7781 and I decided to fly on 2025-06-03.")
    send(client, "/v1/sessions/private", "assistant", "Noted.", agent_id="helper")
    send(client, "/v1/sessions/keep", "user", "Keep this one.")
    listed = client.get("/v1/sessions").json()["sessions"]
    private = next(s for s in listed if s["session_id"] == "private")
    assert private["messages"] == 2 and set(private["agents"]) == {None, "helper"}
    assert "keep" in [s["session_id"] for s in listed]
    only_mine = {"question": "What is my passport number?", "budget": 400,
                 "filters": {"source_ids": ["private/m0"]}}
    for _ in range(120):  # promotion runs off the request path
        asked = client.post("/v1/prompt", json=only_mine)
        if "P-7781" in asked.text:
            break
        time.sleep(0.25)
    assert asked.status_code == 200 and "P-7781" in asked.text  # promoted to long-term memory

    deleted = client.delete("/v1/sessions/private", params={"forget": "true"})
    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["messages"] == 2 and deleted.json()["sources"] >= 1
    assert "private" not in [s["session_id"] for s in client.get("/v1/sessions").json()["sessions"]]
    assert client.get("/v1/sessions/private/view").status_code == 404
    asked = client.post("/v1/prompt", json=only_mine)
    assert asked.status_code == 200 and "P-7781" not in asked.text
    assert client.delete("/v1/sessions/private").status_code == 404
    assert client.delete("/v1/sessions/keep").json() == {"session_id": "keep", "messages": 1, "sources": 0,
                                                         "items": 0, "triples": 0}
