"""A tenant's removal (DELETE /v1/tenant, DELETE /v1/tenants/{tenant}) while another process writes the tenant on
PostgreSQL. The API refuses the removal while the tenant's jobs run (409), but a session's archive, a posted
document, CLI ingestion or an import in another process is no job: each writer holds the tenant's key in shared
mode for as long as it holds its sources' keys, and the removal takes that key exclusively. So the removal waits for
a running writer and then removes what it wrote; a writer that comes during the removal waits for it and then writes
whole; a repair, which takes the key shared, still runs beside a writer.

Each process is a ``Memory`` on the same stores with its own source locks: its own process lock and its own pool of
PostgreSQL connections, whose advisory locks are what keeps processes apart (:func:`another_process`). A writer is
held mid-write by a pause where its items are stored and its facts not yet written (``pipeline.write_facts``); a
removal where the tenant's facts are gone and its items and entries not yet (``vectors.delete_where``)."""

from __future__ import annotations

import copy
import json
import threading
import time
import uuid
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Callable, Iterator

import pytest
from postgres_support import NEEDS_POSTGRES, FreshSchema

from agent_memory.api.ingestion import check_tenant_stores, remove_tenant
from agent_memory.core.config import load_settings
from agent_memory.core.records import TurnRecord
from agent_memory.ingest import pipeline as pipeline_module
from agent_memory.memory import Memory
from agent_memory.services import build_services
from agent_memory.stores.jobs import DurableJobQueue
from agent_memory.stores.source_locks import TENANT_KEY

pytestmark = NEEDS_POSTGRES

WAIT_S = 60  # the bound on every wait for another thread: a test that would hang fails instead


@pytest.fixture
def shared(tmp_path):
    schema = FreshSchema()
    schema.open()
    services = build_services(load_settings(data_dir=tmp_path / "data", triple_extractor="rules", qdrant_url=None,
                                            neo4j_uri=None, postgres_url=schema.url))
    for store in ("catalog", "vectors", "graph", "sessions", "embedder"):  # built once, seen by every process
        getattr(services, store)
    others: list = []
    yield SimpleNamespace(services=services, others=others)
    for other in others:
        other.postgres.close()
    services.close()
    schema.cleanup()


def another_process(shared) -> object:
    """The same stores as another process sees them: its own source locks (its own process lock, its advisory
    locks on its own pool of connections)."""
    other = copy.copy(shared.services)
    for own in ("postgres", "job_store", "source_locks"):
        other.__dict__.pop(own, None)
    shared.others.append(other)
    return other


@pytest.fixture
def tenant() -> str:
    """A tenant of this test alone: the advisory locks of a server are one space for all its schemas."""
    return f"acme-{uuid.uuid4().hex[:8]}"


def waiting_on_tenant(services, tenant: str) -> int:
    """How many sessions wait for the tenant's key (``stores/postgres_jobs.PostgresJobStore.source_locks``)."""
    key = json.dumps([tenant, TENANT_KEY])
    with services.postgres.connection() as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_locks, hashtextextended(%s, 0) AS k WHERE locktype = 'advisory'"
            " AND NOT granted AND classid = ((k >> 32) & 4294967295)::oid AND objid = (k & 4294967295)::oid",
            (key,)).fetchone()
    return int(row[0])


def until(condition: Callable[[], bool]) -> None:
    """Wait for ``condition`` (polled), at most WAIT_S."""
    for _ in range(WAIT_S * 20):
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"not reached in {WAIT_S} s: {condition}")


class Running:
    """``work`` on a thread of its own: ``result`` once it has returned, ``error`` if it raised."""

    def __init__(self, work: Callable[[], object]) -> None:
        self.result: object = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(work,), daemon=True)
        self.thread.start()

    def _run(self, work: Callable[[], object]) -> None:
        try:
            self.result = work()
        except BaseException as exc:  # noqa: BLE001 - reported by ended()
            self.error = exc

    @property
    def running(self) -> bool:
        return self.thread.is_alive()

    def ended(self) -> object:
        self.thread.join(WAIT_S)
        assert not self.thread.is_alive(), "still running: waits for ever"
        if self.error is not None:
            raise self.error
        return self.result


@contextmanager
def paused_at(monkeypatch, owner, name: str) -> Iterator[SimpleNamespace]:
    """Pause the first call of ``owner.<name>`` until the block ends; ``reached`` is set when a caller is paused."""
    pause = SimpleNamespace(reached=threading.Event(), go=threading.Event())
    call = getattr(owner, name)

    def after_a_pause(*args, **kwargs):
        if not pause.reached.is_set():
            pause.reached.set()
            assert pause.go.wait(WAIT_S)
        return call(*args, **kwargs)

    monkeypatch.setattr(owner, name, after_a_pause)
    try:
        yield pause
    finally:
        pause.go.set()


def api_state(services, tenant: str) -> SimpleNamespace:
    """What the API's removal of a tenant runs on in one process: its ``Memory`` and its job queue."""
    return SimpleNamespace(memory=Memory(services=services, tenant=tenant, promote=False), services=services,
                           jobs=DurableJobQueue(services.job_store))


def stored(services, tenant: str, source_id: str) -> bool:
    return bool(services.vectors.ids_for_source(tenant, source_id))


def emptied(services, tenant: str) -> None:
    """Nothing of the tenant is left in any store."""
    assert not services.catalog.entries(tenant)
    assert tenant not in services.vectors.tenants()
    assert not services.graph.fact_sources(tenant).get(tenant)


WRITERS = {
    "a posted document": lambda memory: memory.add("Karl Weber founded Umbrella in Bremen.", source_id="late"),
    "a session's archive": lambda memory: memory.add_message(
        "s1", {"role": "user", "content": "Karl Weber founded Umbrella in Bremen."}),
}


@pytest.mark.parametrize("writer_kind", list(WRITERS))
def test_a_tenant_s_removal_waits_for_a_writer_in_another_process_and_removes_what_it_wrote(
        shared, tenant, monkeypatch, writer_kind):
    writer = Memory(services=another_process(shared), tenant=tenant, promote=writer_kind != "a posted document")
    remover_services = another_process(shared)
    remover = api_state(remover_services, tenant)
    remover.memory.add("Ada Brandt founded Initech in Leiden.", source_id="founders")

    with paused_at(monkeypatch, pipeline_module, "write_facts") as pause:  # its items stored, not yet catalogued
        writing = Running(lambda: WRITERS[writer_kind](writer))
        assert pause.reached.wait(WAIT_S)
        removal = Running(lambda: remove_tenant(remover, tenant, by="an admin key"))
        until(lambda: not removal.running or waiting_on_tenant(remover_services, tenant))
        assert removal.running, "the removal ran beside a writer of the tenant"
        assert stored(shared.services, tenant, "founders")  # nothing removed yet
    writing.ended()
    removed = removal.ended()
    # The whole write was removed after it ended: no half of it is left in the removed tenant.
    assert removed["sources"] >= 2
    emptied(shared.services, tenant)


def test_a_writer_that_comes_during_a_tenant_s_removal_waits_and_then_writes_whole(shared, tenant, monkeypatch):
    remover_services = another_process(shared)
    remover = api_state(remover_services, tenant)
    remover.memory.add("Ada Brandt founded Initech in Leiden.", source_id="founders")
    writer = Memory(services=another_process(shared), tenant=tenant, promote=False)

    # Paused with the tenant's facts gone and its items and entries not yet.
    with paused_at(monkeypatch, shared.services.vectors, "delete_where") as pause:
        removal = Running(lambda: remove_tenant(remover, tenant, by="its own key"))
        assert pause.reached.wait(WAIT_S)
        writing = Running(lambda: writer.add("Karl Weber founded Umbrella in Bremen.", source_id="late"))
        until(lambda: not writing.running or waiting_on_tenant(remover_services, tenant))
        assert writing.running, "the writer wrote into a tenant being removed"
        assert not stored(shared.services, tenant, "late")
    assert removal.ended()["sources"] == 1
    assert writing.ended().source_ids == ["late"]
    # Written after the removal, whole: its items, its entry and its facts, and the stores agree.
    assert stored(shared.services, tenant, "late") and not stored(shared.services, tenant, "founders")
    assert shared.services.catalog.get(tenant, "late") is not None
    assert shared.services.graph.fact_sources(tenant).get(tenant, {}).get("late")
    assert check_tenant_stores(remover, tenant)["ok"]


def test_a_repair_beside_a_writer_in_another_process_still_mends_the_tenant_s_other_sources(
        shared, tenant, monkeypatch):
    writer = Memory(services=another_process(shared), tenant=tenant, promote=False)
    repairer = api_state(another_process(shared), tenant)
    repairer.memory.add("Dora Falk founded Globex in Utrecht.", source_id="about")
    repairer.memory.add("Bruno Lang leads the Kestrel team at Nordwerk.", source_id="team")
    shared.services.catalog.delete(tenant, "about")  # a source the catalog lost: the repair removes it

    with paused_at(monkeypatch, pipeline_module, "write_facts") as pause:
        writing = Running(lambda: writer.add("Karl Weber founded Umbrella in Bremen.", source_id="late"))
        assert pause.reached.wait(WAIT_S)
        report = check_tenant_stores(repairer, tenant, repair=True)["tenants"][tenant]
    writing.ended()
    repaired = report["repair"]
    # The writer holds the tenant's key shared, as the repair takes it: only the written source is left alone.
    assert repaired["held"] == ["late"]
    assert repaired["removed"]["sources"] == 1
    assert not any("being removed" in line for line in repaired["left"])
    assert not stored(shared.services, tenant, "about") and stored(shared.services, tenant, "late")
    assert check_tenant_stores(repairer, tenant)["ok"]


def test_writers_of_two_tenants_named_in_opposite_orders_and_both_tenants_removals_all_end(shared, monkeypatch):
    first, second = sorted(f"{name}-{uuid.uuid4().hex[:8]}" for name in ("acme", "globex"))

    def turns(session: str, tenants: list[str]) -> list[TurnRecord]:
        return [TurnRecord(session_id=session, turn_id="1", speaker="Ana", text=f"Ana ships crate {n} to Bremen.",
                           tenant=name) for n, name in enumerate(tenants)]

    writers = [Memory(services=another_process(shared), promote=False) for _ in range(2)]
    both_writing, go = threading.Barrier(3, timeout=WAIT_S), threading.Event()
    paused: set[threading.Thread] = set()
    write_facts = pipeline_module.write_facts

    def when_both_write(*args, **kwargs):  # each writer, its items stored for both tenants, waits for the other
        if threading.current_thread() not in paused:
            paused.add(threading.current_thread())
            both_writing.wait()
            assert go.wait(WAIT_S)
        return write_facts(*args, **kwargs)

    monkeypatch.setattr(pipeline_module, "write_facts", when_both_write)
    writing = [Running(lambda: writers[0].add_turns(turns("one", [second, first]))),
               Running(lambda: writers[1].add_turns(turns("two", [first, second])))]
    both_writing.wait()  # both hold both tenants' keys shared at once
    removers = [another_process(shared) for _ in (first, second)]
    removals = [Running(lambda s=services, t=name: remove_tenant(api_state(s, t), t))
                for services, name in zip(removers, (first, second))]
    for services, name in zip(removers, (first, second)):
        until(lambda s=services, t=name: waiting_on_tenant(s, t) > 0)
    go.set()
    for run in writing:
        assert run.ended().source_ids
    for run, name in zip(removals, (first, second)):
        assert run.ended()["sources"] >= 2  # each writer's turn of that tenant, written whole before it
        emptied(shared.services, name)
