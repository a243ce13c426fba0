"""`check --repair` (POST /v1/check?repair=true) while another process writes the same stores on PostgreSQL: a
writer stores a source's items before it records them in the catalog, so mid-write they read as uncatalogued. The
repair holds its own process's write lock only; it must leave what a running write holds (the source's lock, or
its file's) for the next check, and still remove what no one is writing. Every writer holds those locks itself: an
`agent-memory worker`'s upload, the CLI's ingestion (`agent-memory ingest`), an import, a session's archive.

Two processes are two ``Memory`` objects on one set of services, each with its own write lock (as a worker and a
replica have); the source locks are PostgreSQL's advisory locks, on connections of their own. The writer is held
mid-write by a pause where its items are stored and its facts not yet written (``pipeline.write_facts``)."""

from __future__ import annotations

import json
import threading
from types import SimpleNamespace
from typing import Callable

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


def repair_while_paused(shared, monkeypatch, write: Callable[[], object]) -> tuple[dict, object]:
    """Run ``write`` in another thread (another process's writer), pause it once where its first items are stored
    and not yet catalogued, and repair the tenant meanwhile from the replica's own write lock. The repair's
    report of the tenant and what ``write`` returned."""
    replica = Memory(services=shared, tenant="acme", promote=False)  # where the repair runs
    replica.add("Dora Falk founded Globex in Utrecht.", source_id="about")
    replica.add("Bruno Lang leads the Kestrel team at Nordwerk.", source_id="team")
    shared.catalog.delete("acme", "about")  # a source the catalog lost: the repair removes it

    stored, go = threading.Event(), threading.Event()
    write_facts = pipeline_module.write_facts

    def facts_after_a_pause(*args, **kwargs):  # the first write's items are stored, not yet catalogued
        if not stored.is_set():
            stored.set()
            assert go.wait(60)
        return write_facts(*args, **kwargs)

    monkeypatch.setattr(pipeline_module, "write_facts", facts_after_a_pause)
    written = {}

    def job() -> None:
        written["result"] = write()

    writer = threading.Thread(target=job)
    writer.start()
    try:
        assert stored.wait(60)
        state = SimpleNamespace(memory=replica, services=shared)
        report = check_tenant_stores(state, "acme", repair=True)["tenants"]["acme"]
    finally:
        go.set()
        writer.join(60)
    assert not writer.is_alive()
    assert report["repair"]["removed"]["sources"] == 1  # what no one writes still goes
    assert any("left for the next check" in line for line in report["repair"]["left"])
    after = check_tenant_stores(state, "acme")  # the write done: nothing to repair, nothing lost
    assert after["ok"], after
    assert not shared.vectors.ids_for_source("acme", "about")
    return report, written["result"]


def test_a_repair_leaves_an_upload_in_another_process_alone_and_removes_what_no_one_writes(
        shared, tmp_path, monkeypatch):
    worker = Memory(services=shared, tenant="acme", promote=False)  # the other process, its own write lock
    upload = tmp_path / "crates.jsonl"
    upload.write_text(RECORDS + "\n")
    # As run_job runs an upload in a worker: the ingestion holds the file's lock itself.
    report, added = repair_while_paused(
        shared, monkeypatch, lambda: worker.add_file(upload, source_id="crates.jsonl", tenant="acme"))
    assert {row["source_id"] for row in report["uncatalogued"]} == {"about", "crates.jsonl#0"}
    assert report["repair"]["held"] == ["crates.jsonl#0"]
    assert added.source_ids == ["crates.jsonl#0", "crates.jsonl#1"]
    assert shared.vectors.ids_for_source("acme", "crates.jsonl#0")


def test_a_repair_leaves_the_cli_ingestion_of_a_folder_in_another_process_alone(shared, tmp_path, monkeypatch):
    cli = Memory(services=shared, tenant="acme", promote=False)  # `agent-memory ingest notes/` elsewhere
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "crates.jsonl").write_text(RECORDS + "\n")
    report, job = repair_while_paused(shared, monkeypatch, lambda: cli.add_paths([folder], recursive=True))
    assert report["repair"]["held"] == ["notes/crates.jsonl#0"]
    assert job.files_ingested == 1 and not job.files_failed
    assert shared.vectors.ids_for_source("acme", "notes/crates.jsonl#0")


def test_a_repair_leaves_an_import_in_another_process_alone(shared, monkeypatch):
    importer = Memory(services=shared, tenant="acme", promote=False)
    lines = [{"type": "header", "format": "agent-memory-export", "version": 1, "tenant": "acme"},
             {"type": "source", "source_id": "crates.jsonl#0", "owner": "file:crates.jsonl",
              "text": "Crate 0 of copper wire went to bay 0 in Bremen."},
             {"type": "file", "file_id": "crates.jsonl", "content_hash": "0" * 64, "path": "/elsewhere/crates.jsonl",
              "sources": ["crates.jsonl#0"]},
             {"type": "source", "source_id": "harbour", "text": "The Bremen harbour opens at six."},
             {"type": "end"}]
    report, imported = repair_while_paused(
        shared, monkeypatch, lambda: importer.import_export(json.dumps(line) for line in lines))
    # A file's source is held by the file's lock (the key its owner in the catalog names), as its ingestion holds it.
    assert report["repair"]["held"] == ["crates.jsonl#0"]
    assert imported.ok, imported
    assert imported.sources_written == 2 and imported.files_recorded == 1
    assert shared.vectors.ids_for_source("acme", "crates.jsonl#0") and shared.vectors.ids_for_source("acme", "harbour")


def test_a_repair_leaves_a_session_archive_in_another_process_alone(shared, monkeypatch):
    replica_with_sessions = Memory(services=shared, tenant="acme")  # archives each message before it returns
    report, seq = repair_while_paused(shared, monkeypatch, lambda: replica_with_sessions.add_message(
        "s1", {"role": "user", "content": "Ship crate 7 of copper wire to bay 7 in Bremen."}))
    assert report["repair"]["held"] == ["s1/m0"]
    assert seq == 0
    assert shared.vectors.ids_for_source("acme", "s1/m0")
