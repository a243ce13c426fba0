"""``POST /v1/import``: an export's JSON Lines read back into the API key's tenant (never the tenant its header
names), with the report ``agent-memory import`` prints: bad lines are skips by number, a file cut short says
so, a body that is no export is a 422 naming what it is, one over the upload limit a 413, a large one a job."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from agent_memory.api import create_app
from agent_memory.api.testing import serve_in_thread
from agent_memory.core.config import load_settings
from tests.helpers import api_error

A = {"X-API-Key": "key-alpha"}
B = {"X-API-Key": "key-beta"}
C = {"X-API-Key": "key-gamma"}
NDJSON = {"Content-Type": "application/x-ndjson"}
LIMIT = 256 * 1024  # the upload limit, which an import's body shares
JOB_THRESHOLD = 16 * 1024


@pytest.fixture(scope="module")
def http(tmp_path_factory):
    data = tmp_path_factory.mktemp("import-api")
    settings = load_settings(data_dir=data, triple_extractor="rules", qdrant_url=None, neo4j_uri=None,
                             postgres_url=None, llm_model=None,
                             api_keys={"key-alpha": "alpha", "key-beta": "beta", "key-gamma": "gamma"})
    app = create_app(settings, warm=False, job_threshold_bytes=JOB_THRESHOLD, max_upload_bytes=LIMIT)
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=120) as client:
        for n in range(3):
            body = {"source_id": f"notes/alpha-{n}", "text": f"The alpha note {n} names the Heron server in Tromso."}
            assert client.post("/v1/documents", json=body, headers=A).status_code == 200
        for n in range(2):
            message = {"message": {"role": "user", "content": f"alpha message {n}", "timestamp": 1767603600 + n}}
            assert client.post("/v1/sessions/chat/messages", json=message, headers=A).status_code == 200
        yield client


def _export(http, headers=A) -> list[str]:
    response = http.get("/v1/export", headers=headers)
    assert response.status_code == 200
    return response.text.splitlines()


def _body(lines: list[str]) -> bytes:
    return "".join(line + "\n" for line in lines).encode()


def _sources(http, headers) -> list[str]:
    return sorted(s["source_id"] for s in http.get("/v1/sources", params={"limit": 100}, headers=headers).json()["sources"])


def test_an_export_goes_into_the_key_s_tenant_and_importing_it_again_changes_nothing(http):
    lines = _export(http)
    alpha_before = _sources(http, A)
    response = http.post("/v1/import", content=_body(lines), headers={**B, **NDJSON})
    assert response.status_code == 200, response.text
    report = response.json()
    # The header names alpha: beta's key writes beta, and alpha is as it was.
    assert report["tenant"] == "beta" and report["complete"] and report["skipped"] == []
    assert report["sources_written"] == 3 and report["sessions_imported"] == 1 and report["messages_appended"] == 2
    assert [s for s in _sources(http, B) if s.startswith("notes/")] == ["notes/alpha-0", "notes/alpha-1", "notes/alpha-2"]
    assert _sources(http, A) == alpha_before
    assert http.get("/v1/sessions/chat/messages", headers=B).json()["total"] == 2
    again = http.post("/v1/import", content=_body(lines), headers={**B, **{"Content-Type": "application/jsonl"}})
    assert again.status_code == 200 and again.json()["sources_unchanged"] == 3 and again.json()["sources_written"] == 0
    assert again.json()["sessions_unchanged"] == 1
    api_error(http.post("/v1/import", content=_body(lines), headers=NDJSON), 401, "unauthorized")


def test_a_truncated_body_and_garbage_lines_are_reported_the_rest_imported(http):
    lines = _export(http)
    sources = [n for n, line in enumerate(lines) if '"type": "source"' in line]
    cut = lines[:sources[1] + 1]  # the header and two notes; no end line
    body = _body(cut[:2]) + b"{broken\n" + b'"\xff\xfe not text"\n' + _body(cut[2:])
    report = http.post("/v1/import", content=body, headers={**C, "Content-Type": "text/plain; charset=utf-8"}).json()
    assert report["tenant"] == "gamma" and report["sources_written"] == 2 and not report["complete"]
    assert [s["line"] for s in report["skipped"]] == [3, 4]
    assert report["skipped"][0]["reason"].startswith("not JSON") and "not UTF-8" in report["skipped"][1]["reason"]
    assert any("cut short" in w for w in report["warnings"])
    assert [s for s in _sources(http, C) if s.startswith("notes/")] == ["notes/alpha-0", "notes/alpha-1"]


def test_a_body_that_is_no_export_is_refused_naming_what_it_is(http):
    message = api_error(http.post("/v1/import", content=b'{"hello": "world"}\n', headers={**C, **NDJSON}), 422,
                        "invalid_export")
    assert "not an agent-memory export" in message and "{\"hello\": \"world\"}" in message
    header = json.loads(_export(http)[0])
    message = api_error(http.post("/v1/import", content=_body([json.dumps({**header, "version": 99})]),
                                  headers={**C, **NDJSON}), 422, "invalid_export")
    assert "export format version 99" in message
    assert "empty" in api_error(http.post("/v1/import", content=b"\n\n", headers={**C, **NDJSON}), 422)
    message = api_error(http.post("/v1/import", content=_body(_export(http)), headers={**C, "Content-Type": "image/png"}),
                        415, "unsupported_media_type")
    assert "'image/png'" in message and "application/x-ndjson" in message


def test_a_body_over_the_upload_limit_is_413_and_nothing_is_stored(http):
    lines = _export(http)
    filler = json.dumps({"type": "source", "source_id": "big/one", "kind": "document", "text": "x " * LIMIT})
    response = http.post("/v1/import", content=_body([lines[0], filler, lines[-1]]), headers={**B, **NDJSON})
    assert f"exceeds the limit of {LIMIT} bytes" in api_error(response, 413, "too_large")
    # Sent in chunks, with no length declared: counted as it arrives.
    chunks = iter([_body([lines[0]]), *[b"x" * 64 * 1024] * 8])
    response = http.post("/v1/import", content=chunks, headers={**B, **NDJSON})
    assert f"exceeds the limit of {LIMIT} bytes" in api_error(response, 413, "too_large")
    assert "big/one" not in _sources(http, B)


def test_a_large_import_runs_as_a_job_whose_result_is_the_report(http):
    header = json.loads(_export(http)[0])
    notes = [json.dumps({"type": "source", "source_id": f"bulk/{n}", "kind": "document", "owner": "api:",
                         "text": f"Bulk note {n}: the Osprey pipeline step {n} reads batch {n * 7} " + "and more " * 40})
             for n in range(40)]
    body = _body([json.dumps(header), *notes, json.dumps({"type": "end", "sources": 40})])
    assert len(body) > JOB_THRESHOLD
    response = http.post("/v1/import", content=body, headers={**A, **NDJSON})
    assert response.status_code == 202 and response.headers["Location"] == response.json()["url"]
    job = response.json()
    for _ in range(600):
        job = http.get(f"/v1/jobs/{job['job_id']}", headers=A).json()
        if job["status"] in ("done", "failed"):
            break
        time.sleep(0.2)
    assert job["status"] == "done", job
    assert job["result"]["tenant"] == "alpha" and job["result"]["sources_written"] == 40 and job["result"]["complete"]
    assert job["units_done"] == job["units_total"] == 42  # the export's lines (once: units_total 0 beside them)
    assert api_error(http.get(f"/v1/jobs/{response.json()['job_id']}", headers=B), 404)  # another tenant's job
