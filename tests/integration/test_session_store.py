"""Sessions on a real SQLite file: crash safety, reopening with compaction state, WAL."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

from agent_memory.conversation import CompactionConfig, SessionManager
from agent_memory.core.tokens import TiktokenCounter

COUNTER = TiktokenCounter("cl100k_base")
ROOT = Path(__file__).resolve().parents[2]


def test_killed_process_loses_no_appended_message(tmp_path):
    script = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(ROOT)!r})
        from agent_memory.conversation import SessionManager
        from agent_memory.core.tokens import EstimatingCounter
        manager = SessionManager({str(tmp_path)!r}, EstimatingCounter())
        session = manager.session("crash")
        for i in range(25):
            session.append({{"role": "user", "content": f"message {{i}}"}})
        os._exit(9)  # no close, no flush: like a crash right after the last append returned
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 9, proc.stderr
    manager = SessionManager(tmp_path, COUNTER)
    assert [m["content"] for m in manager.session("crash").messages()] == [f"message {i}" for i in range(25)]
    mode = sqlite3.connect(str(tmp_path / "sessions.sqlite3")).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
    manager.close()


def test_reopen_restores_compaction_state_and_view(tmp_path):
    config = CompactionConfig(window_tokens=500)
    first = SessionManager(tmp_path / "db.sqlite3", COUNTER, config=config)
    session = first.session("s", agent_id="planner")
    session.append({"role": "system", "content": "Plan trips."})
    for i in range(25):
        session.append({"role": "user", "content": f"Leg {i}: train T-{i} leaves at {i % 24}:15."})
        session.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": "seats", "arguments": f'{{"t": {i}}}'}}]})
        session.append({"role": "tool", "tool_call_id": f"c{i}", "content": f"{i * 3} seats free on T-{i}"})
    session.append({"role": "user", "content": "Which leg is cheapest?"})
    before_view, before_stats = session.view(500), session.stats()
    assert before_stats["compactions"] >= 1
    first.close()

    second = SessionManager(tmp_path / "db.sqlite3", COUNTER, config=config)
    again = second.session("s", agent_id="planner")
    assert again.view(500) == before_view
    after_stats = again.stats()
    for key in ("messages", "active_messages", "active_tokens", "compactions", "summaries", "micro_truncated",
                "unclassified_appends", "significant_turns"):
        assert after_stats[key] == before_stats[key], key
    assert second.summaries("s", agent_id="planner") == first_summaries_shape(second)
    assert second.sessions() == [("s", "planner")]
    assert second.recent_turns("s", 1, agent_id="planner") == [{"role": "user", "content": "Which leg is cheapest?"}]
    second.close()


def first_summaries_shape(manager):
    summaries = manager.summaries("s", agent_id="planner")
    assert summaries and all(s["text"] and s["first_seq"] <= s["last_seq"] for s in summaries)
    return summaries


def test_the_services_build_the_sessions_once_under_the_data_dir(tmp_path):
    from agent_memory.core.config import load_settings
    from agent_memory.services import Services

    services = Services(load_settings(data_dir=tmp_path, llm_model=None, postgres_url=None))
    manager = services.sessions
    assert services.sessions is manager  # one manager per process, sharing the services' token counter
    assert manager.counter is services.counter
    manager.session("x").append({"role": "user", "content": "hello"})
    assert (tmp_path / "sessions.sqlite3").exists()
    assert manager.summarizer is None  # no LLM configured: the offline summaries
    services.close()
    assert os.path.getsize(tmp_path / "sessions.sqlite3") > 0


def test_a_session_file_from_before_summaries_kept_line_vectors_gets_the_column_and_keeps_its_summaries(tmp_path):
    from agent_memory.stores.sqlite_sessions import SessionStore

    path = tmp_path / "sessions.sqlite3"
    with sqlite3.connect(str(path)) as db:  # the summaries table as an older version wrote it
        db.execute("CREATE TABLE summaries (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,"
                   " agent_id TEXT NOT NULL, first_seq INTEGER NOT NULL, last_seq INTEGER NOT NULL, tier INTEGER"
                   " NOT NULL, text TEXT NOT NULL, tokens INTEGER NOT NULL, method TEXT NOT NULL, validation TEXT"
                   " NOT NULL, created_at REAL NOT NULL)")
        db.execute("INSERT INTO summaries (session_id, agent_id, first_seq, last_seq, tier, text, tokens, method,"
                   " validation, created_at) VALUES ('acme/chat', '', 0, 3, 2, '- the port is 6543', 6,"
                   " 'structural', '{}', 1.0)")
    store = SessionStore(path)
    key = ("acme/chat", "")
    [(summary_id, text)] = store.summaries_without_line_vectors(key)
    assert text == "- the port is 6543" and [s["text"] for s in store.summaries(key)] == [text]
    store.save_summary_line_vectors(key, [(summary_id, '{"model": "m"}')])
    assert store.summary_line_vectors(key) == [(text, '{"model": "m"}')]
    store.close()
