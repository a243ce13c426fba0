"""`check --repair` (POST /v1/check?repair=true) while another process writes the same stores on PostgreSQL: an
`agent-memory worker`'s job stores a file's items before it records them in the catalog, so mid-write they read
as uncatalogued. The repair holds its own process's write lock only; it must leave what a running write holds
(the file's source lock) for the next check, and still remove what no one is writing.

Two processes are two ``Memory`` objects on one set of services, each with its own write lock (as a worker and a
replica have); the source locks are PostgreSQL's advisory locks, on connections of their own."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest
from postgres_support import NEEDS_POSTGRES, FreshSchema

from agent_memory.api.ingestion import check_tenant_stores
from agent_memory.core.config import load_settings
from agent_memory.ingest import pipeline as pipeline_module
from agent_memory.memory import Memory
from agent_memory.services import build_services

pytestmark = NEEDS_POSTGRES

RECORDS = "\n".join(f'{{"text": "Crate {n} of copper wire went to bay {n} in Bremen."}}' for n in range(2))


@pytest.fixture
def shared(tmp_path):
    schema = FreshSchema()
    schema.open()
    services = build_services(load_settings(data_dir=tmp_path / "data", triple_extractor="rules", qdrant_url=None,
                                            neo4j_uri=None, postgres_url=schema.url))
    yield services
    services.close()
    schema.cleanup()


def test_a_repair_leaves_a_running_write_in_another_process_alone_and_removes_what_no_one_writes(
        shared, tmp_path, monkeypatch):
    replica = Memory(services=shared, tenant="acme", promote=False)  # where the repair runs
    worker = Memory(services=shared, tenant="acme", promote=False)   # the other process, its own write lock
    replica.add("Dora Falk founded Globex in Utrecht.", source_id="about")
    replica.add("Bruno Lang leads the Kestrel team at Nordwerk.", source_id="team")
    shared.catalog.delete("acme", "about")  # a source the catalog lost: the repair removes it
    upload = tmp_path / "crates.jsonl"
    upload.write_text(RECORDS + "\n")

    stored, go = threading.Event(), threading.Event()
    write_facts = pipeline_module.write_facts

    def facts_after_a_pause(*args, **kwargs):  # the first record's items are stored, not yet catalogued
        stored.set()
        assert go.wait(60)
        return write_facts(*args, **kwargs)

    monkeypatch.setattr(pipeline_module, "write_facts", facts_after_a_pause)
    written = {}

    def job() -> None:  # as run_job runs an upload in a worker: under the file's source lock
        with shared.source_locks.hold("acme", "crates.jsonl"):
            written["added"] = worker.add_file(upload, source_id="crates.jsonl", tenant="acme")

    writer = threading.Thread(target=job)
    writer.start()
    try:
        assert stored.wait(60)
        state = SimpleNamespace(memory=replica, services=shared)
        report = check_tenant_stores(state, "acme", repair=True)["tenants"]["acme"]
    finally:
        go.set()
        writer.join(60)
    assert {row["source_id"] for row in report["uncatalogued"]} == {"about", "crates.jsonl#0"}
    repair = report["repair"]
    assert repair["removed"]["sources"] == 1
    assert repair["held"] == ["crates.jsonl#0"]
    assert any("left for the next check" in line for line in repair["left"])

    assert written["added"].source_ids == ["crates.jsonl#0", "crates.jsonl#1"]
    after = check_tenant_stores(state, "acme")
    assert after["ok"], after
    assert shared.vectors.ids_for_source("acme", "crates.jsonl#0")
    assert not shared.vectors.ids_for_source("acme", "about")
