"""A batch of messages is all or nothing, on SQLite and PostgreSQL: one transaction (a failure midway
stores none of it and leaves the session usable) under the session's lock (no other append lands
inside it), through ``Session.append_batch`` and ``Memory.add_messages``."""

from __future__ import annotations

import threading

import pytest
from postgres_support import NEEDS_POSTGRES, BackendOpener, FreshSchema, postgres_param

from agent_memory.conversation import CompactionConfig, SessionManager
from agent_memory.core.errors import StoreError
from agent_memory.core.tokens import TiktokenCounter
from agent_memory.stores.sqlite_sessions import SessionStore
from tests.helpers import fail_an_insert

COUNTER = TiktokenCounter("cl100k_base")


class Opener(BackendOpener):
    def open_sqlite(self, tmp_path):
        return SessionStore(tmp_path / "sessions.sqlite3", synchronous="OFF")

    def open_postgres(self, db):
        from agent_memory.stores.postgres_sessions import PostgresSessionStore

        return PostgresSessionStore(db)

    def manager(self, config: CompactionConfig | None = None) -> SessionManager:
        return SessionManager(self.tmp_path / "unused.sqlite3", COUNTER, store=self(), config=config)


@pytest.fixture(params=["sqlite", postgres_param()])
def opener(request, tmp_path):
    op = Opener(request.param, tmp_path)
    yield op
    op.cleanup()


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def test_a_batch_failing_midway_stores_none_of_it_and_the_session_goes_on(opener):
    manager = opener.manager()
    session = manager.session("s")
    session.append(user("Before the batch: the depot is in Lyon."))
    entities = manager.store.entities(session.key)
    fail_an_insert(manager.store, 2)
    batch = [user("Order 40 X-300 units for Anna."), user("Ship them to Berlin."), user("Invoice to ACME.")]
    with pytest.raises(StoreError, match="full|extend"):
        session.append_batch(batch)
    assert [r["seq"] for r in manager.store.load_messages(session.key)] == [0]
    assert manager.store.entities(session.key) == entities  # the first message's entity rows went too
    assert session.messages() == [user("Before the batch: the depot is in Lyon.")] and session.next_seq == 1
    assert session.append_batch(batch) == [1, 2, 3]  # usable: the same batch goes in whole
    reopened = opener.manager().session("s")
    assert [m["content"] for m in reopened.messages()] == [
        "Before the batch: the depot is in Lyon.", *[m["content"] for m in batch]]


def test_a_compaction_failing_after_the_batch_is_stored_does_not_fail_the_batch(opener):
    """The batch is committed before the scheduler runs: a store failure in the compaction it triggers must
    not report the batch as failed (a caller would send it again: stored twice) nor skip its hooks; the
    session stays as the store has it, and the next append compacts."""
    manager = opener.manager(CompactionConfig(window_tokens=400))
    announced: list[int] = []
    manager.on_appended = lambda record: announced.append(record.seq)
    session = manager.session("s")
    batch = [user(f"Turn {n}: order {40 + n} X-300 units for ACME from the Lyon depot, invoice INV-{2291 + n},"
                  f" freight with DHL reference DHL-77-{n:04d}.") for n in range(12)]

    def full_disk(*args, **kwargs):
        raise StoreError("session store write failed: database or disk is full")

    manager.store.compact = manager.store.save_state = full_disk  # this store object only
    assert session.append_batch(batch) == list(range(12))
    assert announced == list(range(12))
    assert [r["message"] for r in manager.store.load_messages(session.key)] == batch
    stats = session.stats()
    assert stats["compaction_failures"] >= 1 and stats["compactions"] == 0  # tried, failed, not counted as done
    assert stats["active_messages"] == 12 and stats["condensed_messages"] == 0  # as the store has it
    assert [m for m in session.view(10_000) if m["role"] != "system"] == batch
    del manager.store.compact, manager.store.save_state  # the disk has room again
    session.append(user("And one more order, please."))
    assert session.stats()["compactions"] >= 1 and session.utilization() < 0.9
    reopened = opener.manager(CompactionConfig(window_tokens=400)).session("s")
    assert reopened.stats()["compactions"] == session.stats()["compactions"]
    assert len(reopened.messages()) == 13


def assert_batches_whole(stored: list[str], batches: int, size: int, writers: str) -> None:
    """Every batch ``<writer><batch>-<i>`` stored once, whole, at consecutive positions, in order."""
    for writer in writers:
        for b in range(batches):
            expected = [f"{writer}{b}-{i}" for i in range(size)]
            first = stored.index(expected[0])
            assert stored[first:first + size] == expected, f"batch {writer}{b} interleaved"
            assert all(stored.count(text) == 1 for text in expected)


def write_concurrently(targets) -> None:
    """Run each (function, args) on its own thread; re-raise the first failure."""
    errors: list[BaseException] = []

    def run(fn, *args):
        try:
            fn(*args)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(fn, *args)) for fn, *args in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_concurrent_batches_never_interleave(opener):
    manager = opener.manager()
    batches, size = 6, 8

    def writer(name: str) -> None:
        for b in range(batches):
            manager.session("busy").append_batch([user(f"{name}{b}-{i}") for i in range(size)])

    def single() -> None:  # appends of one message meanwhile: never inside a batch either
        for i in range(batches * size):
            manager.session("busy").append(user(f"single {i}"))

    write_concurrently([(writer, "a"), (writer, "b"), (single,)])
    stored = [m["content"] for m in manager.session("busy").messages()]
    assert len(stored) == 3 * batches * size
    assert_batches_whole(stored, batches, size, "ab")
    assert [r["seq"] for r in manager.store.load_messages(("busy", ""))] == list(range(3 * batches * size))


@pytest.mark.parametrize("_", [pytest.param(None, marks=NEEDS_POSTGRES)])
def test_batches_through_two_replicas_never_interleave(tmp_path, _):
    from agent_memory.stores.postgres_sessions import PostgresSessionStore

    schema = FreshSchema()
    replicas = [SessionManager(tmp_path / "unused", COUNTER, store=PostgresSessionStore(schema.open()))
                for _ in range(2)]
    try:
        batches, size = 5, 6

        def writer(manager: SessionManager, name: str) -> None:
            for b in range(batches):
                manager.session("shared").append_batch([user(f"{name}{b}-{i}") for i in range(size)])

        write_concurrently([(writer, replicas[0], "a"), (writer, replicas[1], "b")])
        stored = [m["content"] for m in replicas[0].session("shared").messages()]
        assert len(stored) == 2 * batches * size
        assert_batches_whole(stored, batches, size, "ab")
    finally:
        for manager in replicas:
            manager.close()
        schema.cleanup()


def call(cid: str) -> dict:
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": cid, "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]}


def result(cid: str, text: str) -> dict:
    return {"role": "tool", "tool_call_id": cid, "content": text}


def test_an_append_between_the_check_and_the_batch_refuses_the_batch(opener):
    """A batch checked whole (``check_batch``), then a result for the same call appended by another
    caller: the batch is checked again under the lock, so it is refused, whole, instead of storing a
    second result for the call (which a provider refuses in every later view)."""
    manager = opener.manager()
    session = manager.session("s")
    session.append(call("c1"))
    batch = [result("c1", "42 units in stock"), user("Order them.")]
    session.check_batch(batch)  # passes: c1 awaits its result
    manager.session("s").append(result("c1", "41 units in stock"))  # another caller answers c1 meanwhile
    with pytest.raises(ValueError, match=r"messages\[0\]: .*\['c1'\].*repeated tool result"):
        session.append_batch(batch)
    stored = [r["message"] for r in manager.store.load_messages(session.key)]
    assert stored == [call("c1"), result("c1", "41 units in stock")] and session.next_seq == 2
    assert session.append_batch([user("Order them.")]) == [2]  # the session goes on


@pytest.mark.parametrize("_", [pytest.param(None, marks=NEEDS_POSTGRES)])
def test_an_append_by_another_replica_between_the_check_and_the_batch_refuses_it(tmp_path, _):
    """The same through two replicas: the checking one has not seen the other's append when its batch
    reaches the store; the store refuses the taken seq, the session reloads and checks again."""
    from agent_memory.stores.postgres_sessions import PostgresSessionStore

    schema = FreshSchema()
    a, b = (SessionManager(tmp_path / "unused", COUNTER, store=PostgresSessionStore(schema.open())) for _ in "ab")
    try:
        session = a.session("shared")
        session.append(call("c1"))
        batch = [result("c1", "42 units in stock"), user("Order them.")]
        session.check_batch(batch)
        b.session("shared").append(result("c1", "41 units in stock"))
        with pytest.raises(ValueError, match=r"messages\[0\]: .*repeated tool result"):
            session.append_batch(batch)  # ``session`` as a caller held it: no refresh before the batch
        assert [r["message"] for r in a.store.load_messages(session.key)] == [
            call("c1"), result("c1", "41 units in stock")]
        assert session.append_batch([user("Order them.")]) == [2]
        assert [m["role"] for m in b.session("shared").messages()] == ["assistant", "tool", "user"]
    finally:
        a.close()
        b.close()
        schema.cleanup()


@pytest.fixture
def memory(settings):
    from agent_memory import Memory

    with Memory(settings=settings, tenant="acme") as mem:
        yield mem


def test_add_messages_is_all_or_nothing_and_serialized(memory):
    # Forgettable: nothing to archive, so no embedding slows the writers down.
    memory.add_messages("chat", [user("We ship from the Lyon depot.")], retention="forgettable")
    store = memory.working_memory.sessions.store
    fail_an_insert(store, 2)
    with pytest.raises(StoreError, match="full"):
        memory.add_messages("chat", [user("one"), user("two"), user("three")], retention="forgettable")
    assert [m["content"] for m in memory.session("chat").messages()] == ["We ship from the Lyon depot."]
    batches, size = 5, 6

    def writer(name: str) -> None:
        for b in range(batches):
            memory.add_messages("chat", [user(f"{name}{b}-{i}") for i in range(size)], retention="forgettable")

    write_concurrently([(writer, "a"), (writer, "b")])
    stored = [m["content"] for m in memory.session("chat").messages()]
    assert stored[0] == "We ship from the Lyon depot." and len(stored) == 1 + 2 * batches * size
    assert_batches_whole(stored, batches, size, "ab")


def test_a_batch_is_archived_in_one_pass_with_every_turns_reasons(services):
    from agent_memory.conversation.working_memory import WorkingMemory

    passes: list[list] = []
    memory = WorkingMemory(services, promote=lambda records: passes.append(list(records)))
    try:
        memory.session("acme", "chat").append_batch([
            user("I prefer the X-300 sensor; we decided to order 40 units."),
            {"role": "assistant", "content": "Noted."},
            user("We decided on Falkenrath Logistics for the shipping, deadline 2024-05-01."),
        ], retention="strict")
        memory.flush()  # the pass runs on a worker thread
        assert [[r.turn_id for r in records] for records in passes] == [["m0", "m1", "m2"]]
        reasons = {r.turn_id: r.metadata["reasons"] for r in passes[0]}
        # The detector's own reasons for each significant turn, not the bare flag a late pass would read.
        assert reasons["m0"] and reasons["m2"] and "significant" not in reasons["m0"] + reasons["m2"]
        assert reasons["m1"] == []
    finally:
        memory.close()


def test_add_messages_takes_one_retention_class_per_message(memory):
    from agent_memory.conversation.archived_turns import session_key

    with pytest.raises(ValueError, match=r"messages\[1\]: .*'sometimes'"):
        memory.add_messages("mixed", [user("a"), user("b")], retention=["forgettable", "sometimes"])
    with pytest.raises(ValueError, match="2 classes for 3 messages"):
        memory.add_messages("mixed", [user("a"), user("b"), user("c")], retention=["forgettable", "strict"])
    assert not memory.session_exists("mixed")  # a refused batch stores nothing
    memory.add_messages("mixed", [user("small talk"), user("the door code is 4471")],
                        retention=["forgettable", "strict"])
    rows = memory.working_memory.sessions.store.load_messages((session_key("acme", "mixed"), ""))
    assert [(r["message"]["content"], r["retention"]) for r in rows] == [
        ("small talk", "forgettable"), ("the door code is 4471", "strict")]
