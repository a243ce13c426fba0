"""``ttl_days`` ``"session"``: `agent-memory gc` (and ``POST /v1/gc``) removes the working-memory messages said
longer ago than it from their sessions, and the view says what went; ``"turn"`` alone leaves the sessions as
they are (it is long-term memory's rule)."""

from __future__ import annotations

import json
import time

import httpx

from agent_memory import Memory
from agent_memory.api import create_app
from agent_memory.api.testing import serve_in_thread
from agent_memory.core.config import load_settings
from tests.helpers import embedded_cli_env, run_cli

DAY = 86_400


def _two_months_of_chat(data_dir) -> None:
    """Session 'chat' of tenant acme: two exchanges 60 days ago, one today."""
    long_ago = time.time() - 60 * DAY
    with Memory(data_dir=data_dir, tenant="acme") as memory:
        for n, (question, reply) in enumerate([("My locker code is 7741.", "Noted: 7741."),
                                               ("The Oslo office opens at 8.", "Noted.")]):
            memory.add_message("chat", {"role": "user", "content": question, "timestamp": long_ago + n})
            memory.add_message("chat", {"role": "assistant", "content": reply, "timestamp": long_ago + n + 0.5})
        memory.add_message("chat", {"role": "user", "content": "What time does Oslo open?"})
        memory.add_message("chat", {"role": "assistant", "content": "At 8."})


def test_gc_removes_old_session_messages_only_under_a_session_rule(tmp_path, monkeypatch, capsys):
    data = tmp_path / "data"
    embedded_cli_env(monkeypatch, data)
    _two_months_of_chat(data)
    monkeypatch.setenv("AGENT_MEMORY_TTL_DAYS", json.dumps({"turn": 90}))
    code, out, err = run_cli(capsys, ["gc", "--tenant", "acme"])
    assert code == 0 and json.loads(out)["expired"]["session_messages"] == 0, err

    monkeypatch.setenv("AGENT_MEMORY_TTL_DAYS", json.dumps({"turn": 90, "session": 30}))
    code, out, err = run_cli(capsys, ["gc", "--tenant", "acme"])
    assert code == 0, err
    assert json.loads(out)["expired"] == {"sources": 0, "items": 0, "triples": 0, "session_messages": 4}
    with Memory(data_dir=data, tenant="acme") as memory:
        view = memory.view("chat", 1_000)
        assert "[Removed m0-m3 (time to live: said more than 30 days ago): 4 messages" in view[0]["content"]
        assert [m["content"] for m in view[1:]] == ["What time does Oslo open?", "At 8."]
        assert "7741" not in json.dumps(view)
        # Long-term memory keeps the archived turns for its own rule (90 days): recall still finds them.
        assert any("7741" in p.text for p in memory.search("locker code", limit=5))
        assert memory.add_message("chat", {"role": "user", "content": "Thanks."}) == 6


def test_post_gc_removes_them_for_the_callers_tenant(tmp_path):
    data = tmp_path / "data"
    _two_months_of_chat(data)
    settings = load_settings(data_dir=data, tenant="acme", triple_extractor="rules", llm_model=None,
                             ttl_days={"session": 30}, qdrant_url=None, neo4j_uri=None, postgres_url=None)
    with serve_in_thread(create_app(settings, warm=False)) as url, httpx.Client(base_url=url, timeout=120) as http:
        view = http.get("/v1/sessions/chat/view", params={"budget": 1_000})
        assert view.status_code == 200 and "7741" in view.text
        answered = http.post("/v1/gc")
        assert answered.status_code == 200 and answered.json()["expired"]["session_messages"] == 4, answered.text
        view = http.get("/v1/sessions/chat/view", params={"budget": 1_000})
        assert view.status_code == 200 and "7741" not in view.text and "[Removed m0-m3" in view.text


def test_a_session_whose_every_message_expired_stays_with_its_settings(tmp_path, monkeypatch, capsys):
    data = tmp_path / "data"
    embedded_cli_env(monkeypatch, data)
    long_ago = time.time() - 60 * DAY
    with Memory(data_dir=data, tenant="acme") as memory:
        memory.session("chat-1").configure(window_tokens=50_000)
        for session_id in ("chat-1", "chat-2"):  # chat-2: no settings of its own
            memory.add_messages(session_id, [{"role": "user" if n % 2 == 0 else "assistant",
                                              "content": f"Old note {n}.", "timestamp": long_ago + n}
                                             for n in range(50)])
    monkeypatch.setenv("AGENT_MEMORY_TTL_DAYS", json.dumps({"session": 30}))
    code, out, err = run_cli(capsys, ["gc", "--tenant", "acme"])
    assert code == 0 and json.loads(out)["expired"]["session_messages"] == 100, err
    with Memory(data_dir=data, tenant="acme") as memory:
        assert [(s["session_id"], s["messages"]) for s in memory.sessions()] == [("chat-1", 0), ("chat-2", 0)]
        view = memory.view("chat-1", 1_000)
        assert len(view) == 1 and "[Removed m0-m49 (time to live: said more than 30 days ago): 50 messages" in (
            view[0]["content"])
        assert memory.messages("chat-1") == []
        assert memory.session("chat-1").config.window_tokens == 50_000
        assert memory.add_message("chat-1", {"role": "user", "content": "Back again."}) == 50
        assert [m["seq"] for m in memory.messages("chat-1")] == [50]
        assert memory.messages("chat-2") == [] and "[Removed m0-m49" in memory.view("chat-2", 1_000)[0]["content"]
