"""A delete of a source that a job of the same tenant will store, queued or running, is refused (409
``source_busy``, naming the job) with nothing removed; the job then runs and stores the source, as the answer
said, and a delete after it forgets it. Before, the delete answered 404 (or removed an older copy), then the
queued upload stored the source: the user's delete undone without a word. Through HTTP (one source, a prefix,
file IDs, an upload's client path), the CLI's ``forget`` through the server, and never for another tenant."""

from __future__ import annotations

import json
import threading

import httpx
import pytest

from agent_memory.api import create_app, ingestion
from agent_memory.api.testing import serve_in_thread
from agent_memory.core.config import load_settings
from agent_memory.remote import KEY_ENV
from tests.helpers import api_error, embedded_cli_env, run_cli

ACME_KEY, GLOBEX_KEY = "key-acme-0123456789abcdef", "key-globex-0123456789abcdef"
ACME, GLOBEX = ({"X-API-Key": key} for key in (ACME_KEY, GLOBEX_KEY))
JOB_THRESHOLD = 200  # a body over this many bytes is a job
PLAN = "# Plan\n\nThe Heron pump is replaced in March by the team in Tromso.\n" * 8
CLIENT_PATH = "/home/u/notes/plan.md"


@pytest.fixture
def served(tmp_path, monkeypatch):
    """A server whose job runner waits, at a job of ``notes/blocker``, until ``release`` is set: the jobs behind
    it stay queued meanwhile."""
    data = tmp_path / "data"
    embedded_cli_env(monkeypatch, data)
    monkeypatch.setenv(KEY_ENV, ACME_KEY)
    release = threading.Event()
    run_job = ingestion.run_job

    def held(state, spec, progress=None):
        if spec.source_id == "notes/blocker":
            assert release.wait(60), "the test never released the runner"
        return run_job(state, spec, progress)

    monkeypatch.setattr(ingestion, "run_job", held)
    settings = load_settings(data_dir=data, api_keys={ACME_KEY: "acme", GLOBEX_KEY: "globex"})
    app = create_app(settings, warm=False, job_threshold_bytes=JOB_THRESHOLD)
    try:
        with serve_in_thread(app, owns=data) as url, httpx.Client(base_url=url, timeout=120) as http:
            yield http, release, app.state.api
    finally:
        release.set()


def _ended(http: httpx.Client, accepted: httpx.Response, headers=ACME) -> dict:
    assert accepted.status_code == 202, accepted.text
    for _ in range(1200):
        job = http.get(accepted.json()["url"], headers=headers).json()
        if job["status"] in ("done", "failed"):
            return job
        threading.Event().wait(0.05)
    raise AssertionError(f"the job did not end: {job}")


def _upload(http: httpx.Client, text: str = PLAN, headers=ACME) -> httpx.Response:
    files = {"file": ("plan.md", text.encode(), "text/markdown")}
    return http.post("/v1/documents", files=files, headers=headers,
                     data={"source_id": "notes/plan.md", "client_path": CLIENT_PATH})


def _sources(http: httpx.Client, headers=ACME) -> list[str]:
    listed = http.get("/v1/sources", params={"prefix": "notes/plan"}, headers=headers)
    assert listed.status_code == 200, listed.text
    return [s["source_id"] for s in listed.json()["sources"]]


def test_a_delete_of_a_source_whose_upload_is_queued_is_refused_naming_the_job_and_the_upload_then_stands(
        served, capsys):
    http, release, _ = served
    blocker = http.post("/v1/documents", json={"source_id": "notes/blocker", "text": "x " * 200}, headers=ACME)
    upload = _upload(http)
    assert upload.status_code == 202, upload.text
    job_id = upload.json()["job_id"]
    assert http.get(f"/v1/jobs/{job_id}", headers=ACME).json()["status"] == "queued"

    refused = http.delete("/v1/sources/notes/plan.md", headers=ACME)
    message = api_error(refused, 409, "source_busy")
    assert f"job {job_id}, queued, for 'notes/plan.md'" in message and f"GET /v1/jobs/{job_id}" in message
    assert refused.json()["jobs"] == [job_id]  # the jobs to wait for, as the remote client's SourceBusyError carries
    assert "nothing was removed" in message
    # Spelled as a path, by the file's path on the client, under a prefix or among file IDs: refused the same way.
    for path, params in (("/v1/sources/%2E/notes/plan.md", None), (f"/v1/sources/{CLIENT_PATH}", None),
                         ("/v1/sources", {"prefix": "notes/pl"}),
                         ("/v1/sources", {"file_ids": ["notes/other.md", "notes/plan.md"]})):
        assert job_id in api_error(http.delete(path, params=params, headers=ACME), 409, "source_busy"), path
    # The CLI's forget through the server that owns the data dir says so, and fails.
    code, _, err = run_cli(capsys, ["forget", "notes/plan.md"])
    assert code == 2 and "source_busy" in err and job_id in err, err
    # Another tenant's job is not this tenant's business: its own delete of that ID finds nothing.
    assert "no source 'notes/plan.md'" in api_error(http.delete("/v1/sources/notes/plan.md", headers=GLOBEX), 404)

    release.set()
    assert _ended(http, blocker)["status"] == "done"
    assert _ended(http, upload)["status"] == "done"
    # As the answer said: nothing was removed and the job went on, so the source is stored; a delete now forgets it.
    assert _sources(http) == ["notes/plan.md"]
    gone = http.delete("/v1/sources/notes/plan.md", headers=ACME)
    assert gone.status_code == 200 and gone.json()["sources"] >= 1, gone.text
    assert _sources(http) == []


def test_a_delete_beside_a_running_upload_is_refused_and_one_beside_another_source_s_goes_on(served):
    """Refused while the upload runs, whether or not its job holds the write lock: the answer does not depend on
    it (a forget queued behind the job, as before, ran after it in process, but with workers on PostgreSQL another
    worker may take the forget before the upload writes)."""
    http, _, state = served
    assert http.post("/v1/documents", json={"source_id": "notes/old.md", "text": "The old pump."},
                     headers=ACME).status_code == 200
    with state.ingest_lock:  # the upload's job waits for the write lock: running, not finished
        upload = _upload(http)
        assert upload.status_code == 202, upload.text
        job_id = upload.json()["job_id"]
        message = api_error(http.delete("/v1/sources/notes/plan.md", headers=ACME), 409, "source_busy")
        assert f"job {job_id}, running, for 'notes/plan.md'" in message
    assert _ended(http, upload)["status"] == "done"
    assert _sources(http) == ["notes/plan.md"]
    # A delete of a source no job stores is not refused.
    assert http.delete("/v1/sources/notes/old.md", headers=ACME).status_code == 200


def _export(*lines: dict) -> bytes:
    header = {"type": "header", "format": "agent-memory-export", "version": 1, "tenant": "acme"}
    return "".join(json.dumps(line) + "\n" for line in (header, *lines, {"type": "end"})).encode()


def test_a_delete_of_a_source_a_queued_import_stores_is_refused_naming_the_import(served, capsys):
    """An import's sources are read from its export when it is queued (its source lines, and its files' IDs and
    paths): before, a queued import said nothing of them, the delete answered 404, and the import then stored them."""
    http, release, _ = served
    ledger = {"type": "source", "source_id": "notes/ledger.md", "kind": "document", "title": "Ledger",
              "metadata": {}, "owner": "file:notes/ledger.md", "path": "/home/u/notes/ledger.md",
              "text": "The depot ledger lists crate 7 of copper wire. " * 4}
    body = _export({"type": "source", "source_id": "notes/imported", "kind": "document", "title": "Imported",
                    "metadata": {}, "text": "The Heron pump was imported from the old deployment. " * 4},
                   ledger, {"type": "file", "file_id": "notes/ledger.md", "path": "/home/u/notes/ledger.md",
                            "content_hash": "0" * 16, "named_by_user": True, "sources": ["notes/ledger.md"]})
    assert len(body) > JOB_THRESHOLD
    blocker = http.post("/v1/documents", json={"source_id": "notes/blocker", "text": "x " * 200}, headers=ACME)
    imported = http.post("/v1/import", content=body, headers={**ACME, "Content-Type": "application/x-ndjson"})
    assert imported.status_code == 202, imported.text
    job_id = imported.json()["job_id"]
    message = api_error(http.delete("/v1/sources/notes/imported", headers=ACME), 409, "source_busy")
    assert f"job {job_id}, queued, for 'notes/imported'" in message and "nothing was removed" in message
    # Its file by ID and by path, a prefix, file IDs: refused the same way; the CLI's forget through the server too.
    for path, params in (("/v1/sources/notes/ledger.md", None), ("/v1/sources//home/u/notes/ledger.md", None),
                         ("/v1/sources", {"prefix": "notes/imp"}), ("/v1/sources", {"file_ids": ["notes/ledger.md"]})):
        assert job_id in api_error(http.delete(path, params=params, headers=ACME), 409, "source_busy"), path
    code, _, err = run_cli(capsys, ["forget", "notes/imported"])
    assert code == 2 and "source_busy" in err and job_id in err, err
    # Another tenant's import is not this one's business; a source the export does not hold is not refused.
    assert "no source 'notes/imported'" in api_error(http.delete("/v1/sources/notes/imported", headers=GLOBEX), 404)
    assert "no source 'notes/other'" in api_error(http.delete("/v1/sources/notes/other", headers=ACME), 404)

    release.set()
    assert _ended(http, blocker)["status"] == "done"
    assert _ended(http, imported)["status"] == "done"
    gone = http.delete("/v1/sources/notes/imported", headers=ACME)
    assert gone.status_code == 200 and gone.json()["sources"] == 1, gone.text
