"""A start after a crash: the archive catch-up (messages the crash left unarchived) and the jobs the spool holds.

A resumed upload job took the write lock first and held it for the whole upload, while the catch-up waited for
it and every question of every tenant waited for the catch-up (120 s each, for as long as the upload ran). And
until the jobs were queued again after the warm-up, a job's ID answered 404 "no job" though the spool held it.
"""

from __future__ import annotations

import os
import threading

import httpx

os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")

from agent_memory import Memory  # noqa: E402
from agent_memory.api import create_app  # noqa: E402
from agent_memory.api import ingestion as ingestion_module  # noqa: E402
from agent_memory.api import state as state_module  # noqa: E402
from agent_memory.api.testing import serve_in_thread  # noqa: E402
from agent_memory.conversation.working_memory import WorkingMemory  # noqa: E402
from agent_memory.core.config import load_settings  # noqa: E402
from tests.helpers import finished_job, spool_an_interrupted_upload  # noqa: E402

NOTE = b"# Pump log\n\nThe pump in greenhouse 3 was replaced on 2 March by Marta Okafor.\n"
ACME, GLOBEX = {"X-API-Key": "acme-0123456789abcdef"}, {"X-API-Key": "globex-0123456789abcdef"}


def _settings(data_dir):
    return load_settings(data_dir=data_dir, triple_extractor="none", qdrant_url=None, neo4j_uri=None,
                         postgres_url=None, api_keys={"acme-0123456789abcdef": "acme",
                                                      "globex-0123456789abcdef": "globex"})


def _crashed(tmp_path):
    """A data dir as a crash leaves it: globex's messages appended but never archived, acme's upload job spooled
    and unfinished. Returns the data dir and the job's ID."""
    data_dir = tmp_path / "data"
    with Memory(settings=_settings(data_dir), tenant="globex", promote=False) as appender:  # no archive pass ran
        appender.add_message("harbour", {"role": "user", "content": "The harbour gate closes at 6pm sharp."})
    return data_dir, spool_an_interrupted_upload(tmp_path, data_dir, "acme", NOTE)


def test_a_resumed_job_holding_the_write_lock_stalls_no_question_and_the_catch_up_completes(tmp_path, monkeypatch):
    data_dir, job_id = _crashed(tmp_path)
    holding, release = threading.Event(), threading.Event()
    real_upload, real_catch_up = ingestion_module.ingest_upload, WorkingMemory.catch_up

    def slow_upload(state, *args, **kwargs):  # a long upload: the write lock held until the test lets go
        with state.memory.write_lock:
            holding.set()
            release.wait(120)
        return real_upload(state, *args, **kwargs)

    def catch_up_after_the_job_started(self):
        # The order the crash showed: the resumed job had the lock before the catch-up's first pass. Fixed, the
        # job waits for the catch-up and is never holding here: the catch-up goes on after this wait.
        holding.wait(5)
        return real_catch_up(self)

    monkeypatch.setattr(ingestion_module, "ingest_upload", slow_upload)
    monkeypatch.setattr(WorkingMemory, "catch_up", catch_up_after_the_job_started)
    monkeypatch.setattr(Memory, "catch_up_wait_s", 20.0)  # the reads' bound, short of the default 120 s
    with serve_in_thread(create_app(_settings(data_dir), warm=False)) as url, \
            httpx.Client(base_url=url, timeout=120) as http:
        try:
            assert holding.wait(60), "the resumed job never ran"
            answer = http.post("/v1/search", headers=GLOBEX, json={"query": "When does the harbour gate close?"})
            assert answer.status_code == 200, answer.text
            # Answered while acme's job still holds the lock, with what the catch-up archived (globex's message).
            assert "6pm" in answer.text, answer.text
            assert http.get(f"/v1/jobs/{job_id}", headers=ACME).json()["status"] == "running"
        finally:
            release.set()
        assert finished_job(http, f"/v1/jobs/{job_id}", ACME)["status"] == "done"


def test_a_spooled_job_answers_queued_during_the_warm_up_never_404(tmp_path, monkeypatch):
    data_dir, job_id = _crashed(tmp_path)
    warming, finish = threading.Event(), threading.Event()

    def slow_warm_up(self):  # the model and the stores loading
        warming.set()
        finish.wait(120)
        self.warm_done.set()
        self.resume_jobs()

    monkeypatch.setattr(state_module.ApiState, "warm_up", slow_warm_up)
    with serve_in_thread(create_app(_settings(data_dir), warm=True)) as url, \
            httpx.Client(base_url=url, timeout=120) as http:
        try:
            assert warming.wait(60)
            during = http.get(f"/v1/jobs/{job_id}", headers=ACME)
            assert during.status_code == 200, during.text
            assert during.json()["job_id"] == job_id and during.json()["status"] == "queued", during.text
            # Another tenant's spooled job is not shown: it reads as a missing one.
            assert http.get(f"/v1/jobs/{job_id}", headers=GLOBEX).status_code == 404
            # Nor may the tenant be removed under it (its upload would land after the removal).
            busy = http.delete("/v1/tenant", headers=ACME, params={"confirm": "acme"})
            assert busy.status_code == 409 and busy.json()["error"]["code"] == "tenant_busy", busy.text
        finally:
            finish.set()
        job = finished_job(http, f"/v1/jobs/{job_id}", ACME)
        assert job["status"] == "done" and job["result"]["source_ids"] == ["logs/pump.md"], job


def test_a_small_upload_is_queued_when_a_job_holds_the_write_lock_and_no_writer_slips_in_before_an_inline_one(
        tmp_path, monkeypatch):
    """The upload decided 'inline' on a free lock, let it go, then waited for it: a job taking it in between (a
    spooled one resumed after the warm-up) held the request for minutes. The lock taken to decide is now kept."""
    monkeypatch.setattr(ingestion_module, "LOCK_GRACE_S", 0)
    app = create_app(_settings(tmp_path / "data"), warm=False)
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=120) as http:
        state = app.state.api
        holder_has_it, let_go = threading.Event(), threading.Event()

        def job_writing():  # as a job holds it for as long as it runs
            with state.memory.write_lock:
                holder_has_it.set()
                let_go.wait(120)

        holder = threading.Thread(target=job_writing)
        holder.start()
        try:
            assert holder_has_it.wait(60)
            queued = http.post("/v1/documents", headers=ACME,
                               files={"file": ("ferry.md", b"# Ferry\n\nIt leaves at noon.\n")})
            assert queued.status_code == 202, queued.text
            assert http.get(queued.json()["url"], headers=ACME).json()["status"] in ("queued", "running")
        finally:
            let_go.set()
            holder.join()
        assert finished_job(http, queued.json()["url"], ACME)["result"]["source_ids"] == ["ferry.md"]

        # Inline: from the decision on, the write lock is the upload's; another writer asking for it meanwhile
        # (a job starting) does not get it before the upload is stored.
        others_got_it: list[bool] = []
        real_upload = ingestion_module.ingest_upload

        def upload_watched(state, *args, **kwargs):
            other = threading.Thread(target=lambda: others_got_it.append(_try_take(state.memory.write_lock)))
            other.start()
            other.join()
            return real_upload(state, *args, **kwargs)

        monkeypatch.setattr(ingestion_module, "ingest_upload", upload_watched)
        stored = http.post("/v1/documents", headers=ACME, files={"file": ("tram.md", b"# Tram\n\nIt runs at two.\n")})
        assert stored.status_code == 200, stored.text
        assert stored.json()["source_ids"] == ["tram.md"] and others_got_it == [False]


def _try_take(lock) -> bool:
    if lock.acquire(blocking=False):
        lock.release()
        return True
    return False
