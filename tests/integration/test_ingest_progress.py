"""A single large document reports its progress while its chunks are embedded and stored: through the
pipeline's ``on_chunks``, a file's progress callback (``"chunks"`` reports between its units' ones) and the
job record the HTTP API serves; then while its facts are read and written into the graph (``"graph"``),
through HTTP and the CLI's bar. Real stores and the real embedding model; the slice is made small so that a
document of a few dozen chunks stands for one of thousands."""

from __future__ import annotations

import re
import threading
import time

import pytest

from agent_memory.core.config import load_settings
from agent_memory.core.progress import CHUNKS_STAGE
from agent_memory.core.records import Document
from agent_memory.ingest import graph_writes, sources
from agent_memory.ingest import pipeline as pipeline_module
from agent_memory.ingest.file_ingestion import ingest_file
from agent_memory.ingest.pipeline import IngestionPipeline
from agent_memory.ingest.report import IngestReport
from agent_memory.services import build_services
from agent_memory.stores.jobs import Job

SLICE = 8


@pytest.fixture
def services(tmp_path, monkeypatch):
    monkeypatch.setattr(pipeline_module, "STORE_SLICE_ITEMS", SLICE)
    settings = load_settings(data_dir=tmp_path / "data", triple_extractor="none", qdrant_url=None, neo4j_uri=None,
                             postgres_url=None, chunk_tokens=32, chunk_overlap_tokens=0)
    with build_services(settings) as built:
        yield built


def _text(paragraphs: int) -> str:
    return "\n\n".join(f"Ledger page {i}: crate {i} of copper wire went to the depot in bay {i % 9}, "
                       f"signed by clerk number {i * 7} on the night shift." for i in range(paragraphs))


def _rising(calls: list[tuple[int, int]]) -> None:
    dones = [done for done, _ in calls]
    assert dones == sorted(dones) and len(set(dones)) == len(dones), calls
    assert all(0 < done <= total for done, total in calls), calls


def test_a_document_of_many_chunks_reports_each_slice_and_ends_at_its_total(services):
    calls: list[tuple[int, int]] = []
    report = IngestReport()
    IngestionPipeline(services).ingest_documents([Document(source_id="ledger", text=_text(60))], report,
                                                 on_chunks=lambda done, total: calls.append((done, total)))
    assert report.chunks > 3 * SLICE
    assert len(calls) >= 3, calls  # several reports before the end, not one at its end
    _rising(calls)
    assert {total for _, total in calls} == {report.chunks}
    assert calls[-1] == (report.chunks, report.chunks)
    # Unchanged: nothing is stored, nothing reported.
    again: list[tuple[int, int]] = []
    IngestionPipeline(services).ingest_documents([Document(source_id="ledger", text=_text(60))],
                                                 on_chunks=lambda done, total: again.append((done, total)))
    assert again == []


def test_a_streamed_text_estimates_its_total_and_ends_exact(services, monkeypatch):
    monkeypatch.setattr(sources, "STREAM_THRESHOLD_BYTES", 2_000)
    monkeypatch.setattr(sources, "SEGMENT_CHARS", 1_500)
    calls: list[tuple[int, int]] = []
    report = IngestReport()
    text = _text(80)
    assert len(text) > 4 * 1_500  # several segments
    IngestionPipeline(services, summaries=False).ingest_documents(
        [Document(source_id="ledger-stream", text=text)], report,
        on_chunks=lambda done, total: calls.append((done, total)))
    assert report.chunks > 3 * SLICE and len(calls) >= 3, calls
    dones = [done for done, _ in calls]
    assert dones == sorted(dones) and all(done <= total for done, total in calls), calls
    # The first segment's estimate already sees most of the text to come; the last report is exact.
    assert calls[0][1] > report.chunks // 2, calls
    assert calls[-1] == (report.chunks, report.chunks)


def test_a_file_of_one_large_unit_shows_its_chunks_in_the_job_record(services, tmp_path):
    """What the HTTP API's job status serves (``Job.to_dict``) while one large file, one unit, is ingested."""
    path = tmp_path / "ledger.md"
    path.write_text("# Depot ledger\n\n" + _text(60), encoding="utf-8")
    job = Job(id="j1", tenant="default", bytes=path.stat().st_size)
    seen: list[tuple[str, int, int, dict]] = []

    def progress(stage: str, done: int, total: int) -> None:
        job.progress(stage, done, total)
        seen.append((stage, done, total, job.to_dict()))

    report = IngestReport()
    ingest_file(IngestionPipeline(services), path, tenant="default", source_id="ledger.md", report=report,
                progress=progress)
    assert report.files_ingested == 1 and report.chunks > 3 * SLICE
    stages = [stage for stage, *_ in seen]
    assert stages[0] == "ingesting" and stages[-1] == "ingesting" and stages.count(CHUNKS_STAGE) >= 3
    partial = [status for stage, *_, status in seen if stage == CHUNKS_STAGE
               and 0 < status["chunks_done"] < status["chunks_total"]]
    assert partial, seen
    # While the chunks move, the job's stage and units keep their meaning: the file's one unit, not done yet.
    assert all(s["stage"] == "ingesting" and (s["units_done"], s["units_total"]) == (0, 1) for s in partial)
    _rising([(d, t) for stage, d, t, _ in seen if stage == CHUNKS_STAGE])
    end = job.to_dict()
    assert (end["units_done"], end["units_total"]) == (1, 1)
    assert end["chunks_done"] == end["chunks_total"] == report.chunks


# ---- the graph's stage: facts read and written after the chunks ------------------------------------------------

def _extraction_held_until(monkeypatch, release: threading.Event) -> None:
    """Triple extraction waits for ``release`` before it reads anything: the chunks are all stored while the graph's
    facts are still to be read, as on a machine where extraction is the slower of the two."""
    extract = graph_writes._extract_texts

    def held(*args, **kwargs):
        assert release.wait(120), "the test never released the extraction"
        return extract(*args, **kwargs)

    monkeypatch.setattr(graph_writes, "_extract_texts", held)


def test_a_job_shows_its_graph_stage_after_its_chunks_through_http(tmp_path, monkeypatch):
    """GET /v1/jobs/{id} of a large upload: once every chunk is stored, the graph's facts still being read are
    counted in ``graph_done``/``graph_total``; before, the job sat at all its chunks, saying nothing."""
    from fastapi.testclient import TestClient

    from agent_memory.api import create_app

    monkeypatch.setenv("AGENT_MEMORY_NO_PROGRESS", "1")
    release = threading.Event()
    _extraction_held_until(monkeypatch, release)
    settings = load_settings(data_dir=tmp_path / "data", triple_extractor="rules", qdrant_url=None, neo4j_uri=None,
                             postgres_url=None, chunk_tokens=32, chunk_overlap_tokens=0)
    with TestClient(create_app(settings, job_threshold_bytes=1024)) as client:
        accepted = client.post("/v1/documents", files={"file": ("ledger.md", ("# Depot ledger\n\n" + _text(40)).encode())},
                               data={"source_id": "ledger.md"})
        assert accepted.status_code == 202, accepted.text
        try:
            deadline = time.monotonic() + 300
            while not ((job := client.get(accepted.json()["url"]).json())["chunks_total"]
                       and job["chunks_done"] == job["chunks_total"]):
                assert job["status"] in ("queued", "running") and time.monotonic() < deadline, job
                time.sleep(0.05)
            # Every chunk is stored; the graph's stage says its facts are not read yet, of how many texts.
            assert job["status"] == "running" and job["stage"] == "ingesting", job
            assert job["graph_total"] == job["chunks_total"] and job["graph_done"] < job["graph_total"], job
        finally:
            release.set()
        while (job := client.get(accepted.json()["url"]).json())["status"] in ("queued", "running"):
            assert time.monotonic() < deadline, job
            time.sleep(0.05)
    assert job["status"] == "done", job
    report = job["result"]["report"]
    assert report["triples"] > 0 and job["graph_done"] == job["graph_total"] == report["chunks"]


def test_the_cli_bar_shows_the_graph_stage_after_the_chunks(tmp_path, monkeypatch, capsys):
    """``agent-memory ingest`` of one large file: the bar goes on counting the texts read for the graph once the
    chunks are stored, to all of them once the facts are written."""
    from helpers import embedded_cli_env, run_cli

    embedded_cli_env(monkeypatch, tmp_path / "data")
    monkeypatch.delenv("AGENT_MEMORY_NO_PROGRESS")
    monkeypatch.setenv("AGENT_MEMORY_CHUNK_TOKENS", "32")
    monkeypatch.setenv("AGENT_MEMORY_CHUNK_OVERLAP_TOKENS", "0")
    release = threading.Event()
    _extraction_held_until(monkeypatch, release)
    store_items = pipeline_module.IngestionPipeline._store_items

    def stored_then_released(self, *args, **kwargs):  # extraction reads once the chunks are all stored
        store_items(self, *args, **kwargs)
        release.set()

    monkeypatch.setattr(pipeline_module.IngestionPipeline, "_store_items", stored_then_released)
    path = tmp_path / "ledger.md"
    path.write_text("# Depot ledger\n\n" + _text(40), encoding="utf-8")
    code, out, err = run_cli(capsys, ["ingest", str(path)])
    assert code == 0, err
    shown = re.findall(r"ledger\.md: (\d+)/(\d+) chunks, (\d+)/(\d+) texts read for the graph", err)
    counts = [tuple(map(int, found)) for found in shown]
    assert counts, err
    chunks = counts[-1][1]
    assert any(c_done == chunks and g_done < g_total for c_done, _, g_done, g_total in counts), counts
    assert counts[-1] == (chunks, chunks, chunks, chunks), counts
