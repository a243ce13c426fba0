"""Hostile office files uploaded through the HTTP API, over a real uvicorn server: each comes back as a skip
with its reason (an inline upload: 400 ``unsupported_file``; a background job: ``failed`` with that code), never
a 500 or a job that does not end, and a good file sent beside them is stored and found by /v1/ask and
/v1/prompt. The CLI working through the server that owns its data dir lists each as a skipped file with its
reason. The readers' own bounds are tests/unit/test_hostile_office_files.py; the files are built here, small
on disk (a bomb's zeros deflate a thousandfold)."""

from __future__ import annotations

import json
import os
import time

import httpx
import pytest

os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")

from agent_memory.api import create_app  # noqa: E402
from agent_memory.api.testing import serve_in_thread  # noqa: E402
from agent_memory.core.config import load_settings  # noqa: E402
from agent_memory.ingest import office_formats  # noqa: E402
from agent_memory.ingest.formats import MAX_DOCUMENT_BYTES  # noqa: E402
from tests.helpers import embedded_cli_env, run_cli  # noqa: E402
from tests.office_documents import add_zeros, write_docx, write_pptx, write_sparse_xlsx, write_xlsx  # noqa: E402

BINARY = bytes(range(256)) * 16  # no text, no magic number of any format

# (file name, what its skip's reason says)
HOSTILE = [
    ("bomb.docx", "too large to parse whole"),  # word/document.xml stated past what is parsed whole
    ("bomb.xlsx", "zip bomb"),  # media of zeros past what a document's parts may inflate to
    ("figures.docx", "not a DOCX file (not a zip archive holding word/document.xml)"),
    ("figures.xlsx", "not an XLSX file (not a zip archive holding xl/workbook.xml)"),
]


def hostile_files(folder, depot: str):
    """The hostile files, a workbook stating every cell Excel can address (read within bounds, stored) and a
    good deck, in ``folder``; ``depot`` names what the good files say, so each test asks for its own."""
    folder.mkdir(parents=True, exist_ok=True)
    docx = write_docx(folder / "bomb.docx", ["The bomb's own paragraph."])
    add_zeros(docx, "word/document.xml.padding.xml", MAX_DOCUMENT_BYTES + 1)
    add_zeros(write_xlsx(folder / "bomb.xlsx", {"Data": [["x"]]}), "xl/media/zeros.bin",
              office_formats.MAX_INFLATED_BYTES + 1)
    for name, _ in HOSTILE[2:]:
        (folder / name).write_bytes(BINARY)
    write_sparse_xlsx(folder / "sparse.xlsx", f"Pump P-7 of the {depot} depot moves 40 litres a minute")
    write_pptx(folder / "deck.pptx", [{"title": f"{depot} depot", "lines": [f"The {depot} depot opens at six."]}])
    return folder


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A server owning its data dir (as `serve` does: the CLI pointed at that dir works through it)."""
    data = tmp_path_factory.mktemp("hostile-uploads")
    settings = load_settings(data_dir=data, triple_extractor="none", llm_model=None, qdrant_url=None,
                             neo4j_uri=None, postgres_url=None)
    app = create_app(settings, warm=False)
    with serve_in_thread(app, owns=data) as url, httpx.Client(base_url=url, timeout=120) as http:
        yield http, app.state.api, data


def send(http, state, path, source_id: str, as_job: bool) -> tuple[int, dict]:
    """Upload ``path``: its answer (inline), or the ended job's (polled; a job that does not end fails)."""
    state.job_threshold_bytes = 0 if as_job else 1 << 40
    with path.open("rb") as handle:
        response = http.post("/v1/documents", files={"file": (path.name, handle)}, data={"source_id": source_id})
    if not as_job:
        return response.status_code, response.json()
    assert response.status_code == 202, response.text
    deadline = time.monotonic() + 120
    while (job := http.get(response.json()["url"]).json())["status"] not in ("done", "failed"):
        assert time.monotonic() < deadline, f"job of {path.name} still {job['status']} after 120 s: {job}"
        time.sleep(0.1)
    return 200 if job["status"] == "done" else 400, job["result"] if job["status"] == "done" else {
        "error": job["error"]}


@pytest.mark.parametrize("as_job, depot", [(False, "Heron"), (True, "Osprey")], ids=["inline", "job"])
def test_hostile_uploads_are_skips_with_their_reasons_and_the_good_files_beside_them_are_found(
        served, tmp_path, as_job, depot):
    http, state, _ = served
    folder = hostile_files(tmp_path / "upload", depot)
    prefix = depot.lower()
    try:
        for name, reason in HOSTILE:
            status, body = send(http, state, folder / name, f"{prefix}/{name}", as_job)
            assert status == 400 and body["error"]["code"] == "unsupported_file", (name, body)
            message = body["error"]["message"]
            assert f"{name!r} cannot be ingested" in message and reason in message, (name, message)
            assert "staged-uploads" not in message and "pending-jobs" not in message  # no server path
        for name in ("sparse.xlsx", "deck.pptx"):
            status, body = send(http, state, folder / name, f"{prefix}/{name}", as_job)
            assert status == 200 and body["source_ids"] == [f"{prefix}/{name}"], (name, body)
    finally:
        state.job_threshold_bytes = state.settings.api_job_threshold_bytes
    stored = [row["source_id"] for row in http.get("/v1/sources", params={"prefix": f"{prefix}/"}).json()["sources"]]
    assert stored == [f"{prefix}/deck.pptx", f"{prefix}/sparse.xlsx"]
    asked = http.post("/v1/ask", json={"question": f"When does the {depot} depot open?", "budget": 600})
    assert asked.status_code == 200, asked.text
    assert f"[S:{prefix}/deck.pptx]" in asked.json()["prompt"] and "opens at six" in asked.json()["prompt"]
    dump = http.post("/v1/prompt", json={"question": f"How much does pump P-7 of the {depot} depot move?",
                                         "budget": 600})
    assert dump.status_code == 200, dump.text
    assert f"[S:{prefix}/sparse.xlsx]" in dump.json()["prompt"] and "40 litres" in dump.json()["prompt"]


def test_the_cli_through_the_server_lists_each_hostile_file_as_skipped_with_its_reason(
        served, tmp_path, monkeypatch, capsys):
    """`agent-memory ingest` of a folder on the data dir a server owns sends each file to it: the folder job
    ends, its report names each hostile file and its reason, and the good files are stored and found."""
    http, _, data = served
    embedded_cli_env(monkeypatch, data)
    hostile_files(tmp_path / "inbox", "Kestrel")
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, ["ingest", "inbox", "--json"])
    report = json.loads(out)
    assert code == 0 and report["files_ingested"] == 2 and not report["files_failed"], (report, err)
    skipped = {os.path.basename(path): why for path, why in report["files_skipped"]}
    assert sorted(skipped) == sorted(name for name, _ in HOSTILE), skipped
    for name, reason in HOSTILE:
        assert reason in skipped[name], (name, skipped[name])
    code, out, err = run_cli(capsys, ["prompt", "When does the Kestrel depot open?", "--budget", "400"])
    assert code == 0 and "[S:inbox/deck.pptx]" in out and "opens at six" in out, err
