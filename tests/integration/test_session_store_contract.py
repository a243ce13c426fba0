"""One contract for every session storage: SQLite (embedded default) and PostgreSQL (shared).

The storage is exercised directly and through SessionManager (append, compaction, reopen).
PostgreSQL runs against the server scripts/test.sh starts, each test in a fresh schema.
"""

from __future__ import annotations

import pytest
from postgres_support import BackendOpener, postgres_param

from agent_memory.conversation import CompactionConfig, SessionManager
from agent_memory.core.errors import BackupError, StoreError
from agent_memory.core.tokens import TiktokenCounter
from agent_memory.stores.session_storage import NewMessage, SessionStorage
from agent_memory.stores.sqlite_sessions import SessionStore

COUNTER = TiktokenCounter("cl100k_base")
KEY = ("acme/chat", "")


class Opener(BackendOpener):
    def open_sqlite(self, tmp_path) -> SessionStorage:
        return SessionStore(tmp_path / "sessions.sqlite3", synchronous="OFF")

    def open_postgres(self, db) -> SessionStorage:
        from agent_memory.stores.postgres_sessions import PostgresSessionStore

        return PostgresSessionStore(db)

    def manager(self, **kwargs) -> SessionManager:
        return SessionManager(self.tmp_path / "unused.sqlite3", COUNTER, store=self(), **kwargs)


@pytest.fixture(params=["sqlite", postgres_param()])
def opener(request, tmp_path):
    op = Opener(request.param, tmp_path)
    yield op
    op.cleanup()


def append(store, seq: int, content: str, key=KEY, entities=()) -> None:
    store.append(key, seq, {"role": "user", "content": content}, retention="normal", unclassified=seq % 2 == 1,
                 tokens=len(content), significant=seq == 0, entities=entities, tokenizer="cl100k_base")


def test_a_message_row_says_whether_its_time_was_its_own_timestamp(opener):
    """What a reopened session rebuilds its timeline of undated messages from (conversation/timeline.py)."""
    store = opener()
    store.append_many(KEY, [NewMessage(0, {"role": "user", "content": "dated"}, "normal", False, 1, False,
                                       created_at=1_683_554_160.0, stated=True),
                            NewMessage(1, {"role": "user", "content": "undated"}, "normal", False, 1, False,
                                       stated=False)])
    append(store, 2, "not recorded")
    assert [(r["seq"], r["stated"]) for r in store.load_messages(KEY)] == [(0, True), (1, False), (2, None)]
    assert [r["stated"] for r in store.messages_after(KEY, 0)] == [False, None]


def test_messages_round_trip_in_order_and_stay_per_key(opener):
    store = opener()
    assert isinstance(store, SessionStorage)
    for seq in range(5):
        append(store, seq, f"message {seq} — ünïcode 你好")
    append(store, 0, "other agent", key=("acme/chat", "planner"))
    rows = store.load_messages(KEY)
    assert [r["seq"] for r in rows] == [0, 1, 2, 3, 4]
    assert rows[1] == {"seq": 1, "retention": "normal", "unclassified": True, "status": "active",
                       "message": {"role": "user", "content": "message 1 — ünïcode 你好"},
                       "tokens": len("message 1 — ünïcode 你好"), "significant": False,
                       "created_at": rows[1]["created_at"], "tokenizer": "cl100k_base", "stated": None}
    assert rows[0]["significant"] and not rows[0]["unclassified"]
    assert [m["content"] for m in store.recent(KEY, 2)] == ["message 3 — ünïcode 你好", "message 4 — ünïcode 你好"]
    assert store.sessions() == [("acme/chat", ""), ("acme/chat", "planner")]
    assert store.load_messages(("nobody", "")) == [] and store.load_state(("nobody", "")) == {}


def test_archive_mark_rises_only_and_names_the_sessions_behind_it(opener):
    store = opener()
    other = ("acme/chat", "planner")
    assert store.archived_through(KEY) == -1 and store.unarchived() == []
    for seq in range(3):
        append(store, seq, f"message {seq}")
    store.append(other, 0, {"role": "user", "content": "said in 2023"}, retention="fuzzy", unclassified=False,
                 tokens=3, significant=False, entities=(), created_at=1_683_554_160.0)
    assert store.unarchived() == [KEY, other]
    assert store.load_messages(other)[0]["created_at"] == 1_683_554_160.0
    store.mark_archived(KEY, 1)
    assert store.archived_through(KEY) == 1
    assert [r["seq"] for r in store.messages_after(KEY, 1)] == [2]
    store.mark_archived(KEY, 0)  # an archiver finishing late never lowers the mark
    assert store.archived_through(KEY) == 1
    store.mark_archived(KEY, 2)
    store.mark_archived(other, 0)
    assert store.unarchived() == [] and store.messages_after(KEY, 2) == []


def test_redate_changes_only_the_times_of_the_named_messages(opener):
    store = opener()
    for seq in range(3):
        append(store, seq, f"message {seq}")
    append(store, 0, "other agent", key=("acme/chat", "planner"))
    before = store.load_messages(KEY)
    store.redate(KEY, [(1, 1_683_554_400.0)])
    after = store.load_messages(KEY)
    assert after[1]["created_at"] == 1_683_554_400.0 and after[1]["message"] == before[1]["message"]
    assert [after[0], after[2]] == [before[0], before[2]]
    assert store.load_messages(("acme/chat", "planner"))[0]["created_at"] != 1_683_554_400.0
    assert store.messages_after(KEY, 0)[0]["created_at"] == 1_683_554_400.0


def test_a_second_append_at_one_seq_is_refused_and_changes_nothing(opener):
    store = opener()
    append(store, 0, "first", entities=["Paris"])
    with pytest.raises(StoreError):
        append(store, 0, "again", entities=["Berlin"])
    assert [r["message"]["content"] for r in store.load_messages(KEY)] == ["first"]
    assert store.entities(KEY) == [("Paris", 1, 0)]


def test_entities_count_and_order(opener):
    store = opener()
    append(store, 0, "a", entities=["Paris", "Anna"])
    append(store, 1, "b", entities=["Paris"])
    append(store, 2, "c", entities=["Bob"])
    assert store.entities(KEY) == [("Paris", 2, 1), ("Bob", 1, 2), ("Anna", 1, 0)]
    assert store.entities(KEY, limit=1) == [("Paris", 2, 1)]


def test_compact_marks_span_adds_summary_and_saves_state_together(opener):
    store = opener()
    for seq in range(4):
        append(store, seq, f"m{seq}")
    summary = {"first_seq": 0, "last_seq": 1, "tier": 1, "text": "m0 and m1", "tokens": 3, "method": "structural",
               "validation": {"ok": True}}
    store.compact(KEY, [0, 1], "summarized", summary, {"compactions": 1})
    assert [r["status"] for r in store.load_messages(KEY)] == ["summarized", "summarized", "active", "active"]
    [saved] = store.summaries(KEY)
    assert {k: saved[k] for k in summary} == summary and saved["created_at"] > 0
    assert store.load_state(KEY) == {"compactions": 1}
    store.save_state(KEY, {"compactions": 2, "config": {"window_tokens": 900}})
    assert store.load_state(KEY) == {"compactions": 2, "config": {"window_tokens": 900}}
    store.compact(KEY, [], "dropped", None, {"compactions": 3})
    assert len(store.summaries(KEY)) == 1 and store.load_state(KEY) == {"compactions": 3}


def test_a_summarys_line_vectors_are_stored_after_it_and_a_marker_has_none(opener):
    store = opener()
    for seq in range(4):
        append(store, seq, f"m{seq}")
    summary = {"first_seq": 0, "last_seq": 1, "tier": 2, "text": "- m0 and m1", "tokens": 3, "method": "structural",
               "validation": {"ok": True}}
    marker = {**summary, "first_seq": 2, "last_seq": 2, "text": "[Dropped m2]", "method": "marker"}
    store.compact(KEY, [0, 1], "summarized", summary, {})
    store.compact(KEY, [2], "dropped", marker, {})
    [(summary_id, text)] = store.summaries_without_line_vectors(KEY)
    assert text == "- m0 and m1" and store.summary_line_vectors(KEY) == []
    store.save_summary_line_vectors(KEY, [(summary_id, '{"model": "m"}')])
    store.save_summary_line_vectors(("acme/other", ""), [(summary_id, '{"model": "other"}')])  # not its row
    assert store.summaries_without_line_vectors(KEY) == []
    assert store.summary_line_vectors(KEY) == [("- m0 and m1", '{"model": "m"}')]
    assert [s["text"] for s in store.summaries(KEY)] == ["- m0 and m1", "[Dropped m2]"]


def test_manager_reopen_restores_view_and_compaction(opener):
    config = CompactionConfig(window_tokens=500)
    first = opener.manager(config=config)
    session = first.session("s", agent_id="planner")
    session.append({"role": "system", "content": "Plan trips."})
    for i in range(25):
        session.append({"role": "user", "content": f"Leg {i}: train T-{i} leaves at {i % 24}:15."})
        session.append({"role": "assistant", "content": f"Noted leg {i}."})
    session.append({"role": "user", "content": "Which leg is cheapest?"})
    before_view, before_stats = session.view(500), session.stats()
    assert before_stats["compactions"] >= 1
    first.close()

    second = opener.manager(config=config)
    again = second.session("s", agent_id="planner")
    assert again.view(500) == before_view
    assert again.stats()["compactions"] == before_stats["compactions"]
    assert len(again.messages()) == 52
    assert second.sessions() == [("s", "planner")]
    assert second.recent_turns("s", 1, agent_id="planner") == [{"role": "user", "content": "Which leg is cheapest?"}]
    second.close()


@pytest.mark.parametrize("backend", [postgres_param()])
def test_working_memory_keeps_sessions_on_postgres_when_configured(backend, tmp_path):
    from postgres_support import POSTGRES_URL

    from agent_memory.conversation.working_memory import WorkingMemory
    from agent_memory.core.config import load_settings
    from agent_memory.services import build_services
    from agent_memory.stores.postgres_sessions import PostgresSessionStore

    with build_services(load_settings(data_dir=tmp_path, postgres_url=POSTGRES_URL, llm_model=None)) as services:
        memory = WorkingMemory(services)
        assert isinstance(memory.sessions.store, PostgresSessionStore)
        tenant = f"t-{tmp_path.name}"
        memory.session(tenant, "chat").append({"role": "user", "content": "kept in PostgreSQL"})
        assert memory.exists(tenant, "chat")
        memory.close()
    assert not (tmp_path / "sessions.sqlite3").exists()


def test_sessions_are_listed_by_prefix_and_deleted_with_every_row(opener):
    store = opener()
    append(store, 0, "a", entities=["Paris"])
    append(store, 1, "b")
    append(store, 0, "sub", key=("acme/chat", "planner"))
    append(store, 0, "other tenant", key=("rival/chat", ""))
    append(store, 0, "wildcards stay literal", key=("ac%e/x", ""))
    store.compact(KEY, [0], "summarized", {"first_seq": 0, "last_seq": 0, "tier": 2, "text": "s", "tokens": 1,
                                           "method": "structural", "validation": {}}, {"compactions": 1})
    rows = store.session_rows("acme/")
    assert [(r["session_id"], r["agent_id"], r["messages"], r["last_seq"]) for r in rows] == [
        ("acme/chat", "", 2, 1), ("acme/chat", "planner", 1, 0)]
    assert rows[0]["created_at"] <= rows[0]["updated_at"]
    assert store.session_rows("ac%") == [r for r in store.session_rows("") if r["session_id"] == "ac%e/x"]
    assert store.delete("acme/chat") == 3
    for key in (KEY, ("acme/chat", "planner")):
        assert store.load_messages(key) == [] and store.summaries(key) == []
        assert store.entities(key) == [] and store.load_state(key) == {}
    assert store.session_rows("acme/") == [] and store.delete("acme/chat") == 0
    assert [m["content"] for m in store.recent(("rival/chat", ""), 5)] == ["other tenant"]
    append(store, 0, "a new start at seq 0")  # the same key can be used again
    assert [r["message"]["content"] for r in store.load_messages(KEY)] == ["a new start at seq 0"]


def test_a_session_with_settings_and_no_message_is_listed_with_no_times(opener):
    store = opener()
    store.save_state(("acme/fresh", ""), {"config": {"window_tokens": 300}})
    append(store, 0, "a")
    store.save_state(KEY, {"config": {"window_tokens": 500}})  # settings beside messages: listed once
    rows = store.session_rows("acme/")
    assert [(r["session_id"], r["agent_id"], r["messages"], r["last_seq"]) for r in rows] == [
        ("acme/chat", "", 1, 0), ("acme/fresh", "", 0, -1)]
    assert rows[1]["created_at"] is None and rows[1]["updated_at"] is None
    assert store.delete("acme/fresh") == 0
    assert [r["session_id"] for r in store.session_rows("acme/")] == ["acme/chat"]


def test_a_deleted_session_starts_empty_through_the_manager(opener):
    manager = opener.manager()
    session = manager.session("acme/chat")
    session.append({"role": "user", "content": "Remember order 7781."})
    manager.session("acme/chat", "planner").append({"role": "user", "content": "Plan it."})
    assert manager.delete("acme/chat") == 2
    fresh = manager.session("acme/chat")
    assert fresh.messages() == [] and fresh.append({"role": "user", "content": "Hi."}) == 0


MARKER_ROW = {"first_seq": 0, "last_seq": 2, "tier": 0, "text": "[Removed m1-m2]", "tokens": 4, "method": "marker",
              "validation": {"messages": 2, "tokens": 2, "tools": {}, "removed": True}}


def test_remove_through_takes_the_oldest_messages_with_what_ends_among_them(opener):
    store = opener()
    store.append(KEY, 0, {"role": "system", "content": "Be brief."}, retention="strict", unclassified=False,
                 tokens=3, significant=False, entities=())
    append(store, 1, "a", entities=["Paris"])
    append(store, 2, "b", entities=["Oslo"])
    append(store, 3, "c", entities=["Oslo"])
    store.compact(KEY, [1, 2], "summarized", {"first_seq": 1, "last_seq": 2, "tier": 2, "text": "a, b", "tokens": 2,
                                              "method": "structural", "validation": {}}, {"compactions": 1})
    store.compact(KEY, [], "dropped", {"first_seq": 3, "last_seq": 3, "tier": 2, "text": "c", "tokens": 1,
                                       "method": "structural", "validation": {}}, {"compactions": 2})
    store.mark_archived(KEY, 3)
    assert store.remove_through(KEY, 2, MARKER_ROW, keep_roles=("system", "developer")) == 2
    assert [r["seq"] for r in store.load_messages(KEY)] == [0, 3]  # the instructions stay
    assert [(s["text"], s["validation"]) for s in store.summaries(KEY)] == [
        ("c", {}), ("[Removed m1-m2]", MARKER_ROW["validation"])]
    assert store.entities(KEY) == [("Oslo", 2, 3)]  # Paris was named only in what went
    assert store.archived_through(KEY) == 3 and store.load_state(KEY) == {"compactions": 2}
    assert store.remove_through(KEY, 3, {**MARKER_ROW, "last_seq": 3}) == 2  # no role kept: all up to 3
    # The marker stays: the session is still listed, its numbering after the last seq removed.
    assert store.load_messages(KEY) == [] and store.sessions() == [KEY]
    assert [(r["messages"], r["last_seq"], r["created_at"]) for r in store.session_rows("acme/")] == [(0, 3, None)]


def test_a_time_to_live_removes_old_messages_from_a_live_session_and_its_view_says_so(opener):
    manager = opener.manager()
    session = manager.session("acme/chat")
    session.append({"role": "system", "content": "You plan trips."})
    old = 1_700_000_000.0
    for n in range(3):
        session.append({"role": "user", "content": f"Old leg {n}: train T-{n}.", "timestamp": old + n})
        session.append({"role": "assistant", "content": f"Noted leg {n}.", "timestamp": old + n + 0.5})
    session.append({"role": "user", "content": "Which leg is cheapest?"})  # said now: inside the time to live
    manager.store.mark_archived(session.key, 6)  # archived (working_memory.py raises it in a Memory)
    assert manager.expire(before=old + 100, days=30) == 6
    view = session.view(2_000)  # the live handle reads the store again
    assert [m["content"] for m in view][0] == "You plan trips."
    assert "[Removed m1-m6 (time to live: said more than 30 days ago): 6 messages" in view[1]["content"]
    assert [m["content"] for m in view[2:]] == ["Which leg is cheapest?"]
    assert manager.expire(before=old + 100, days=30) == 0  # nothing more to remove
    assert [r["seq"] for r in manager.store.load_messages(session.key)] == [0, 7]


def test_a_snapshot_opens_with_every_message_or_names_the_servers_backup_tool(opener, tmp_path):
    store = opener()
    for seq in range(3):
        append(store, seq, f"message {seq}")
    store.mark_archived(KEY, 1)
    target = tmp_path / "backup" / "sessions.sqlite3"
    if opener.backend == "postgres":
        with pytest.raises(BackupError, match="pg_dump"):
            store.snapshot_to(target)
        assert not target.exists()
        return
    store.snapshot_to(target)
    append(store, 3, "after the copy")
    copy = SessionStore(target)
    try:
        assert [m["message"]["content"] for m in copy.load_messages(KEY)] == ["message 0", "message 1", "message 2"]
        assert copy.archived_through(KEY) == 1 and copy.sessions() == [KEY]
    finally:
        copy.close()
