"""A folder job forgets the stored files gone from disk (ingest/missing.py), but not one that a job queued or
running will store: beside ``agent-memory worker`` processes (jobs in PostgreSQL) the local job asks their queue
as a forget does (ingest/queued_writes.py) and keeps that file, a skip in its report naming the job, while the
others go and the job goes on; once the job has run, the next folder job forgets it. Before, the folder job
forgot it and the worker's job stored it again: the removal undone without a word. Through the server that owns
the data dir, whose delete refuses a batch holding such a file (409), the batch is forgotten by halves and only
that file is kept."""

from __future__ import annotations

import json
import uuid

import pytest
from postgres_support import needs_postgres

from agent_memory.api import create_app
from agent_memory.api.testing import serve_in_thread
from agent_memory.api.worker import Worker
from agent_memory.core.config import load_settings
from agent_memory.memory import Memory
from agent_memory.remote import KEY_ENV
from agent_memory.stores.jobs import DurableJobQueue, JobSpec
from agent_memory.stores.pending_writes import PendingWrite
from tests.helpers import embedded_cli_env, run_cli

PLAN = "# Plan\n\nThe Heron pump is replaced in March by the team in Tromso.\n"
NOTES = {"plan.md": PLAN, "crew.md": "# Crew\n\nOrla Vance leads the Kestrel crew.\n",
         "todo.md": "# Todo\n\nRenew the Pelican domain before March.\n"}


@pytest.fixture
def notes(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    for name, text in NOTES.items():
        (folder / name).write_text(text)
    return folder


def _queue_upload(memory: Memory, tenant: str, path) -> str:
    """An upload of ``notes/plan.md`` from its path, as the API queues it for the workers."""
    body = PLAN.encode()
    return DurableJobQueue(memory.services.job_store).submit(JobSpec(
        tenant=tenant, kind="upload", source_id="notes/plan.md", size=len(body), body=body,
        params={"filename": "plan.md", "origin": str(path), "metadata": {}})).id


def _skips(report: dict) -> dict[str, str]:
    return dict(report["files_skipped"])


@needs_postgres
def test_a_python_folder_job_keeps_a_gone_file_a_queued_job_stores_and_forgets_it_after(tmp_path, pg_schema, notes):
    tenant = f"acme-{uuid.uuid4().hex[:8]}"
    settings = load_settings(data_dir=tmp_path / "data", triple_extractor="rules", qdrant_url=None, neo4j_uri=None,
                             postgres_url=pg_schema.url, tenant=tenant)
    with Memory(settings=settings) as memory:
        assert memory.add_paths([notes]).files_ingested == 3
        for name in ("plan.md", "crew.md"):
            (notes / name).unlink()
        job_id = _queue_upload(memory, tenant, notes / "plan.md")

        report = memory.add_paths([notes]).to_dict()
        assert report["gone_from_disk"] == ["notes/crew.md"] and report["ok"], report
        reason = _skips(report)[str(notes / "plan.md")]
        assert reason.startswith("gone from disk, but kept: job ") and job_id in reason, reason
        assert (str(notes / "plan.md"), "skipped") in report["files"]
        assert report["files_unchanged"] == 1 and report["store_error"] is None
        assert memory.matching_sources("notes/plan.md") == ["notes/plan.md"]
        assert memory.matching_sources("notes/crew.md") == []

        # As the skip said: the job stores the file, and the next folder job forgets it (gone from disk still).
        assert Worker(memory.services, lease_s=30).run(once=True) == 1
        again = memory.add_paths([notes]).to_dict()
        assert again["gone_from_disk"] == ["notes/plan.md"] and again["files_skipped"] == [], again
        assert memory.matching_sources("notes/plan.md") == []
        # Another tenant's queued job is not this tenant's business.
        (notes / "plan.md").write_text(PLAN)
        memory.add_paths([notes], tenant="globex")
        (notes / "plan.md").unlink()
        _queue_upload(memory, tenant, notes / "plan.md")
        assert memory.add_paths([notes], tenant="globex").gone_from_disk == ["notes/plan.md"]


@needs_postgres
def test_the_local_cli_folder_job_reports_the_kept_file_as_a_skip_and_exits_0(
        tmp_path, monkeypatch, capsys, pg_schema, notes):
    tenant = f"acme-{uuid.uuid4().hex[:8]}"
    embedded_cli_env(monkeypatch, tmp_path / "data")
    monkeypatch.setenv("AGENT_MEMORY_POSTGRES_URL", pg_schema.url)
    monkeypatch.setenv("AGENT_MEMORY_TENANT", tenant)
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, ["ingest", "notes", "--json"])
    assert code == 0, err
    (notes / "plan.md").unlink()
    with Memory() as memory:
        job_id = _queue_upload(memory, tenant, notes / "plan.md")
    code, out, err = run_cli(capsys, ["ingest", "notes", "--json"])
    report = json.loads(out)
    assert code == 0 and report["gone_from_disk"] == [], (out, err)
    assert job_id in _skips(report)[str(notes / "plan.md")]
    code, out, _ = run_cli(capsys, ["ingest", "notes"])  # the text report: the skip with its reason
    assert code == 0 and f"skipped: {notes / 'plan.md'}: gone from disk, but kept: job {job_id}" in out, out


def test_through_the_server_a_refused_batch_is_forgotten_by_halves_and_only_the_queued_file_kept(
        tmp_path, monkeypatch, capsys, notes):
    """The server's delete asks its own queue (here answering that a job stores ``notes/plan.md``, as an upload
    it holds queued would): its 409 for the batch leaves the other gone files forgotten, that one kept."""
    data = tmp_path / "data"
    embedded_cli_env(monkeypatch, data)
    monkeypatch.delenv(KEY_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    app = create_app(load_settings(data_dir=data), warm=False)
    with serve_in_thread(app, owns=data):
        code, out, err = run_cli(capsys, ["ingest", "notes", "--json"])
        assert code == 0 and json.loads(out)["files_ingested"] == 3, err
        for name in NOTES:
            (notes / name).unlink()
        jobs = app.state.api.jobs

        def writing(tenant, names, prefix=None):
            return [PendingWrite("job-plan", "queued", "notes/plan.md")] if "notes/plan.md" in names else []

        monkeypatch.setattr(jobs, "writing", writing)
        code, out, err = run_cli(capsys, ["ingest", "notes", "--json"])
        report = json.loads(out)
        assert code == 0 and sorted(report["gone_from_disk"]) == ["notes/crew.md", "notes/todo.md"], (out, err)
        assert report["files_failed"] == [] and "job job-plan" in _skips(report)[str(notes / "plan.md")], report
        code, out, _ = run_cli(capsys, ["list"])
        assert [row["source_id"] for row in json.loads(out)["sources"]] == ["notes/plan.md"]
