"""An upload job the server gives up on (interrupted ``MAX_ATTEMPTS`` times: each start was stopped, or the
process killed, while it ran) leaves the stores as they were before it started. Its runs had stored part of
the file: the records they reached, the items of the unit they were in. Left there, they answered searches
while ``GET /v1/sources`` called the file missing (no manifest is written until a run completes), and a new
upload of the file took them as stored. Now the give-up removes them, and the job's record says so; a version
of the file stored before stays whole."""

from __future__ import annotations

import json
import os
import threading
import time

import httpx
import pytest

os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")

from agent_memory.api import create_app  # noqa: E402
from agent_memory.api.testing import serve_in_thread  # noqa: E402
from agent_memory.core.config import load_settings  # noqa: E402
from agent_memory.core.errors import JobInterrupted  # noqa: E402
from agent_memory.core.progress import CHUNKS_STAGE  # noqa: E402
from agent_memory.ingest import pipeline as pipeline_module  # noqa: E402
from agent_memory.ingest.upkeep import inspect  # noqa: E402
from agent_memory.memory import Memory  # noqa: E402
from agent_memory.stores.job_spool import MAX_ATTEMPTS, SpooledJobs  # noqa: E402
from agent_memory.stores.jobs import JobRegistry, JobSpec  # noqa: E402

PUMPS = "\n".join(json.dumps({"text": text}) for text in (
    "Pump P-7 in greenhouse 3 was replaced on 2 March by Marta Okafor.",
    "Pump P-9 in greenhouse 5 leaks at the outlet valve.",
    "Pump P-2 was moved to the seed house in April.")).encode()
CHAT = json.dumps([{"speaker": "Ana", "text": "The kiln in the north shed cracked again last night."},
                   {"speaker": "Ben", "text": "Then the kiln repair goes to Dario before Friday."}]).encode()
NOTE_BEFORE = b"The boiler in greenhouse 2 was serviced on 4 May by Ines Varga."
NOTE_AFTER = b"The boiler in greenhouse 2 failed on 9 June; a new one comes from Brno in July."


class Killed(BaseException):
    """The process dying inside a write: nothing after it runs (no ``except Exception`` takes it)."""


def _settings(data_dir):
    return load_settings(data_dir=data_dir, triple_extractor="rules", llm_model=None, qdrant_url=None,
                         neo4j_uri=None, postgres_url=None, api_keys={})


def _partly_stored(data_dir, tmp_path, monkeypatch) -> None:
    """What the interrupted runs stored: pumps.jsonl to its first record (a stop between records), the
    transcript chat.json and notes.md's new version killed inside their writes (items stored, nothing after);
    notes.md's earlier version stored whole before."""
    files = tmp_path / "files"
    files.mkdir()
    with Memory(settings=_settings(data_dir)) as memory:
        (files / "notes.md").write_bytes(NOTE_BEFORE)
        memory.add_file(files / "notes.md", source_id="notes.md")

        def stop_at_second_record(stage, done, total):
            if stage == "ingesting" and done == 1:
                raise JobInterrupted("the server is stopping")

        (files / "pumps.jsonl").write_bytes(PUMPS)
        with pytest.raises(JobInterrupted):
            memory.add_file(files / "pumps.jsonl", source_id="pumps.jsonl", progress=stop_at_second_record)

        def killed_after_its_items(stage, done, total):
            if stage == CHUNKS_STAGE:
                raise Killed()

        (files / "notes.md").write_bytes(NOTE_AFTER)
        with pytest.raises(Killed):
            memory.add_file(files / "notes.md", source_id="notes.md", progress=killed_after_its_items)

        def killed(*_args, **_kwargs):
            raise Killed()

        (files / "chat.json").write_bytes(CHAT)
        with monkeypatch.context() as patch, pytest.raises(Killed):
            patch.setattr(pipeline_module, "write_facts", killed)
            memory.add_file(files / "chat.json", source_id="chat.json")


def _uploads(tmp_path, files: dict[str, bytes]) -> list[JobSpec]:
    specs = []
    for name, data in files.items():
        upload = tmp_path / "request" / name
        upload.parent.mkdir(exist_ok=True)
        upload.write_bytes(data)
        specs.append(JobSpec("default", "upload", name, len(data), {"filename": name, "metadata": {}, "origin": None},
                             path=upload))
    return specs


def _given_up_jobs(data_dir, specs: list[JobSpec]) -> dict[str, str]:
    """The jobs as the spool holds them after ``MAX_ATTEMPTS - 1`` stops: the next start gives them up.
    {source ID: the job ID its client polls}."""
    stuck = threading.Event()
    jobs = SpooledJobs(JobRegistry(lambda spec, job: stuck.wait(30) and {}, stop_wait_s=0), data_dir / "pending-jobs")
    ids = {spec.source_id: jobs.submit(spec).id for spec in specs}
    for _ in range(MAX_ATTEMPTS - 1):
        jobs.close()
        jobs = SpooledJobs(JobRegistry(lambda spec, job: stuck.wait(30) and {}, stop_wait_s=0),
                           data_dir / "pending-jobs")
        jobs.resume()
    jobs.close()
    stuck.set()
    return ids


def _outcome(http: httpx.Client, job_id: str) -> dict:
    deadline = time.monotonic() + 300
    while (answer := http.get(f"/v1/jobs/{job_id}")).json().get("status") not in ("done", "failed"):
        assert answer.status_code == 200, answer.text
        assert time.monotonic() < deadline, answer.text
        time.sleep(0.1)
    return answer.json()


def test_a_given_up_upload_leaves_the_stores_as_they_were_before_it(tmp_path, monkeypatch):
    data_dir = tmp_path / "data"
    _partly_stored(data_dir, tmp_path, monkeypatch)
    with Memory(settings=_settings(data_dir)) as memory:
        before = inspect(memory.services, "default", "notes.md")
        assert inspect(memory.services, "default", "pumps.jsonl#0") is not None  # what the runs left
        assert len(before["items"]) > 1  # notes.md: the new version's items beside the earlier version's
    jobs = _given_up_jobs(data_dir, _uploads(tmp_path, {"pumps.jsonl": PUMPS, "notes.md": NOTE_AFTER, "chat.json": CHAT}))

    with serve_in_thread(create_app(_settings(data_dir), warm=False)) as url, \
            httpx.Client(base_url=url, timeout=120) as http:
        for name, job_id in jobs.items():
            job = _outcome(http, job_id)
            assert job["status"] == "failed" and job["error"]["code"] == "interrupted", job
            message = job["error"]["message"]
            assert f"the server stopped {MAX_ATTEMPTS} times" in message and f"upload {name!r} again" in message, job
        # A file never stored whole leaves nothing: no source, nothing to search, no ID held.
        assert "what its runs had stored was removed" in _outcome(http, jobs["pumps.jsonl"])["error"]["message"]
        listed = http.get("/v1/sources").json()["sources"]
        assert [row["source_id"] for row in listed] == ["notes.md"], listed
        for gone in ("pumps.jsonl", "pumps.jsonl#0", "chat.json", "chat.json#summary"):
            assert http.get(f"/v1/sources/{gone}").status_code == 404, gone
        found = http.post("/v1/search", json={"query": "pump replaced by Marta Okafor kiln cracked"}).json()
        assert {hit["source_id"] for hit in found["passages"]} <= {"notes.md"}, found
        # A file stored before keeps that version: its entry and items as they were, the new text gone.
        assert "the version stored before is kept" in _outcome(http, jobs["notes.md"])["error"]["message"]
        kept = http.get("/v1/sources/notes.md").json()
        assert [item["text"] for item in kept["items"]] == [NOTE_BEFORE.decode()]
        assert kept["catalog"] == {**before["catalog"]}
        # Uploaded again, each file is read whole (nothing taken as stored already).
        for name, data in (("pumps.jsonl", PUMPS), ("notes.md", NOTE_AFTER)):
            again = http.post("/v1/documents", files={"file": (name, data)}, data={"source_id": name})
            assert again.status_code == 200 and again.json()["report"]["files_ingested"] == 1, again.text
        assert [i["text"] for i in http.get("/v1/sources/notes.md").json()["items"]] == [NOTE_AFTER.decode()]
        assert http.get("/v1/sources/pumps.jsonl#2").status_code == 200


def test_a_given_up_document_job_leaves_its_earlier_version_and_no_new_source(tmp_path):
    """A posted document large enough to be a job: its runs were killed with its items stored."""
    data_dir = tmp_path / "data"

    def killed_after_its_items(stage, done, total):
        if stage == CHUNKS_STAGE:
            raise Killed()

    with Memory(settings=_settings(data_dir)) as memory:
        memory.add(NOTE_BEFORE.decode(), source_id="boiler")
        before = inspect(memory.services, "default", "boiler")
        for sid in ("boiler", "kiln"):
            with pytest.raises(Killed):
                memory.add(NOTE_AFTER.decode(), source_id=sid, progress=killed_after_its_items)
        assert inspect(memory.services, "default", "kiln")["catalog"] is None  # searchable, unknown to the catalog
    text = NOTE_AFTER.decode()
    jobs = _given_up_jobs(data_dir, [JobSpec("default", "text", sid, len(NOTE_AFTER), {"title": "", "metadata": {}},
                                             body=NOTE_AFTER) for sid in ("boiler", "kiln")])

    with serve_in_thread(create_app(_settings(data_dir), warm=False)) as url, \
            httpx.Client(base_url=url, timeout=120) as http:
        for sid, job_id in jobs.items():
            job = _outcome(http, job_id)
            assert job["status"] == "failed" and job["error"]["code"] == "interrupted", job
            assert job["error"]["message"].endswith(f"what its runs had stored was removed (1 item); post {sid!r} again")
        assert http.get("/v1/sources/boiler").json() == before
        assert http.get("/v1/sources/kiln").status_code == 404
        # Its ID is not held for the text that was never stored: a file may take it.
        upload = http.post("/v1/documents", files={"file": ("kiln.md", NOTE_AFTER)}, data={"source_id": "kiln"})
        assert upload.status_code == 200 and upload.json()["report"]["files_ingested"] == 1, upload.text
        assert [item["text"] for item in http.get("/v1/sources/kiln").json()["items"]] == [text]
