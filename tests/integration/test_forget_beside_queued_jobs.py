"""A forget in Python (``Memory.forget``, ``forget_prefix``, ``forget_each``, ``forget_tenant``) or through the local
CLI, on a data dir whose state is in PostgreSQL where ``agent-memory worker`` processes run the jobs an API queued,
is refused (SourceBusyError, naming the job and the source; the CLI one error line, exit 2) while a job of the
tenant, queued or running, will store a source it names: nothing is removed, and the job then runs and stores the
source. Before, the forget went on and the job stored the source again afterwards: the delete undone without a
word, as the HTTP API's deletes were before they asked their queue (test_delete_beside_queued_upload.py). Another
tenant's forgets are not its business; without PostgreSQL there is no such queue and nothing changes."""

from __future__ import annotations

import uuid

import pytest
from postgres_support import needs_postgres

from agent_memory.api.worker import Worker
from agent_memory.core.config import load_settings
from agent_memory.core.errors import SourceBusyError
from agent_memory.core.records import SearchFilter
from agent_memory.memory import Memory
from agent_memory.stores.jobs import DurableJobQueue, JobSpec
from agent_memory.stores.postgres_jobs import PostgresJobStore
from tests.helpers import embedded_cli_env, run_cli

OLD = "The Heron pump is serviced every spring by the depot crew."
NEW = "# Plan\n\nThe Heron pump is replaced in March by the team in Tromso.\n" * 8
CLIENT_PATH = "/home/u/notes/plan.md"


@pytest.fixture
def tenant() -> str:
    """A tenant of this test alone: the advisory locks of a server are one space for all its schemas."""
    return f"acme-{uuid.uuid4().hex[:8]}"


def _queue_upload(queue: DurableJobQueue, tenant: str, text: str = NEW):
    """An upload of ``notes/plan.md`` as the API queues it for the workers: the CLI's file, sent with its path."""
    body = text.encode()
    return queue.submit(JobSpec(tenant=tenant, kind="upload", source_id="notes/plan.md", size=len(body), body=body,
                                params={"filename": "plan.md", "origin": CLIENT_PATH, "metadata": {}}))


def _stored_text(memory: Memory, tenant: str, source_id: str = "notes/plan.md") -> str:
    items = memory.services.vectors.scroll(SearchFilter(tenant=tenant, source_ids=[source_id]))
    return " ".join(item.text for item in items)


def _add_old_copy(memory: Memory, tmp_path, tenant: str | None = None) -> None:
    """``notes/plan.md`` as the CLI's ingestion stored it before: a file, under its path on the client."""
    path = tmp_path / f"plan-{tenant or 'own'}.md"
    path.write_text(OLD)
    memory.add_file(path, source_id="notes/plan.md", client_path=CLIENT_PATH, tenant=tenant)


@needs_postgres
def test_a_python_forget_of_a_source_a_queued_job_stores_is_refused_and_the_job_then_stores_it(
        tmp_path, pg_schema, tenant):
    settings = load_settings(data_dir=tmp_path / "data", triple_extractor="rules", qdrant_url=None, neo4j_uri=None,
                             postgres_url=pg_schema.url, tenant=tenant)
    with Memory(settings=settings) as memory:
        _add_old_copy(memory, tmp_path)
        _add_old_copy(memory, tmp_path, "globex")
        queue = DurableJobQueue(memory.services.job_store)
        job = _queue_upload(queue, tenant)

        with pytest.raises(SourceBusyError) as refused:
            memory.forget("notes/plan.md")
        message = str(refused.value)
        assert f"job {job.id}, queued, for 'notes/plan.md'" in message and "nothing was removed" in message
        assert refused.value.jobs == [job.id]
        # Spelled as a path, by the file's path on the client, under a prefix, among many IDs, the whole tenant.
        for forget in (lambda: memory.forget("./notes/plan.md"), lambda: memory.forget(CLIENT_PATH),
                       lambda: memory.forget("/" + CLIENT_PATH), lambda: memory.forget_prefix("notes/pl"),
                       lambda: memory.forget_each(["notes/other.md", "notes/plan.md"]),
                       lambda: memory.forget_tenant(tenant)):
            with pytest.raises(SourceBusyError, match=job.id):
                forget()
        assert memory.matching_sources("notes/plan.md") == ["notes/plan.md"]
        assert OLD in _stored_text(memory, tenant)  # nothing was removed
        # What no job stores is forgotten as before; another tenant's job is not this tenant's business.
        memory.add("An unrelated note.", source_id="notes/other.md")
        assert memory.forget("notes/other.md")["sources"] == 1
        assert memory.forget("notes/plan.md", tenant="globex")["sources"] == 1

        # As the refusal said: the job runs and stores the source; a forget after it removes it.
        assert Worker(memory.services, lease_s=30).run(once=True) == 1
        assert queue.get(job.id, tenant).status == "done"
        assert "replaced in March" in _stored_text(memory, tenant)
        assert memory.forget("notes/plan.md")["sources"] >= 1
        assert memory.matching_sources("notes/plan.md") == []


@needs_postgres
def test_the_local_cli_forget_beside_a_queued_job_is_one_error_line_and_removes_nothing(
        tmp_path, monkeypatch, capsys, pg_schema, tenant):
    data = tmp_path / "data"
    embedded_cli_env(monkeypatch, data)
    monkeypatch.setenv("AGENT_MEMORY_POSTGRES_URL", pg_schema.url)
    monkeypatch.setenv("AGENT_MEMORY_TENANT", tenant)
    with Memory() as memory:
        _add_old_copy(memory, tmp_path)
    job = _queue_upload(DurableJobQueue(PostgresJobStore(pg_schema.open())), tenant)

    for argv in (["forget", "notes/plan.md"], ["forget", CLIENT_PATH], ["forget", "--prefix", "notes/"],
                 ["forget", "--all", "--tenant", tenant, "--yes"]):
        code, out, err = run_cli(capsys, argv)
        assert code == 2 and out == "", (argv, out, err)
        assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
        assert f"job {job.id}, queued, for 'notes/plan.md'" in err and "nothing was removed" in err, err
    with Memory() as memory:
        assert OLD in _stored_text(memory, tenant)


def test_without_postgresql_a_python_or_local_cli_forget_asks_no_queue_and_forgets_as_before(
        tmp_path, monkeypatch, capsys):
    data = tmp_path / "data"
    embedded_cli_env(monkeypatch, data)
    with Memory() as memory:
        assert memory.services.queued_writes is None
        _add_old_copy(memory, tmp_path)
        memory.add("An unrelated note.", source_id="notes/other.md")
        memory.add("A third note.", source_id="drafts/third.md")
        memory.add("A fourth note.", source_id="drafts/fourth.md", tenant="globex")
        assert memory.forget("./notes/plan.md")["sources"] == 1
        assert memory.forget_each(["notes/other.md"])["sources"] == 1
        assert memory.forget_tenant("globex")["sources"] == 1
    code, out, err = run_cli(capsys, ["forget", "--prefix", "drafts/"])
    assert code == 0 and '"sources": 1' in out, (out, err)


@needs_postgres
def test_a_forget_job_a_worker_runs_is_not_refused_by_an_upload_queued_after_it(tmp_path, pg_schema, tenant):
    """The API asked its queue when it accepted the forget: an upload asked for later stores the source after it,
    as asked, and the forget job is done, not failed."""
    settings = load_settings(data_dir=tmp_path / "data", triple_extractor="rules", qdrant_url=None, neo4j_uri=None,
                             postgres_url=pg_schema.url, tenant=tenant)
    with Memory(settings=settings) as memory:
        _add_old_copy(memory, tmp_path)
        queue = DurableJobQueue(memory.services.job_store)
        forget = queue.submit(JobSpec(tenant=tenant, kind="forget", source_id="notes/plan.md", size=0))
        upload = _queue_upload(queue, tenant)
        worker = Worker(memory.services, lease_s=30)
        assert worker.run_one()
        done = queue.get(forget.id, tenant)
        assert done.status == "done" and done.result["sources"] == 1, done
        assert queue.get(upload.id, tenant).status == "queued"
        assert worker.run_one()
        stored = _stored_text(memory, tenant)
        assert "replaced in March" in stored and OLD not in stored
