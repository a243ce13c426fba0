"""The per-source locks every writer holds (stores/source_locks.SourceLocks): several at once in one sorted order, after
the tenant's key in shared mode (a removal of the tenant takes it exclusively), and a key the thread holds already
(a file's, around the writes of its records; a tenant's) not asked for again, which would wait on itself across
two connections. The store here records what it is asked for; PostgreSQL's own advisory locks are tested in
tests/integration/test_jobs_contract.py, test_repair_beside_writer.py and test_tenant_removal_beside_writers.py."""

from __future__ import annotations

import threading
from contextlib import contextmanager

import pytest

from agent_memory.stores.source_locks import TENANT_KEY, SourceLocks


class RecordingLocks:
    """Records each hold as (tenant, the keys taken exclusively, those taken shared); a try succeeds unless
    ``removing`` names the tenant (a removal runs elsewhere)."""

    def __init__(self, removing: str = "") -> None:
        self.asked: list[tuple[str, list[str], list[str]]] = []
        self.removing = removing

    @contextmanager
    def source_locks(self, tenant: str, keys: list[str], *, shared=()):
        self.asked.append((tenant, list(keys), list(shared)))
        yield

    @contextmanager
    def try_source_locks(self, tenant: str, keys: list[str], *, shared: bool = False):
        self.asked.append((tenant, [] if shared else list(keys), list(keys) if shared else []))
        yield set() if tenant == self.removing else set(keys)


WHOLE = [TENANT_KEY]


def test_several_keys_are_asked_for_once_each_in_sorted_order_after_the_tenant_s_key_shared():
    store = RecordingLocks()
    with SourceLocks(store).hold_many("acme", ["s1/m2", "s1/m0", "s1/m2", "notes"]):
        pass
    assert store.asked == [("acme", ["notes", "s1/m0", "s1/m2"], WHOLE)]


def test_a_key_this_thread_holds_is_not_asked_for_again_and_is_released_with_its_first_hold():
    store = RecordingLocks()
    locks = SourceLocks(store)
    with locks.hold("acme", "crates.jsonl"):
        with locks.hold_many("acme", ["crates.jsonl"]):  # the file's records, written under the file's lock
            pass
        with locks.hold_many("acme", ["crates.jsonl", "other"]):
            pass
        with locks.hold("globex", "crates.jsonl"):  # another tenant's key is another lock
            pass
    with locks.hold("acme", "crates.jsonl"):  # released: asked for again
        pass
    # The tenant's key is held shared by the first hold of the tenant, and covers the nested ones.
    assert store.asked == [("acme", ["crates.jsonl"], WHOLE), ("acme", ["other"], []),
                           ("globex", ["crates.jsonl"], WHOLE), ("acme", ["crates.jsonl"], WHOLE)]


def test_a_tenant_s_removal_takes_its_key_exclusively_and_covers_the_writes_inside_it():
    store = RecordingLocks()
    locks = SourceLocks(store)
    with locks.hold_tenant("acme"):
        with locks.hold_many("acme", ["notes"]):  # a key held exclusively covers a writer's shared hold
            pass
        with locks.hold_tenant("acme"):
            pass
    assert store.asked == [("acme", WHOLE, []), ("acme", ["notes"], [])]


def test_a_thread_that_writes_a_tenant_is_refused_its_removal_instead_of_waiting_for_itself():
    locks = SourceLocks(RecordingLocks())
    with locks.hold("acme", "notes"):
        with pytest.raises(RuntimeError, match="'acme'.*wait for its own write"):
            with locks.hold_tenant("acme"):
                pass
        with locks.hold_tenant("globex"):  # another tenant's removal is not its own write
            pass


def test_a_repair_takes_the_tenant_s_key_shared_without_waiting_and_writes_inside_it_do_not_ask_again():
    store = RecordingLocks(removing="globex")
    locks = SourceLocks(store)
    with locks.try_hold_tenant("acme") as free:
        assert free
        with locks.hold_many("acme", ["notes"]):
            pass
        with locks.try_hold("acme", ["notes", "team"]) as held:
            assert held == {"notes", "team"}
            with locks.hold("acme", "team"):  # held by the try: not asked for again
                pass
    with locks.try_hold_tenant("globex") as free:  # being removed elsewhere
        assert not free
    assert store.asked == [("acme", [], WHOLE), ("acme", ["notes"], []), ("acme", ["notes", "team"], []),
                           ("globex", [], WHOLE)]


def test_without_postgresql_the_lock_is_this_process_s_own():
    locks = SourceLocks()
    assert not locks.shared
    taken: list[bool] = []
    with locks.hold_many("acme", ["a", "b"]):
        with locks.hold("acme", "a"):  # its holder may take it again
            other = threading.Thread(target=lambda: taken.append(locks.process.acquire(blocking=False)))
            other.start()
            other.join(5)
    with locks.hold_tenant("acme"):  # a removal: the same process lock
        other = threading.Thread(target=lambda: taken.append(locks.process.acquire(blocking=False)))
        other.start()
        other.join(5)
    with locks.try_hold_tenant("acme") as free, locks.try_hold("acme", ["a"]) as held:
        assert free and held == {"a"}  # no other process removes or writes these stores
    assert taken == [False, False]  # another writer of this process waits
