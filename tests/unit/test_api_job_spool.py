"""In-process ingestion jobs kept on disk (agent_memory/stores/job_spool.py): a stop while a job is queued or
running loses nothing; the next start runs it again and its old ID answers for it."""

from __future__ import annotations

import threading
import time

import pytest

from agent_memory.core.errors import JobGivenUp, NotFoundError
from agent_memory.stores.job_spool import MAX_ATTEMPTS, SpooledJobs
from agent_memory.stores.jobs import JobRegistry, JobSpec


def _wait(jobs: SpooledJobs, job_id: str, tenant: str = "acme"):
    deadline = time.monotonic() + 30
    while (job := jobs.get(job_id, tenant)).status not in ("done", "failed"):
        assert time.monotonic() < deadline, job
        time.sleep(0.01)
    return job


def _emptied(folder) -> bool:
    """Whether the spool empties: a job's files go in its last step, just after its status is set."""
    deadline = time.monotonic() + 30
    while any(folder.iterdir()):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _released(cleaned: list) -> bool:
    """Whether a job's staged upload is released: like its spool entry, in its last step, after its status is set."""
    deadline = time.monotonic() + 30
    while not cleaned:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _reading(seen: list):
    def run(spec, job):
        data = spec.path.read_bytes() if spec.path else spec.body
        seen.append((spec.path.name if spec.path else None, data))
        return {"source_ids": [spec.source_id]}
    return run


def _upload(tmp_path, name="notes.md", data=b"# Pump\nreplaced on 2 March"):
    folder = tmp_path / "request"
    folder.mkdir()
    (folder / name).write_bytes(data)
    cleaned = []
    spec = JobSpec("acme", "upload", name, len(data), {"filename": name}, path=folder / name,
                   cleanup=lambda: cleaned.append(folder))
    return spec, folder, cleaned


def test_a_finished_job_leaves_nothing_on_disk_and_the_request_folder_is_released(tmp_path):
    seen: list = []
    jobs = SpooledJobs(JobRegistry(_reading(seen)), tmp_path / "pending")
    spec, folder, cleaned = _upload(tmp_path)
    job = jobs.submit(spec)
    assert cleaned == [folder]  # the upload was moved into the spool: no temporary file left behind
    assert _wait(jobs, job.id).status == "done"
    assert seen == [("notes.md", b"# Pump\nreplaced on 2 March")]
    assert _emptied(tmp_path / "pending")
    jobs.close()


def test_a_job_a_stop_interrupted_runs_again_at_the_next_start_under_its_old_id(tmp_path):
    started, release = threading.Event(), threading.Event()

    def stuck(spec, job):
        started.set()
        release.wait(30)
        raise RuntimeError("store closed")  # what a job meets when the stop closes the stores under it

    # The stop gives up on the stuck job at once (its default waits 8 s for it): the job still ends only after.
    first = SpooledJobs(JobRegistry(stuck, stop_wait_s=0.1), tmp_path / "pending")
    running = first.submit(_upload(tmp_path)[0])
    queued = first.submit(JobSpec("acme", "text", "memo", 4, {"title": "t"}, body=b"memo"))
    assert started.wait(30)
    first.close()
    release.set()
    assert _wait(first, running.id).status == "failed"

    seen: list = []
    second = SpooledJobs(JobRegistry(_reading(seen)), tmp_path / "pending")
    second.resume()
    for old in (running, queued):
        resumed = _wait(second, old.id)
        assert resumed.status == "done"
        assert resumed.created_at == pytest.approx(old.created_at, abs=1.0)  # when the client sent it, not the restart
    assert sorted(seen, key=str) == sorted([("notes.md", b"# Pump\nreplaced on 2 March"), (None, b"memo")], key=str)
    assert _emptied(tmp_path / "pending")
    with pytest.raises(NotFoundError):
        second.get(running.id, "globex")  # another tenant still cannot see it
    second.close()


def test_a_job_interrupted_again_and_again_is_reported_not_run(tmp_path):
    stuck = threading.Event()

    def stopped_mid_job() -> SpooledJobs:
        # Each stop gives up on the stuck job at once (the default waits 8 s for it): the job is still unfinished.
        return SpooledJobs(JobRegistry(lambda spec, job: stuck.wait(30) and {}, stop_wait_s=0), tmp_path / "pending")

    jobs = stopped_mid_job()
    job = jobs.submit(JobSpec("acme", "text", "memo", 4, {}, body=b"memo"))
    time.sleep(1.1)  # each restart rewrites the job's description (its folder's time moves on)
    for _ in range(MAX_ATTEMPTS - 1):  # every start is stopped again before the job ends (it kills the process)
        jobs.close()
        jobs = stopped_mid_job()
        jobs.resume()
    jobs.close()
    given: list[JobSpec] = []

    def given_up(spec, job):  # as api/ingestion.run_job: what the runs stored is taken out, and the job fails
        given.append(spec)
        if not spec.given_up:
            pytest.fail("run again")
        raise JobGivenUp(f"{spec.given_up}; not run again: post {spec.source_id!r} again")

    last = SpooledJobs(JobRegistry(given_up), tmp_path / "pending")
    last.resume()
    stuck.set()
    answer = _wait(last, job.id)
    assert answer.status == "failed" and answer.error["code"] == "interrupted"
    assert answer.error["message"].startswith(f"the server stopped {MAX_ATTEMPTS} times while this job ran")
    assert answer.created_at == pytest.approx(job.created_at, abs=1.0)
    assert "'memo'" in answer.error["message"]
    assert [(spec.kind, spec.source_id) for spec in given] == [("text", "memo")]
    assert _emptied(tmp_path / "pending")
    last.close()


def test_an_unreadable_entry_is_dropped_not_fatal(tmp_path):
    (tmp_path / "pending" / "broken").mkdir(parents=True)
    (tmp_path / "pending" / "broken" / "job.json").write_text("{not json")
    jobs = SpooledJobs(JobRegistry(lambda spec, job: {}), tmp_path / "pending")
    jobs.resume()
    assert list((tmp_path / "pending").iterdir()) == []
    jobs.close()


def test_a_job_submitted_before_the_resume_is_not_taken_for_an_interrupted_one(tmp_path):
    """The server resumes after its warm-up: an upload accepted during the warm-up was spooled, then queued a
    second time as "interrupted"; the first run removed its files, the second failed, and the client's job
    ID answered "failed" for an upload that was stored."""
    seen: list = []
    gate = threading.Event()

    def run(spec, job):
        gate.wait(30)
        return _reading(seen)(spec, job)

    jobs = SpooledJobs(JobRegistry(run), tmp_path / "pending")
    job = jobs.submit(_upload(tmp_path)[0])
    jobs.resume()  # the warm-up ends while the job waits
    gate.set()
    assert _wait(jobs, job.id).status == "done"
    assert seen == [("notes.md", b"# Pump\nreplaced on 2 March")]  # run once
    assert _emptied(tmp_path / "pending")
    jobs.close()


def test_a_job_left_by_the_last_stop_is_named_as_writing_its_source_before_and_after_its_resume(tmp_path):
    """A forget asks which jobs will store a source (``writing``): a job the last stop left, not queued again yet
    (the server resumes after its warm-up), and once resumed, each under the ID its client was given."""
    started, release = threading.Event(), threading.Event()

    def stuck(spec, job):
        started.set()
        release.wait(30)
        raise RuntimeError("store closed")

    first = SpooledJobs(JobRegistry(stuck, stop_wait_s=0.1), tmp_path / "pending")
    spec, _, _ = _upload(tmp_path)
    spec.params["origin"] = "/home/u/notes.md"
    interrupted = first.submit(spec)
    assert started.wait(30)
    assert [(w.job_id, w.status) for w in first.writing("acme", {"notes.md"})] == [(interrupted.id, "running")]
    first.close()
    release.set()
    _wait(first, interrupted.id)

    gate = threading.Event()
    second = SpooledJobs(JobRegistry(lambda spec, job: gate.wait(30) and {"source_ids": [spec.source_id]}),
                         tmp_path / "pending")
    waiting = second.writing("acme", {"/home/u/notes.md"})  # by the file's path on the client too
    assert [(w.job_id, w.status, w.source_id) for w in waiting] == [(interrupted.id, "queued", "notes.md")]
    assert second.writing("globex", {"notes.md"}) == [] and second.writing("acme", {"other.md"}) == []
    second.resume()
    assert [w.job_id for w in second.writing("acme", set(), prefix="notes")] == [interrupted.id]
    gate.set()
    assert _wait(second, interrupted.id).status == "done"
    assert second.writing("acme", {"notes.md"}) == []
    second.close()


def test_a_job_whose_description_cannot_be_written_runs_from_the_staged_file(tmp_path, monkeypatch):
    """A full disk refuses the spool's description: the job runs once, as before, from where the request staged
    its file, which is released when it ends. Before, the file had been moved into the spool entry first, and the
    entry's removal took it: the job failed on a file that was no longer there."""
    from agent_memory.stores import job_spool

    def full(entry, meta):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(job_spool, "_write_meta", full)
    seen: list = []
    jobs = SpooledJobs(JobRegistry(_reading(seen)), tmp_path / "pending")
    spec, folder, cleaned = _upload(tmp_path)
    job = jobs.submit(spec)
    assert _wait(jobs, job.id).status == "done"
    assert seen == [("notes.md", b"# Pump\nreplaced on 2 March")]
    assert _released(cleaned) and cleaned == [folder]  # released when the job ended
    assert list((tmp_path / "pending").iterdir()) == []
    jobs.close()
