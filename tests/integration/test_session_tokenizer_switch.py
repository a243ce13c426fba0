"""Switching ``AGENT_MEMORY_TOKENIZER`` on a used data dir: a session's stored token counts name the
counter that made them, and a session opened under another counter counts those messages (and its
summaries) again, so its window, levels and view are measured in the new units. SQLite and PostgreSQL."""

from __future__ import annotations

import json
import sqlite3

import pytest
from postgres_support import NEEDS_POSTGRES, BackendOpener, FreshSchema, postgres_param

from agent_memory.conversation import CompactionConfig, SessionManager
from agent_memory.conversation.messages import serialize
from agent_memory.core.tokens import EstimatingCounter, TiktokenCounter
from agent_memory.stores.sqlite_sessions import SessionStore

ESTIMATE, EXACT = EstimatingCounter(), TiktokenCounter("cl100k_base")
TURNS = ["We ship from the Lyon depot; order 40 X-300 units for ACME.",
         "Noted: 40 X-300 units from Lyon, invoice INV-2291 to ACME GmbH.",
         "Also book the freight with DHL, reference DHL-77-0042, before Friday."]


class Opener(BackendOpener):
    def open_sqlite(self, tmp_path):
        return SessionStore(tmp_path / "sessions.sqlite3", synchronous="OFF")

    def open_postgres(self, db):
        from agent_memory.stores.postgres_sessions import PostgresSessionStore

        return PostgresSessionStore(db)

    def manager(self, counter) -> SessionManager:
        """A fresh store object on the same data each call: a process started under ``counter``."""
        return SessionManager(self.tmp_path / "unused.sqlite3", counter, store=self(),
                              config=CompactionConfig(window_tokens=None))


@pytest.fixture(params=["sqlite", postgres_param()])
def opener(request, tmp_path):
    op = Opener(request.param, tmp_path)
    yield op
    op.cleanup()


def fill(session) -> None:
    for n, text in enumerate(TURNS):
        session.append({"role": ("user", "assistant")[n % 2], "content": text})


def test_counts_made_under_another_tokenizer_are_made_again(opener):
    fill(opener.manager(ESTIMATE).session("s"))
    reference = opener.manager(EXACT).session("fresh")  # the same messages, counted under cl100k only
    fill(reference)
    switched = opener.manager(EXACT).session("s")  # the data dir, now served under cl100k
    assert switched.stats()["active_tokens"] == reference.stats()["active_tokens"]
    assert switched.stats()["active_tokens"] < sum(ESTIMATE.count(t) for t in TURNS)  # not the estimate's units
    rows = switched.store.load_messages(switched.key)
    assert {r["tokenizer"] for r in rows} == {"cl100k_base+4"}  # stored: the next start reuses them
    assert [r["tokens"] for r in rows] == [r["tokens"] for r in reference.store.load_messages(reference.key)]
    # ... and back: counted again under the estimate, as a session only ever counted by it.
    assert opener.manager(ESTIMATE).session("s").stats()["active_tokens"] == \
        opener.manager(ESTIMATE).session("fresh").stats()["active_tokens"]


def test_a_changed_message_overhead_counts_every_message_again(opener):
    """The overhead a provider adds around each message is part of every stored count: changed, the window
    was measured with the old one until the counts happened to be made again."""
    session = opener.manager(EXACT).session("s")
    fill(session)
    before = session.stats()["active_tokens"]
    session.configure(message_overhead=10)
    assert session.stats()["active_tokens"] == before + 6 * len(TURNS)
    assert {r["tokenizer"] for r in session.store.load_messages(session.key)} == {"cl100k_base+10"}
    reopened = opener.manager(EXACT).session("s")  # the setting is the session's: a restart keeps it
    assert reopened.config.message_overhead == 10 and reopened.stats()["active_tokens"] == before + 6 * len(TURNS)


def test_summaries_are_counted_under_the_serving_tokenizer(opener):
    session = opener.manager(ESTIMATE).session("s")
    fill(session)
    session.append({"role": "user", "content": "What is the DHL reference?"})
    session.compact(force=True)
    (summary,) = session.summaries()
    assert summary["tokens"] == ESTIMATE.count(summary["text"])
    (switched,) = opener.manager(EXACT).session("s").summaries()
    assert switched["text"] == summary["text"] and switched["tokens"] == EXACT.count(summary["text"])


def test_a_file_from_before_counts_named_their_tokenizer_is_counted_again(tmp_path):
    path = tmp_path / "sessions.sqlite3"
    db = sqlite3.connect(path)  # the messages table as it was: no tokenizer column
    db.executescript("""
        CREATE TABLE messages (
            session_id TEXT NOT NULL, agent_id TEXT NOT NULL, seq INTEGER NOT NULL,
            role TEXT NOT NULL, retention TEXT NOT NULL, unclassified INTEGER NOT NULL DEFAULT 0,
            body TEXT NOT NULL, tokens INTEGER NOT NULL, status TEXT NOT NULL DEFAULT 'active',
            significant INTEGER NOT NULL DEFAULT 0, created_at REAL NOT NULL,
            PRIMARY KEY (session_id, agent_id, seq));""")
    message = {"role": "user", "content": TURNS[0]}
    db.execute("INSERT INTO messages (session_id, agent_id, seq, role, retention, body, tokens, created_at)"
               " VALUES ('s', '', 0, 'user', 'fuzzy', ?, 999, 0)", (json.dumps(message),))
    db.commit()
    db.close()
    manager = SessionManager(path, EXACT, synchronous="OFF", config=CompactionConfig(window_tokens=None))
    try:
        _counted_again(manager, message)
    finally:
        manager.close()



def _counted_again(manager, message) -> None:
    """The row stored with 999 tokens and no counter is counted again by the serving counter, and named."""
    session = manager.session("s")
    assert session.stats()["active_tokens"] == session.message_tokens(message) != 999
    assert manager.store.load_messages(session.key)[0]["tokenizer"] == "cl100k_base+4"
    assert session.messages() == [message]


@pytest.mark.parametrize("_", [pytest.param(None, marks=NEEDS_POSTGRES)])
def test_a_postgres_schema_from_before_counts_named_their_tokenizer_is_counted_again(tmp_path, _):
    """The PostgreSQL twin: a schema migrated up to 005 (no tokenizer column) gets 006 at the next start,
    and its rows (NULL: counter unknown) are counted again under the serving counter."""
    from agent_memory.stores.postgres_sessions import PostgresSessionStore

    schema = FreshSchema()
    try:
        with schema.open().connection() as conn:  # back to the schema as 005 left it
            conn.execute("ALTER TABLE session_messages DROP COLUMN tokenizer")
            conn.execute("DELETE FROM schema_migrations WHERE name = '006_session_tokenizer.sql'")
            message = {"role": "user", "content": TURNS[0]}
            conn.execute("INSERT INTO session_messages (session_id, agent_id, seq, role, retention, body, tokens,"
                         " created_at) VALUES ('s', '', 0, 'user', 'fuzzy', %s, 999, 0)", (json.dumps(message),))
        manager = SessionManager(tmp_path / "unused", EXACT, store=PostgresSessionStore(schema.open()),
                                 config=CompactionConfig(window_tokens=None))
        _counted_again(manager, message)
    finally:
        schema.cleanup()


LONG_TURNS = [f"Turn {n}: order {40 + n} X-300 units for ACME GmbH from the Lyon depot, invoice INV-{2291 + n},"
              f" freight with DHL reference DHL-77-{n:04d}, before Friday." for n in range(12)]


@pytest.mark.parametrize("first, then", [(EXACT, ESTIMATE), (ESTIMATE, EXACT)], ids=["exact-then-estimate",
                                                                                   "estimate-then-exact"])
def test_a_view_stays_within_its_budget_after_a_switch(opener, first, then):
    """The budget a view is built for holds when counted by the serving counter: a budget that held every
    message under the old counts (cl100k's, smaller than the estimate's) must not show them all under the
    estimate, and the count reported for the view is the serving counter's."""
    before = opener.manager(first).session("s")
    for n, text in enumerate(LONG_TURNS):
        before.append({"role": ("user", "assistant")[n % 2], "content": text})
    old_counts = [r["tokens"] for r in before.store.load_messages(before.key)]
    budget = sum(old_counts)  # every message fits under the counts stored by the first counter
    switched = opener.manager(then).session("s")
    view = switched.view(budget)
    counted = sum(then.count(serialize(m)) + 4 for m in view)  # 4: the default message_overhead
    assert switched.count_view(view) == counted <= budget  # the new counter's units, within the budget
    new_counts = [switched.message_tokens(m) for m in switched.messages()]
    assert [r["tokens"] for r in switched.store.load_messages(switched.key)] == new_counts  # stored again
    shown = [m for m in view if m["role"] != "system"]  # the key-entities header and notes apart
    if sum(new_counts) > budget:  # cl100k -> estimate: the old counts would have shown every message
        assert shown == switched.messages()[-len(shown):] and len(shown) < len(LONG_TURNS)
    else:  # estimate -> cl100k: everything fits, with room to spare
        assert shown == switched.messages()


def test_a_config_given_to_a_live_session_counts_its_messages_again(opener):
    """``SessionManager.session(id, config=...)`` on a session already open: a different message_overhead
    is in every count, so the messages are counted again, or a view would run over its budget by the
    difference per message."""
    manager = opener.manager(EXACT)
    session = manager.session("s")
    for n, text in enumerate(LONG_TURNS):
        session.append({"role": ("user", "assistant")[n % 2], "content": text})
    budget = session.stats()["active_tokens"]  # everything fits, just
    assert manager.session("s", config=CompactionConfig(window_tokens=None, message_overhead=10)) is session
    assert session.stats()["active_tokens"] == budget + 6 * len(LONG_TURNS)
    view = session.view(budget)
    assert session.count_view(view) <= budget and len(view) < len(LONG_TURNS)
    assert {r["tokenizer"] for r in session.store.load_messages(session.key)} == {"cl100k_base+10"}
