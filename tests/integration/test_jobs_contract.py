"""Ingestion jobs: one contract for the in-process registry (embedded default) and the durable
PostgreSQL queue run by workers; then the queue's own guarantees (SKIP LOCKED, leases, the
per-source lock) on the server scripts/test.sh starts, each test in a fresh schema."""

from __future__ import annotations

import contextlib
import json
import threading
import time
import uuid

import pytest
from postgres_support import FreshSchema, postgres_param

from agent_memory.core.errors import NotFoundError
from agent_memory.stores.job_spool import SpooledJobs
from agent_memory.stores.jobs import DurableJobQueue, JobQueue, JobSpec
from agent_memory.stores.pending_writes import IMPORT_KIND, IMPORT_SOURCES


class Backend:
    """A job queue over real services, and how to let its jobs run to their end."""

    def __init__(self, kind: str, tmp_path) -> None:
        from agent_memory.core.config import load_settings
        from agent_memory.services import build_services

        self.schema = FreshSchema() if kind == "postgres" else None
        url = None
        if self.schema:
            self.schema.open()
            url = self.schema.url
        self.services = build_services(load_settings(data_dir=tmp_path / "data", triple_extractor="rules",
                                                     qdrant_url=None, neo4j_uri=None, postgres_url=url))
        if self.schema:
            from agent_memory.api.worker import Worker

            self.worker = Worker(self.services, lease_s=30)
            self.queue: JobQueue = DurableJobQueue(self.services.job_store)
            self.catalog_owner = self.worker
        else:
            from agent_memory.api.errors import error_of
            from agent_memory.api.ingestion import run_job
            from agent_memory.memory import Memory

            self.memory = Memory(services=self.services, promote=False)
            self.locks = self.services.source_locks
            # As the API builds it (api/ingestion.py): the services' queue, run_job, the API's error codes.
            self.queue = self.services.job_queue(lambda spec, job: run_job(self, spec, job.progress), error_of)
            assert isinstance(self.queue, SpooledJobs)  # in process, each job kept on disk until it ends

    def drain(self, job_id: str, tenant: str, timeout: float = 120):
        if self.schema:
            self.worker.run(once=True)
        deadline = time.monotonic() + timeout
        while (job := self.queue.get(job_id, tenant)).status in ("queued", "running"):
            assert time.monotonic() < deadline, job
            time.sleep(0.05)
        return job

    def close(self) -> None:
        self.queue.close()
        self.services.close()
        if self.schema:
            self.schema.cleanup()


@pytest.fixture(params=["process", postgres_param()])
def backend(request, tmp_path):
    b = Backend(request.param, tmp_path)
    yield b
    b.close()


TEXT = "The greenhouse sensor X-300 replaced the X-200 in March. " * 40


def text_spec(tenant="acme", source_id="notes/greenhouse", text=TEXT) -> JobSpec:
    return JobSpec(tenant=tenant, kind="text", source_id=source_id, size=len(text.encode()),
                   params={"title": "Greenhouse", "metadata": {"team": "ops"}}, body=text.encode())


def test_a_text_job_runs_to_done_and_is_visible_only_to_its_tenant(backend):
    assert isinstance(backend.queue, JobQueue)
    job = backend.queue.submit(text_spec())
    assert job.status in ("queued", "running") and job.bytes == len(TEXT.encode()) and job.created_at > 0
    done = backend.drain(job.id, "acme")
    assert done.status == "done", done.error
    assert done.result["source_ids"] == ["notes/greenhouse"] and done.units_done == done.units_total == 1
    # Its texts read for the graph, all of them once its facts were written (PostgreSQL: the finished row's).
    assert done.graph_done == done.graph_total == done.result["report"]["chunks"] > 0
    assert done.started_at and done.finished_at >= done.started_at
    assert backend.services.catalog.get("acme", "notes/greenhouse").title == "Greenhouse"
    with pytest.raises(NotFoundError, match=job.id):
        backend.queue.get(job.id, "globex")
    with pytest.raises(NotFoundError):
        backend.queue.get("feedbeef", "acme")


def test_an_upload_job_ingests_the_file_and_a_bad_one_fails_with_its_reason(backend, tmp_path):
    path = tmp_path / "hangar.md"
    path.write_text("# Hangar\n\nThe hangar door opens at 6:00.\n", encoding="utf-8")
    cleaned = []
    spec = JobSpec(tenant="acme", kind="upload", source_id="uploads/hangar.md", size=path.stat().st_size,
                   params={"filename": "hangar.md", "metadata": {}}, path=path, cleanup=lambda: cleaned.append(1))
    done = backend.drain(backend.queue.submit(spec).id, "acme")
    assert done.status == "done", done.error and cleaned == [1]
    assert "uploads/hangar.md" in done.result["source_ids"][0]
    bad = JobSpec(tenant="acme", kind="upload", source_id="uploads/blob.bin", size=4,
                  params={"filename": "blob.bin", "metadata": {}}, body=b"\x00\x01\x02\x03")
    failed = backend.drain(backend.queue.submit(bad).id, "acme")
    assert failed.status == "failed" and failed.error["code"] == "unsupported_file"
    assert "blob.bin" in failed.error["message"]


# ---- the durable queue's guarantees ---------------------------------------------------------------



@pytest.fixture
def job_store():
    from agent_memory.stores.postgres_jobs import PostgresJobStore

    schema = FreshSchema()
    yield PostgresJobStore(schema.open(pool_size=10))
    schema.cleanup()


def enqueue(store, n: int, tenant: str = "acme", source: str = "s") -> list[str]:
    ids = []
    for i in range(n):
        job_id = uuid.uuid4().hex[:16]
        store.enqueue(job_id, tenant, "text", f"{source}{i}", {"title": ""}, b"x", 1)
        ids.append(job_id)
    return ids




@pytest.mark.parametrize("_", [postgres_param("pg")])
def test_concurrent_workers_take_every_job_exactly_once(_, job_store):
    ids = enqueue(job_store, 40)
    taken: dict[str, list[str]] = {}
    lock = threading.Lock()

    def worker(name: str) -> None:
        while (row := job_store.claim(name, lease_s=60)) is not None:
            with lock:
                taken.setdefault(row["id"], []).append(name)
            assert job_store.finish(row["id"], name, {"ok": True}, None, 1, 1)

    threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(taken) == sorted(ids)
    assert all(len(names) == 1 for names in taken.values())
    assert all(job_store.get(i, "acme")["status"] == "done" for i in ids)


@pytest.mark.parametrize("_", [postgres_param("pg")])
def test_a_job_whose_worker_stopped_beating_is_taken_again_and_the_old_outcome_is_refused(_, job_store):
    [job_id] = enqueue(job_store, 1)
    first = job_store.claim("dead", lease_s=60)
    assert first["id"] == job_id and first["attempts"] == 1 and first["body"] == b"x"
    assert job_store.claim("other", lease_s=60) is None  # alive: nobody else may take it
    assert job_store.heartbeat(job_id, "dead", "embedding", 3, 10)
    time.sleep(0.3)
    again = job_store.claim("other", lease_s=0.2)  # "dead" has not beaten for longer than the lease
    assert again["id"] == job_id and again["attempts"] == 2 and again["worker"] == "other"
    assert not job_store.heartbeat(job_id, "dead", "embedding", 4, 10)
    assert not job_store.finish(job_id, "dead", {"late": True}, None, 10, 10)
    assert job_store.finish(job_id, "other", {"ok": True}, None, 10, 10)
    row = job_store.get(job_id, "acme")
    assert row["status"] == "done" and row["result"] == {"ok": True} and row["worker"] == "other"


@pytest.mark.parametrize("_", [postgres_param("pg")])
def test_a_job_that_loses_its_worker_too_often_is_given_up_instead_of_killing_more(_, job_store):
    [job_id] = enqueue(job_store, 1)
    assert job_store.give_up("w", lease_s=0.1, max_attempts=2) is None  # queued: nothing to give up
    for attempt in range(2):
        assert job_store.claim(f"w{attempt}", lease_s=0.1, max_attempts=2)["id"] == job_id
        time.sleep(0.2)
    assert job_store.claim("w9", lease_s=0.1, max_attempts=2) is None  # not run a third time
    taken = job_store.give_up("w9", lease_s=0.1, max_attempts=2)  # taken to undo what its runs stored
    assert taken["id"] == job_id and taken["attempts"] == 2 and taken["stage"] == "given up" and taken["body"] == b"x"
    assert job_store.give_up("w8", lease_s=0.1, max_attempts=2) is None  # w9 holds it (its heartbeat is fresh)
    time.sleep(0.2)
    again = job_store.give_up("w8", lease_s=0.1, max_attempts=2)  # w9 lost too: w8 takes the undo up
    assert again["id"] == job_id and again["attempts"] == 2 and again["worker"] == "w8"
    assert not job_store.finish(job_id, "w9", None, {"code": "worker_lost", "message": "late"}, 0, 0)
    assert job_store.finish(job_id, "w8", None, {"code": "worker_lost", "message": "lost 2 times"}, 0, 0)
    row = job_store.get(job_id, "acme")
    assert row["status"] == "failed" and row["error"] == {"code": "worker_lost", "message": "lost 2 times"}


@pytest.mark.parametrize("_", [postgres_param("pg")])
def test_a_worker_gives_up_an_upload_and_takes_out_what_its_runs_stored(_, tmp_path):
    """Each run of the upload was killed after storing its first record: the records stayed, answering
    questions for a file that was never stored (no manifest)."""
    from agent_memory.core.errors import JobInterrupted

    records = "\n".join(f'{{"text": "Crate {n} of copper wire went to bay {n}."}}' for n in range(3)).encode()
    backend = Backend("postgres", tmp_path)
    try:
        upload = tmp_path / "crates.jsonl"
        upload.write_bytes(records)

        def killed_at_the_second_record(stage, done, total):
            if stage == "ingesting" and done == 1:
                raise JobInterrupted("killed")

        with pytest.raises(JobInterrupted):  # what the runs stored
            backend.worker.memory.add_file(upload, source_id="crates.jsonl", tenant="acme",
                                           progress=killed_at_the_second_record)
        assert backend.services.catalog.get("acme", "crates.jsonl#0") is not None
        job_id = backend.queue.submit(JobSpec("acme", "upload", "crates.jsonl", len(records),
                                              {"filename": "crates.jsonl", "metadata": {}}, body=records)).id
        store = backend.services.job_store
        for attempt in range(backend.worker.max_attempts):  # three workers lost with it
            assert store.claim(f"lost{attempt}", lease_s=0.1)["id"] == job_id
            time.sleep(0.2)
        backend.worker.lease_s = 0.1
        assert backend.worker.run_one()
        row = store.get(job_id, "acme")
        assert row["status"] == "failed" and row["error"]["code"] == "worker_lost", row
        assert row["error"]["message"] == ("the job lost its worker 3 times (killed or out of memory?); not run again: "
                                           "what its runs had stored was removed (1 item); upload 'crates.jsonl' again")
        assert backend.services.catalog.get("acme", "crates.jsonl#0") is None
        assert backend.services.catalog.owned_by("acme", "file:crates.jsonl") == []
        assert backend.services.vectors.ids_for_source("acme", "crates.jsonl#0") == []
    finally:
        backend.close()


@pytest.mark.parametrize("_", [postgres_param("pg")])
def test_one_source_is_written_by_one_holder_at_a_time_across_connections(_, job_store):
    events: list[str] = []
    first_in = threading.Event()
    release = threading.Event()

    def first() -> None:
        with job_store.source_locks("acme", ["doc"]):
            events.append("first in")
            first_in.set()
            release.wait(30)
            events.append("first out")

    def second() -> None:
        first_in.wait(30)
        with job_store.source_locks("acme", ["doc"]):
            events.append("second in")

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    first_in.wait(30)
    with job_store.source_locks("acme", ["other-doc"]):  # another source is not held up
        events.append("other in")
    with job_store.source_locks("globex", ["doc"]):  # nor the same name in another tenant
        events.append("globex in")
    release.set()
    for t in threads:
        t.join()
    assert events.index("second in") > events.index("first out")
    assert events.index("other in") < events.index("first out")
    assert events.index("globex in") < events.index("first out")


@pytest.mark.parametrize("_", [postgres_param("pg")])
def test_prune_forgets_only_finished_jobs_older_than_asked(_, job_store):
    first, second, still_queued = enqueue(job_store, 3)
    for expected in (first, second):  # the oldest open job is taken first
        row = job_store.claim("w", lease_s=60)
        assert row["id"] == expected and job_store.finish(expected, "w", {"ok": True}, None, 1, 1)
    time.sleep(0.3)
    assert job_store.prune(older_than_s=3600) == 0
    assert job_store.prune(older_than_s=0.1) == 2  # both finished ones; the open one stays
    assert job_store.get(still_queued, "acme")["status"] == "queued"
    assert job_store.get(first, "acme") is None and job_store.get(second, "acme") is None


@pytest.mark.parametrize("_", [postgres_param("pg")])
def test_a_job_that_meets_a_store_away_waits_in_the_queue_and_runs_once_it_is_back(_, tmp_path, monkeypatch):
    """Neo4j stopped under a running job: the job failed for good and its upload was lost (a probe). Now it
    goes back in the queue (its stage says why, the take is not an attempt) and the next take finishes it."""
    from agent_memory.api import worker as worker_module
    from agent_memory.core.errors import StoreUnavailableError

    backend = Backend("postgres", tmp_path)
    try:
        backend.worker.outage_pause_s = 0.01
        real = worker_module.run_job
        calls = []

        def graph_away_once(state, spec, progress):
            calls.append(spec.source_id)
            if len(calls) == 1:
                raise StoreUnavailableError("Neo4j at bolt://127.0.0.1:7687 is unavailable: Connection refused")
            return real(state, spec, progress)

        monkeypatch.setattr(worker_module, "run_job", graph_away_once)
        job_id = backend.queue.submit(text_spec()).id
        assert backend.worker.run_one()
        row = backend.services.job_store.get(job_id, "acme")
        assert row["status"] == "queued" and row["attempts"] == 0 and row["error"] is None
        assert row["stage"].startswith("waiting: Neo4j at bolt://127.0.0.1:7687 is unavailable")
        assert backend.drain(job_id, "acme").status == "done" and calls == ["notes/greenhouse"] * 2
        assert backend.services.catalog.get("acme", "notes/greenhouse").title == "Greenhouse"
    finally:
        backend.close()


@pytest.mark.parametrize("_", [postgres_param("pg")])
def test_postgres_beside_embedded_stores_runs_its_jobs_in_process_and_a_worker_is_refused(_, tmp_path):
    """No worker can write an embedded vector store or graph that the server reads: such jobs sat queued for
    ever, and a worker on a data dir of its own wrote where nobody reads."""
    from agent_memory.api.worker import work
    from agent_memory.core.errors import ConfigError

    backend = Backend("postgres", tmp_path)
    try:
        assert not backend.services.settings.shares_stores
        queue = backend.services.job_queue(lambda spec, job: {}, lambda exc, job_id: {"code": "x", "message": ""})
        try:
            assert isinstance(queue, SpooledJobs)
        finally:
            queue.close()
        settings = backend.services.settings.model_copy(update={"data_dir": tmp_path / "worker"})
        with pytest.raises(ConfigError, match="AGENT_MEMORY_QDRANT_URL and AGENT_MEMORY_NEO4J_URI"):
            work(settings, once=True)
    finally:
        backend.close()


def test_a_tenant_s_finished_jobs_are_forgotten_and_its_unfinished_ones_counted(backend):
    """What a tenant's removal asks of the queue: its jobs queued or running (a removal waits for none), and the
    records of its finished ones removed, another tenant's kept."""
    acme = backend.queue.submit(text_spec())
    globex = backend.queue.submit(text_spec(tenant="globex"))
    if backend.schema:  # no worker took it yet (in process it may be running or done already: see the API's test)
        assert backend.queue.unfinished("acme") == 1
    for job, tenant in ((acme, "acme"), (globex, "globex")):
        assert backend.drain(job.id, tenant).status == "done"
    assert backend.queue.unfinished("acme") == 0
    assert backend.queue.forget_tenant("acme") == 1 and backend.queue.forget_tenant("acme") == 0
    with pytest.raises(NotFoundError):
        backend.queue.get(acme.id, "acme")
    assert backend.queue.get(globex.id, "globex").status == "done"


def test_a_forget_learns_which_unfinished_jobs_of_its_tenant_store_a_source(backend):
    """What a forget asks of the queue first (``writing``): the tenant's queued or running jobs that will store the
    source, by its ID, its file's path on the client or a prefix; none once they ended, none of another tenant."""
    spec = text_spec(source_id="notes/plan.md")
    spec.params["origin"] = "/home/u/notes/plan.md"
    # In process the job runs at once: held at the write lock, it stays running (PostgreSQL's waits for a worker).
    hold = contextlib.nullcontext() if backend.schema else backend.memory.write_lock
    with hold:
        job = backend.queue.submit(spec)
        other = backend.queue.submit(text_spec(tenant="globex", source_id="notes/plan.md"))
        for names, prefix in (({"notes/plan.md"}, None), ({"/home/u/notes/plan.md"}, None), (set(), "notes/pl")):
            found = backend.queue.writing("acme", names, prefix)
            assert [(w.job_id, w.source_id) for w in found] == [(job.id, "notes/plan.md")], (names, prefix)
            assert found[0].status in ("queued", "running")
        assert backend.queue.writing("acme", {"notes/plan"}) == []
        assert backend.queue.writing("acme", set(), "notes/x") == []
    for done, tenant in ((job, "acme"), (other, "globex")):
        assert backend.drain(done.id, tenant).status == "done"
    assert backend.queue.writing("acme", {"notes/plan.md"}) == []


def test_a_forget_learns_which_sources_a_queued_import_stores(backend):
    """An import's job records the names its export holds when it is queued (``IMPORT_SOURCES``): ``writing``
    answers for each of them, by name or prefix, naming the source it matched; an import queued before it recorded
    them (none) stores nothing a forget is told of."""
    source = {"type": "source", "source_id": "notes/a.md", "kind": "document", "metadata": {}, "text": TEXT}
    body = "".join(json.dumps(line) + "\n" for line in (
        {"type": "header", "format": "agent-memory-export", "version": 1, "tenant": "acme"}, source,
        {"type": "end"})).encode()  # a source to store: in process, the job waits for the write lock held here
    spec = JobSpec(tenant="acme", kind=IMPORT_KIND, source_id="", size=len(body), body=body,
                   params={IMPORT_SOURCES: ["notes/a.md", "ledger.md", "/home/u/ledger.md"]})
    older = JobSpec(tenant="acme", kind=IMPORT_KIND, source_id="", size=len(body), body=body)
    hold = contextlib.nullcontext() if backend.schema else backend.memory.write_lock
    with hold:
        job, before = backend.queue.submit(spec), backend.queue.submit(older)
        for names, prefix, source in (({"ledger.md"}, None, "ledger.md"), ({"/home/u/ledger.md"}, None,
                                                                             "/home/u/ledger.md"),
                                      (set(), "notes/", "notes/a.md"), ({"x", "notes/a.md"}, None, "notes/a.md")):
            found = backend.queue.writing("acme", names, prefix)
            assert [(w.job_id, w.source_id) for w in found] == [(job.id, source)], (names, prefix)
        assert backend.queue.writing("acme", {"notes/a"}) == [] and backend.queue.writing("globex", {"ledger.md"}) == []
    for done in (job, before):
        assert backend.drain(done.id, "acme").status == "done"
    assert backend.queue.writing("acme", {"ledger.md"}) == []
