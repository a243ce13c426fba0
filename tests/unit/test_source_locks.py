"""The per-source locks every writer holds (stores/jobs.SourceLocks): several at once in one sorted order, and a
key the thread holds already (a file's, around the writes of its records) not asked for again, which would wait
on itself across two connections. The store here records what it is asked for; PostgreSQL's own advisory locks
are tested in tests/integration/test_jobs_contract.py and test_repair_beside_writer.py."""

from __future__ import annotations

import threading
from contextlib import contextmanager

from agent_memory.stores.jobs import SourceLocks


class RecordingLocks:
    def __init__(self) -> None:
        self.asked: list[tuple[str, list[str]]] = []

    @contextmanager
    def source_locks(self, tenant: str, keys: list[str]):
        self.asked.append((tenant, list(keys)))
        yield


def test_several_keys_are_asked_for_once_each_in_sorted_order():
    store = RecordingLocks()
    with SourceLocks(store).hold_many("acme", ["s1/m2", "s1/m0", "s1/m2", "notes"]):
        pass
    assert store.asked == [("acme", ["notes", "s1/m0", "s1/m2"])]


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
    assert store.asked == [("acme", ["crates.jsonl"]), ("acme", ["other"]), ("globex", ["crates.jsonl"]),
                           ("acme", ["crates.jsonl"])]


def test_without_postgresql_the_lock_is_this_process_s_own():
    locks = SourceLocks()
    assert not locks.shared
    taken: list[bool] = []
    with locks.hold_many("acme", ["a", "b"]):
        with locks.hold("acme", "a"):  # its holder may take it again
            other = threading.Thread(target=lambda: taken.append(locks.process.acquire(blocking=False)))
            other.start()
            other.join(5)
    assert taken == [False]  # another writer of this process waits
