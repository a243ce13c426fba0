"""An upload is staged under the server's data dir (``staged-uploads``), never in the system's temp dir, and
removed once read: inline right after, a job's once it ends. Before, each was a folder in /tmp, and a server
killed while it read one (or a data dir removed while a job was queued) left the uploaded file there for good;
now the next start removes what a killed server staged, while a job it had queued keeps its file (in its
``pending-jobs`` entry) and is ingested. A worker stages a job's body under its own data dir the same way."""

from __future__ import annotations

import os
import tempfile
import uuid

import httpx
import pytest
from postgres_support import needs_postgres

os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")

from agent_memory.api import create_app  # noqa: E402
from agent_memory.api import ingestion as ingestion_module  # noqa: E402
from agent_memory.api.testing import serve_in_thread  # noqa: E402
from agent_memory.api.worker import Worker  # noqa: E402
from agent_memory.core import diskspace  # noqa: E402
from agent_memory.core.config import load_settings  # noqa: E402
from agent_memory.memory import Memory  # noqa: E402
from agent_memory.stores.jobs import DurableJobQueue, JobSpec  # noqa: E402
from agent_memory.stores.staging import STAGED_UPLOADS  # noqa: E402
from tests.helpers import api_error, finished_job, spool_an_interrupted_upload  # noqa: E402

NOTE = b"# Pump log\n\nThe pump in greenhouse 3 was replaced on 2 March by Marta Okafor.\n"
BIG_NOTE = b"# Boiler log\n\n" + b"The boiler in hall 7 is bled every Friday by Ivo Brandt.\n" * 80
THRESHOLD = 2048  # NOTE is read inline, BIG_NOTE by a job


def _settings(data_dir, **extra):
    return load_settings(data_dir=data_dir, triple_extractor="none", qdrant_url=None, neo4j_uri=None,
                         postgres_url=None, api_keys={}, **extra)


@pytest.fixture
def read_paths(monkeypatch):
    """The path each upload's ingestion read the file from, with whether it was there then."""
    seen: list[tuple[str, bool]] = []
    real = ingestion_module.ingest_upload

    def recording(state, tenant, path, *args, **kwargs):
        seen.append((str(path), path.is_file()))
        return real(state, tenant, path, *args, **kwargs)

    monkeypatch.setattr(ingestion_module, "ingest_upload", recording)
    return seen


@pytest.fixture
def system_temp(tmp_path, monkeypatch):
    """The system's temp dir, for this test a folder of its own: nothing the server stages may land there."""
    folder = tmp_path / "system-temp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def _left_in(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_an_upload_is_staged_under_the_data_dir_and_removed_once_read_or_refused(tmp_path, read_paths, system_temp):
    data_dir = tmp_path / "data"
    staged = data_dir / STAGED_UPLOADS
    app = create_app(_settings(data_dir), warm=False, job_threshold_bytes=THRESHOLD, max_upload_bytes=64 * 1024)
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=120) as http:
        inline = http.post("/v1/documents", files={"file": ("logs/pump.md", NOTE)})
        assert inline.status_code == 200, inline.text
        [(path, there)] = read_paths
        assert there and path.startswith(str(staged) + os.sep) and path.endswith(os.sep + "pump.md"), path
        assert _left_in(staged) == []  # removed right after it was read
        assert STAGED_UPLOADS not in inline.text and str(data_dir) not in inline.text  # the client's name only

        # A job's file moves from the staged folder into its spool entry before the 202, and goes when it ends.
        queued = http.post("/v1/documents", files={"file": ("logs/boiler.md", BIG_NOTE)})
        assert queued.status_code == 202, queued.text
        assert _left_in(staged) == []
        assert finished_job(http, queued.json()["url"])["status"] == "done"
        path, there = read_paths[-1]
        assert there and path.startswith(str(data_dir / "pending-jobs") + os.sep), path
        assert _left_in(data_dir / "pending-jobs") == []

        # Refused while read (no format it reads), or past the limit while staged: nothing stays either.
        refused = http.post("/v1/documents", files={"file": ("blob.bin", bytes(range(256)) * 4)})
        api_error(refused, 400, "unsupported_file")
        too_big = http.post("/v1/documents", files={"file": ("huge.md", b"x" * (65 * 1024))})
        api_error(too_big, 413, "too_large")
        assert _left_in(staged) == []

        stored = http.get("/v1/sources/logs/pump.md")
        assert stored.status_code == 200 and "Marta Okafor" in stored.text, stored.text
    assert [p.name for p in system_temp.iterdir() if p.name.startswith("agent-memory-")] == []


def test_a_restart_removes_what_a_killed_server_staged_and_runs_the_job_it_had_queued(tmp_path):
    data_dir = tmp_path / "data"
    # The killed server: one upload queued (its file in the spool) and one it was reading when it died.
    job_id = spool_an_interrupted_upload(tmp_path, data_dir, "default", NOTE)
    orphan = data_dir / STAGED_UPLOADS / "upload-killed"
    orphan.mkdir(parents=True)
    (orphan / "boiler.md").write_bytes(BIG_NOTE)
    spooled = [p for p in (data_dir / "pending-jobs").rglob("pump.md")]
    assert len(spooled) == 1

    with serve_in_thread(create_app(_settings(data_dir), warm=False)) as url, \
            httpx.Client(base_url=url, timeout=120) as http:
        assert not orphan.exists()  # no job refers to it: gone at the start
        job = finished_job(http, f"/v1/jobs/{job_id}")
        assert job["status"] == "done" and job["result"]["source_ids"] == ["logs/pump.md"], job
        stored = http.get("/v1/sources/logs/pump.md")
        assert stored.status_code == 200 and "Marta Okafor" in stored.text, stored.text
        assert http.get("/v1/sources/boiler.md").status_code == 404
    assert _left_in(data_dir / "pending-jobs") == [] and _left_in(data_dir / STAGED_UPLOADS) == []


def test_an_upload_that_would_eat_the_data_dirs_free_space_reserve_is_refused_before_it_is_staged(
        tmp_path, monkeypatch):
    """The reserve (AGENT_MEMORY_MIN_FREE_MB) the stores keep: staged where they write, an upload keeps it too."""
    data_dir = tmp_path / "data"
    app = create_app(_settings(data_dir, min_free_mb=64), warm=False, max_upload_bytes=8 * 1024 * 1024)
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=120) as http:
        first = http.post("/v1/documents", files={"file": ("logs/pump.md", NOTE)})  # the stores made meanwhile
        assert first.status_code == 200, first.text
        monkeypatch.setattr(diskspace, "free_bytes", lambda path: 66 * 1024 * 1024)  # the reserve and 2 MB
        refused = http.post("/v1/documents", files={"file": ("logs/scan.md", b"scan line\n" * 300_000)})
        message = api_error(refused, 503, "store_error")
        assert "staging the upload refused" in message and "AGENT_MEMORY_MIN_FREE_MB" in message, message
        assert _left_in(data_dir / STAGED_UPLOADS) == []
        small = http.post("/v1/documents", files={"file": ("logs/boiler.md", BIG_NOTE)})
        assert small.status_code == 200, small.text  # within the reserve: staged and stored


@needs_postgres
def test_a_worker_stages_a_job_body_under_its_data_dir_and_its_start_removes_a_killed_ones(
        tmp_path, pg_schema, read_paths, system_temp):
    tenant = f"acme-{uuid.uuid4().hex[:8]}"
    settings = load_settings(data_dir=tmp_path / "data", triple_extractor="none", qdrant_url=None, neo4j_uri=None,
                             postgres_url=pg_schema.url, tenant=tenant)
    with Memory(settings=settings) as memory:
        staged = memory.services.data_dir / STAGED_UPLOADS
        orphan = staged / "job-killed"
        orphan.mkdir(parents=True)
        (orphan / "pump.md").write_bytes(NOTE)
        queue = DurableJobQueue(memory.services.job_store)
        job = queue.submit(JobSpec(tenant=tenant, kind="upload", source_id="logs/pump.md", size=len(NOTE), body=NOTE,
                                   params={"filename": "logs/pump.md", "metadata": {}}))
        worker = Worker(memory.services, lease_s=30)
        assert not orphan.exists()  # a killed worker's copy: the job's bytes are in its row
        assert worker.run(once=True) == 1
        assert queue.get(job.id, tenant).status == "done"
        [(path, there)] = read_paths
        assert there and path.startswith(str(staged) + os.sep), path
        assert _left_in(staged) == []
        assert memory.matching_sources("logs/pump.md") == ["logs/pump.md"]
    assert [p.name for p in system_temp.iterdir() if p.name.startswith("agent-memory-")] == []
