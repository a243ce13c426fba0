"""A stop while an ingestion job runs: the job ends at its next unit before the stores close under it;
queued jobs never start (the spool runs both again at the next start)."""

from __future__ import annotations

import threading

from agent_memory.stores.jobs import JobRegistry, JobSpec


def _spec(source_id: str) -> JobSpec:
    return JobSpec("default", "text", source_id, 1, body=b"x")


def test_a_stop_ends_the_running_job_between_units_and_drops_the_queued_ones():
    started, units_written, wrote_after_close = threading.Event(), [], []
    closed = threading.Event()

    def run(spec, job):
        started.set()
        for unit in range(1000):
            job.progress("ingesting", unit, 1000)  # where a stop ends the job
            units_written.append(unit)
            if closed.is_set():
                wrote_after_close.append(unit)
            threading.Event().wait(0.01)
        return {"units": 1000}

    jobs = JobRegistry(run)
    first, second = jobs.submit(_spec("a")), jobs.submit(_spec("b"))
    assert started.wait(10)
    jobs.close()
    closed.set()
    assert first.finished_at is not None  # close returned after the job ended, not before
    assert first.status == "failed" and first.error["code"] == "interrupted", first.error
    assert "stopping" in first.error["message"] and 0 < len(units_written) < 1000
    assert wrote_after_close == []
    assert second.status == "queued" and second.started_at is None


def test_a_job_that_reaches_no_unit_boundary_does_not_hold_the_stop_forever():
    release, started = threading.Event(), threading.Event()

    def run(spec, job):
        started.set()
        release.wait(30)  # one long unit: no progress call to end it
        return {}

    jobs = JobRegistry(run, stop_wait_s=0.2)
    job = jobs.submit(_spec("a"))
    assert started.wait(10)
    jobs.close()
    assert job.status == "running"  # the stop went on without it
    release.set()


def test_chunk_and_graph_reports_inside_a_unit_are_recorded_beside_the_units_and_never_stop_the_job():
    from agent_memory.core.progress import CHUNKS_STAGE, GRAPH_STAGE
    from agent_memory.stores.jobs import Job

    stop = threading.Event()
    job = Job(id="j", tenant="default", bytes=1, stop=stop)
    job.progress("ingesting", 0, 1)
    stop.set()  # the server stops while the unit's chunks are stored: the unit is finished, not cut
    job.progress(CHUNKS_STAGE, 256, 1024)
    job.progress(GRAPH_STAGE, 64, 1024)
    status = job.to_dict()
    assert (status["stage"], status["units_done"], status["units_total"]) == ("ingesting", 0, 1)
    assert (status["chunks_done"], status["chunks_total"]) == (256, 1024)
    assert (status["graph_done"], status["graph_total"]) == (64, 1024)


def test_the_remote_progress_line_shows_a_units_chunks_after_its_stage(capsys):
    from agent_memory.core.progress import CHUNKS_STAGE
    from agent_memory.remote.upload_job import progress_line

    show = progress_line("[1/1] big.pdf")
    show("ingesting", 0, 1)
    show(CHUNKS_STAGE, 512, 2048)
    assert capsys.readouterr().err.split("\r")[-1] == "[1/1] big.pdf: ingesting 0/1, 512/2048 chunks"


def test_the_remote_progress_line_shows_the_graph_after_the_chunks(capsys):
    from agent_memory.core.progress import CHUNKS_STAGE, GRAPH_STAGE
    from agent_memory.remote.upload_job import progress_line

    show = progress_line("[1/1] big.pdf")
    show("ingesting", 0, 1)
    show(CHUNKS_STAGE, 2048, 2048)
    show(GRAPH_STAGE, 640, 2048)
    assert capsys.readouterr().err.split("\r")[-1] == \
        "[1/1] big.pdf: ingesting 0/1, 2048/2048 chunks, 640/2048 texts read for the graph"
