"""`check --repair` (POST /v1/check?repair=true) while another process writes the same stores on PostgreSQL: a
writer stores a source's items before it records them in the catalog, so mid-write they read as uncatalogued. The
repair holds its own process's write lock only; it must leave what a running write holds (the source's lock, or
its file's) for the next check, and still remove what no one is writing. Every writer holds those locks itself: an
`agent-memory worker`'s upload, the CLI's ingestion (`agent-memory ingest`), an import, a session's archive; so does
every removal, per batch (`forget --prefix`, gc's expiry), and a whole tenant's removal the tenant's lock.

Two processes are two ``Memory`` objects on one set of services, each with its own write lock (as a worker and a
replica have); the source locks are PostgreSQL's advisory locks, on connections of their own. The writer is held
mid-write by a pause where its items are stored and its facts not yet written (``pipeline.write_facts``); a removal
where a batch's facts are gone and its items and entries not yet."""

from __future__ import annotations

import json
import threading
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Callable, Iterator

import pytest
from postgres_support import NEEDS_POSTGRES, FreshSchema

from agent_memory.api.ingestion import check_tenant_stores
from agent_memory.core.config import load_settings
from agent_memory.ingest import pipeline as pipeline_module
from agent_memory.ingest import removal as removal_module
from agent_memory.ingest.upkeep import expire
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


@contextmanager
def paused_in(monkeypatch, owner, name: str, write: Callable[[], object]) -> Iterator[dict]:
    """Run ``write`` in another thread (another process's writer or remover), paused once as it calls
    ``owner.<name>``, until the block ends; the dict yielded holds what ``write`` returned ("result") after."""
    reached, go = threading.Event(), threading.Event()
    call = getattr(owner, name)

    def after_a_pause(*args, **kwargs):
        if not reached.is_set():
            reached.set()
            assert go.wait(60)
        return call(*args, **kwargs)

    monkeypatch.setattr(owner, name, after_a_pause)
    written: dict = {}
    writer = threading.Thread(target=lambda: written.update(result=write()))
    writer.start()
    try:
        assert reached.wait(60)
        yield written
    finally:
        go.set()
        writer.join(60)
    assert not writer.is_alive()


def repair_while_paused(shared, monkeypatch, write: Callable[[], object],
                        pause_at: tuple[object, str] = (pipeline_module, "write_facts")) -> tuple[dict, object]:
    """Run ``write`` in another thread (another process's writer), pause it once at ``pause_at`` (by default where
    its first items are stored, not yet catalogued), and repair the tenant meanwhile from the replica's own write
    lock. The repair's report of the tenant and what ``write`` returned."""
    replica = Memory(services=shared, tenant="acme", promote=False)  # where the repair runs
    replica.add("Dora Falk founded Globex in Utrecht.", source_id="about")
    replica.add("Bruno Lang leads the Kestrel team at Nordwerk.", source_id="team")
    shared.catalog.delete("acme", "about")  # a source the catalog lost: the repair removes it

    state = SimpleNamespace(memory=replica, services=shared)
    with paused_in(monkeypatch, *pause_at, write) as written:
        report = check_tenant_stores(state, "acme", repair=True)["tenants"]["acme"]
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
    replica_with_sessions = Memory(services=shared, tenant="acme")

    def append_and_archive() -> int:  # the archive runs on a worker thread: the writer waits for it
        seq = replica_with_sessions.add_message("s1", {"role": "user", "content": "Ship crate 7 of copper wire to "
                                                                                 "bay 7 in Bremen."})
        replica_with_sessions.settle()
        return seq

    report, seq = repair_while_paused(shared, monkeypatch, append_and_archive)
    assert report["repair"]["held"] == ["s1/m0"]
    assert seq == 0
    assert shared.vectors.ids_for_source("acme", "s1/m0")


# ---- beside a removal: a batch's facts are gone (``removal.rederive`` is next), its items and entries not yet ----

REMOVAL_PAUSE = (removal_module, "rederive")


def untouched_by_the_repair(report: dict, being_removed: list[str]) -> None:
    """The check saw the sources being removed half removed (their facts gone), and the repair left each alone:
    listed as held, none marked to be written again, no fact extracted again."""
    flagged = {row["source_id"] for row in report["facts_missing"]}
    assert flagged and flagged <= set(being_removed), report
    repaired = report["repair"]
    assert repaired["held"] == sorted(flagged)
    assert repaired["facts_rebuilt"]["sources"] == 0
    assert repaired["ingest_again"] == {"files": [], "sources": []}


def gone(shared, source_ids: list[str]) -> None:
    for sid in source_ids:
        assert not shared.vectors.ids_for_source("acme", sid), sid
        assert shared.catalog.get("acme", sid) is None, sid
        assert not shared.graph.source_subjects("acme", sid), sid


def test_a_repair_leaves_a_prefix_forget_in_another_process_alone(shared, tmp_path, monkeypatch):
    remover = Memory(services=shared, tenant="acme", promote=False)  # `agent-memory forget --prefix old/` elsewhere
    remover.add("Ada Brandt founded Initech in Leiden.", source_id="old/founders")
    upload = tmp_path / "crates.jsonl"
    upload.write_text("\n".join(f'{{"text": "Karl Weber founded Umbrella{n} in Bremen."}}' for n in range(2)) + "\n")
    remover.add_file(upload, source_id="old/crates.jsonl", tenant="acme")  # its sources under the file's lock
    being_removed = ["old/crates.jsonl#0", "old/crates.jsonl#1", "old/founders"]

    report, removed = repair_while_paused(shared, monkeypatch, lambda: remover.forget_prefix("old/"), REMOVAL_PAUSE)
    untouched_by_the_repair(report, being_removed)
    assert {row["source_id"] for row in report["facts_missing"]} >= {"old/crates.jsonl#0", "old/founders"}
    assert removed["sources"] == 3 and removed["files"] == 1
    gone(shared, being_removed)
    assert shared.catalog.get("acme", "file:old/crates.jsonl") is None


def test_a_repair_leaves_a_gc_pass_in_another_process_alone(shared, monkeypatch):
    collector = Memory(services=shared, tenant="acme", promote=False)  # `agent-memory gc` elsewhere
    for n, text in enumerate(["Ada Brandt founded Initech in Leiden.", "Karl Weber founded Umbrella in Bremen."]):
        collector.add(text, source_id=f"old/{n}", metadata={"expires_at": "2000-01-01"})

    def collect() -> dict:
        with collector.write_lock:  # as the CLI's and the API's gc take it
            return expire(shared, tenants=["acme"])

    report, totals = repair_while_paused(shared, monkeypatch, collect, REMOVAL_PAUSE)
    untouched_by_the_repair(report, ["old/0", "old/1"])
    assert totals["sources"] == 2
    gone(shared, ["old/0", "old/1"])
    assert shared.catalog.get("acme", "team") is not None  # what did not expire stays


def test_a_repair_of_a_tenant_being_removed_in_another_process_changes_nothing(shared, monkeypatch):
    remover = Memory(services=shared, tenant="acme", promote=False)  # an admin's tenant removal elsewhere
    replica = Memory(services=shared, tenant="acme", promote=False)  # where the repair runs
    remover.add("Ada Brandt founded Initech in Leiden.", source_id="founders")
    remover.add("Karl Weber founded Umbrella in Bremen.", source_id="umbrella")
    state = SimpleNamespace(memory=replica, services=shared)
    # Paused with the tenant's facts gone and its items and entries not yet.
    with paused_in(monkeypatch, shared.vectors, "delete_where", lambda: remover.forget_tenant("acme")) as removed:
        report = check_tenant_stores(state, "acme", repair=True)["tenants"]["acme"]
    assert {row["source_id"] for row in report["facts_missing"]} == {"founders", "umbrella"}
    repaired = report["repair"]
    assert repaired["held"] == ["founders", "umbrella"]
    assert repaired["facts_rebuilt"]["sources"] == 0 and repaired["ingest_again"] == {"files": [], "sources": []}
    assert any("being removed by another process" in line for line in repaired["left"])
    assert removed["result"]["sources"] == 2
    assert check_tenant_stores(state, "acme")["ok"]
    gone(shared, ["founders", "umbrella"])
