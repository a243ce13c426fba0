"""The HTTP API end to end over a real uvicorn server on loopback, with two keys (two tenants):
ingest the sample corpus → ask → debug dump → forget; auth and tenant isolation; error statuses."""

from __future__ import annotations

import json
import os
import threading
import time

import httpx
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")
os.environ["AGENT_MEMORY_TRIPLE_EXTRACTOR"] = "rules"

from agent_memory.api import create_app  # noqa: E402
from agent_memory.api import ingestion as ingestion_module  # noqa: E402
from agent_memory.api.testing import serve_in_thread, upload_samples, wait_ready  # noqa: E402
from agent_memory.core.config import load_settings  # noqa: E402
from agent_memory.core.version import __version__  # noqa: E402
from agent_memory.remote import RemoteMemory  # noqa: E402
from tests.helpers import finished_job  # noqa: E402

ACME = {"X-API-Key": "key-acme"}
GLOBEX = {"Authorization": "Bearer key-globex"}
QUESTION = "Which vector store does agent-memory embed, and why?"
STORES_DOC = "samples/docs/embedded-stores.md"
JOB_THRESHOLD = 4096  # the samples are smaller: they ingest inline; the job test sends more
MAX_UPLOAD = 256 * 1024


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    settings = load_settings(data_dir=tmp_path_factory.mktemp("api-data"), triple_extractor="rules",
                             api_keys={"key-acme": "acme", "key-globex": "globex"})
    app = create_app(settings, job_threshold_bytes=JOB_THRESHOLD, max_upload_bytes=MAX_UPLOAD)
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=120) as client:
        wait_ready(client)
        reports = upload_samples(client, ACME)
        client.app = app  # for a test that holds the write lock as a running job does
        yield client, reports


def ask(client, headers, question=QUESTION, **body):
    return client.post("/v1/ask", headers=headers, json={"question": question, "budget": 900, **body})


def assert_error(response, status: int, code: str | None = None) -> dict:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == {"code", "message"} and error["message"]
    if code:
        assert error["code"] == code, error
    return error


# ---- health ---------------------------------------------------------------------------------------

def test_health_and_readiness_need_no_key(server):
    client, _ = server
    assert client.get("/healthz").json() == {"status": "ok", "version": __version__}
    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json()["checks"] == {"model": "ok", "catalog": "ok", "vectors": "ok", "graph": "ok"}
    for path in ("/debug", "/docs", "/redoc", "/openapi.json"):  # as docs/api.md's Authentication lists them
        assert client.get(path).status_code == 200, path


def test_openapi_lists_endpoints_with_examples(server):
    client, _ = server
    spec = client.get("/openapi.json").json()
    for path in ("/v1/documents", "/v1/ask", "/v1/prompt", "/v1/jobs/{job_id}", "/v1/sources/{source_id}",
                 "/v1/sessions/{session_id}/messages", "/v1/sessions/{session_id}/view",
                 "/v1/sessions/{session_id}/compact", "/healthz", "/readyz"):
        assert path in spec["paths"], path
    assert spec["components"]["schemas"]["AskIn"]["examples"][0]["question"]
    assert "401" in spec["paths"]["/v1/ask"]["post"]["responses"]
    schemes = spec["components"]["securitySchemes"]
    assert {"APIKeyHeader", "HTTPBearer"} <= set(schemes)


# ---- ingest → ask → debug → forget ----------------------------------------------------------------

def test_sample_upload_reports(server):
    _, reports = server
    ids = {sid for r in reports for sid in r["source_ids"]}
    # A JSONL file holds one source per record, a transcript one per turn.
    assert {STORES_DOC, "acme", "product-x300", "demo-session/1", "samples/docs/retention.html"} <= ids
    assert all(r["report"]["ok"] for r in reports)
    assert sum(r["report"]["chunks"] for r in reports) >= 4


def test_ask_retrieval_only_returns_prompt_and_passages(server):
    client, _ = server
    response = ask(client, ACME)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["mode"] == "retrieval-only" and body["answer"] is None
    assert f"[S:{STORES_DOC}]" in body["prompt"]
    assert body["prompt"].rstrip().endswith(QUESTION)
    assert body["passages"][0]["source_id"] == STORES_DOC
    assert "qdrant-edge-py" in body["passages"][0]["text"]
    usage = body["usage"]
    assert 0 < usage["context_tokens"] <= 900 and usage["budget"] == 900
    assert usage["completion_tokens"] == 0 and usage["prompt_tokens"] == usage["context_tokens"]
    assert body["timings_ms"]["total"] >= body["timings_ms"]["retrieval"] > 0
    assert body["debug"] is None and body["citations"] == [] and body["unknown_citation_count"] == 0


def test_debug_dump_on_ask_and_prompt(server):
    client, _ = server
    body = client.post("/v1/ask?debug=true", headers=ACME, json={"question": QUESTION, "budget": 900}).json()
    dump = body["debug"]
    assert {"dense", "keyword"} <= set(dump["routes"])
    assert dump["routes"]["dense"][0]["score"] >= dump["routes"]["dense"][-1]["score"]
    assert dump["fused"] and dump["sections"]["question"] > 0
    assert sum(dump["sections"].values()) >= dump["total_tokens"] - 10  # sections add up (joins aside)
    assert dump["prompt"] == body["prompt"]

    prompt = client.post("/v1/prompt", headers=ACME, json={"question": QUESTION, "budget": 600}).json()
    assert prompt["budget"] == 600 and prompt["total_tokens"] <= 600
    assert STORES_DOC in prompt["used_source_ids"]
    assert {"routes", "fused", "decisions", "assembly_drops", "timings_ms", "passages"} <= set(prompt)


def test_filters_restrict_sources_and_kinds(server):
    client, _ = server
    body = ask(client, ACME, "Who founded Acme?", filters={"source_ids": ["acme", "product-x200"]}).json()
    assert body["passages"] and {p["source_id"] for p in body["passages"]} <= {"acme", "product-x200"}
    body = ask(client, ACME, "greenhouse sensor order", filters={"kinds": ["turn"]}).json()
    assert body["passages"] and {p["kind"] for p in body["passages"]} == {"turn"}


def test_json_document_ingest_then_forget(server):
    client, _ = server
    doc = {"source_id": "notes/zeppelin", "title": "Zeppelin",
           "text": "The Zeppelin project mascot is a blue falcon named Quillon.", "metadata": {"team": "ops"}}
    posted = client.post("/v1/documents", headers=ACME, json=doc)
    assert posted.status_code == 200, posted.text
    assert posted.json()["source_ids"] == ["notes/zeppelin"] and posted.json()["report"]["chunks"] == 1
    question = "What is the Zeppelin project mascot called?"
    assert "[S:notes/zeppelin]" in ask(client, ACME, question).json()["prompt"]

    gone = client.delete("/v1/sources/notes/zeppelin", headers=ACME)
    assert gone.status_code == 200, gone.text
    assert gone.json()["source_id"] == "notes/zeppelin" and gone.json()["items"] >= 1
    assert "Quillon" not in ask(client, ACME, question).json()["prompt"]
    assert_error(client.delete("/v1/sources/notes/zeppelin", headers=ACME), 404, "not_found")


def test_forget_an_uploaded_file_forgets_every_record(server, tmp_path):
    client, _ = server
    records = tmp_path / "fleet.jsonl"
    records.write_text("\n".join(json.dumps(r) for r in [
        {"id": "blimp-1", "title": "Blimp one", "text": "Blimp one carries the orange weather radar."},
        {"id": "blimp-2", "title": "Blimp two", "text": "Blimp two carries the violet lidar array."}]))
    with records.open("rb") as handle:
        up = client.post("/v1/documents", headers=ACME, files={"file": ("fleet.jsonl", handle)},
                         data={"source_id": "uploads/fleet.jsonl", "metadata": '{"origin": "test"}'})
    assert up.status_code == 200, up.text
    assert sorted(up.json()["source_ids"]) == ["blimp-1", "blimp-2"]
    assert "violet lidar" in ask(client, ACME, "Which blimp carries the lidar?").json()["prompt"]
    removed = client.delete("/v1/sources/uploads/fleet.jsonl", headers=ACME).json()
    assert removed["sources"] == 2 and removed["items"] >= 2
    assert "violet" not in ask(client, ACME, "Which blimp carries the lidar?").json()["prompt"]


def test_large_upload_runs_as_background_job(server):
    client, _ = server
    text = "\n\n".join(f"Hangar note {i}: the tug number {i} is parked in bay {i % 7}." for i in range(120))
    assert len(text.encode()) > JOB_THRESHOLD
    accepted = client.post("/v1/documents", headers=ACME, files={"file": ("hangar.txt", text.encode())},
                           data={"source_id": "uploads/hangar.txt"})
    assert accepted.status_code == 202, accepted.text
    job_url = accepted.json()["url"]
    assert accepted.headers["location"] == job_url
    job = finished_job(client, job_url, ACME, timeout=300, every=0.2)
    assert job["status"] == "done", job
    assert job["result"]["source_ids"] == ["uploads/hangar.txt"] and job["result"]["report"]["chunks"] >= 2
    assert job["units_done"] == job["units_total"] == 1 and job["bytes"] == len(text.encode())
    # The file is one unit: its chunks are what showed the job's progress while it ran.
    assert job["chunks_done"] == job["chunks_total"] == job["result"]["report"]["chunks"]
    # Another tenant cannot see the job at all.
    assert_error(client.get(job_url, headers=GLOBEX), 404, "not_found")
    assert_error(client.get("/v1/jobs/feedbeef", headers=ACME), 404, "not_found")


def test_a_small_body_sent_while_a_job_writes_is_queued_not_held(server, monkeypatch):
    client, _ = server
    monkeypatch.setattr(ingestion_module, "LOCK_GRACE_S", 0.2)  # the grace a write waits, then it is queued
    lock = client.app.state.api.ingest_lock
    with lock:  # as a long job holds it: the request answers after the grace instead of waiting for the job
        accepted = client.post("/v1/documents", headers=ACME,
                               json={"source_id": "notes/ferry.md", "text": "The ferry leaves pier 4 at dawn."})
        assert accepted.status_code == 202, accepted.text
    job = finished_job(client, accepted.json()["url"], ACME, timeout=120, every=0.2)
    assert job["status"] == "done" and job["result"]["source_ids"] == ["notes/ferry.md"], job


def _done(client, url, headers=ACME) -> dict:
    return finished_job(client, url, headers, timeout=120)


def test_a_forget_or_gc_sent_while_a_job_writes_is_queued_behind_it_not_held(server, monkeypatch):
    """A DELETE waited for the write lock as long as the job holding it ran (six minutes beside a 3,000-record
    upload, another tenant's as much as one's own): it is queued behind the job instead, as a small document
    is, and the job's result is the answer the request would have had."""
    client, _ = server
    monkeypatch.setattr(ingestion_module, "LOCK_GRACE_S", 0.2)
    assert client.post("/v1/documents", headers=ACME, json={"source_id": "notes/tram.md",
                                                             "text": "The night tram leaves at two."}).status_code == 200
    with client.app.state.api.ingest_lock:  # as a long job holds it
        gone = client.delete("/v1/sources/notes/tram.md", headers=ACME)
        unknown = client.delete("/v1/sources/notes/no-such.md", headers=ACME)
        expiry = client.post("/v1/gc", headers=GLOBEX)
        assert [r.status_code for r in (gone, unknown, expiry)] == [202, 202, 202], (gone.text, expiry.text)
        assert gone.headers["location"] == gone.json()["url"]
        assert client.get(gone.json()["url"], headers=ACME).json()["status"] in ("queued", "running")
    result = _done(client, gone.json()["url"])["result"]
    assert result["source_id"] == "notes/tram.md" and result["sources"] == 1 and result["items"] >= 1, result
    failed = _done(client, unknown.json()["url"])
    assert failed["status"] == "failed" and failed["error"]["code"] == "not_found", failed
    assert "notes/no-such.md" in failed["error"]["message"]
    assert set(_done(client, expiry.json()["url"], GLOBEX)["result"]["expired"]) == {"sources", "items", "triples", "session_messages"}
    assert_error(client.get(gone.json()["url"], headers=GLOBEX), 404, "not_found")  # a job is its tenant's
    assert_error(client.delete("/v1/sources/notes/tram.md", headers=ACME), 404, "not_found")  # it was forgotten


def test_the_python_client_waits_for_a_queued_forget(server, monkeypatch):
    client, _ = server
    monkeypatch.setattr(ingestion_module, "LOCK_GRACE_S", 0.2)
    remote = RemoteMemory(str(client.base_url), api_key="key-acme")
    assert client.post("/v1/documents", headers=ACME, json={"source_id": "notes/kiosk.md",
                                                             "text": "The kiosk sells maps."}).status_code == 200
    answers: dict = {}
    with client.app.state.api.ingest_lock:
        waiting = threading.Thread(target=lambda: answers.update(
            kiosk=remote.forget("notes/kiosk.md"), none=remote.forget("notes/no-such.md"), gc=remote.gc()))
        waiting.start()
        time.sleep(1.0)
        assert waiting.is_alive()  # queued behind the "job", not failed
    waiting.join(120)
    assert answers["kiosk"]["sources"] == 1 and answers["none"] == {"sources": 0, "items": 0, "triples": 0}
    assert "expired" in answers["gc"]
    remote.close()


def test_a_session_delete_sent_while_a_job_writes_is_queued_behind_it_not_held(server, monkeypatch):
    """A session delete waits for the session's pending archive pass, which waits for the write lock: beside a
    job it hung as long as the job ran. It is queued behind the job instead, and the Python client waits."""
    client, _ = server
    monkeypatch.setattr(ingestion_module, "LOCK_GRACE_S", 0.2)
    for session in ("dock", "pier"):
        sent = client.post(f"/v1/sessions/{session}/messages", headers=ACME,
                           json={"message": {"role": "user", "content": f"The {session} key is blue."}})
        assert sent.status_code == 200, sent.text
    remote = RemoteMemory(str(client.base_url), api_key="key-acme")
    answers: dict = {}
    with client.app.state.api.ingest_lock:  # as a long job holds it
        appended = client.post("/v1/sessions/dock/messages", headers=ACME,
                               json={"message": {"role": "user", "content": "The dock opens at six."}})
        assert appended.status_code == 200  # an append is not held: its archive pass waits instead
        gone = client.delete("/v1/sessions/dock", headers=ACME, params={"forget": "true"})
        unknown = client.delete("/v1/sessions/no-such-session", headers=ACME)
        assert [gone.status_code, unknown.status_code] == [202, 202], gone.text
        waiting = threading.Thread(target=lambda: answers.update(pier=remote.delete_session("pier")))
        waiting.start()
    waiting.join(120)
    result = _done(client, gone.json()["url"])["result"]
    assert result["session_id"] == "dock" and result["messages"] == 2, result
    assert _done(client, unknown.json()["url"])["error"]["code"] == "not_found"
    assert answers["pier"]["session_id"] == "pier" and answers["pier"]["messages"] == 1
    listed = {s["session_id"] for s in client.get("/v1/sessions", headers=ACME).json()["sessions"]}
    assert not {"dock", "pier"} & listed
    remote.close()


# ---- auth and tenant isolation --------------------------------------------------------------------

@pytest.mark.parametrize("method,path,body", [
    ("post", "/v1/ask", {"question": "anything"}),
    ("post", "/v1/prompt", {"question": "anything"}),
    ("post", "/v1/documents", {"source_id": "x", "text": "y"}),
    ("delete", "/v1/sources/acme", None),
    ("post", "/v1/sessions/s1/messages", {"message": {"role": "user", "content": "hi"}}),
    ("get", "/v1/sessions/s1/view", None),
    ("get", "/v1/jobs/abc", None),
])
def test_every_endpoint_needs_a_valid_key(server, method, path, body):
    client, _ = server
    kwargs = {"json": body} if body is not None else {}
    error = assert_error(client.request(method, path, **kwargs), 401, "unauthorized")
    assert "API key" in error["message"]
    assert_error(client.request(method, path, headers={"X-API-Key": "wrong"}, **kwargs), 401, "unauthorized")
    assert_error(client.request(method, path, headers={"Authorization": "Bearer wrong"}, **kwargs), 401)
    basic = client.request(method, path, headers={"Authorization": "Basic a2V5LWFjbWU="}, **kwargs)
    assert "scheme 'Basic'" in assert_error(basic, 401, "unauthorized")["message"]
    assert basic.headers["www-authenticate"] == "Bearer"


def test_tenants_cannot_read_each_others_memory(server):
    client, _ = server
    acme = ask(client, ACME).json()
    globex = ask(client, GLOBEX).json()  # same question, the other key
    assert acme["passages"] and globex["passages"] == []
    assert "[S:samples/" not in globex["prompt"] and "qdrant-edge-py" not in globex["prompt"]
    # globex can neither forget nor see acme's sources, sessions or filters' contents.
    assert_error(client.delete(f"/v1/sources/{STORES_DOC}", headers=GLOBEX), 404)
    assert ask(client, GLOBEX, "Who founded Acme?", filters={"source_ids": ["acme"]}).json()["passages"] == []
    assert STORES_DOC in [p["source_id"] for p in ask(client, ACME).json()["passages"]]


def test_a_tenant_in_the_body_never_chooses_the_tenant(server):
    """The API key decides the tenant: a body naming another is refused by name (bodies are closed), and
    nothing is stored in either tenant; without it, the document is the key's tenant's only."""
    client, _ = server
    doc = {"source_id": "notes/tenant-probe", "text": "The saffron gateway password hint is marmalade."}
    refused = client.post("/v1/documents", headers=ACME, json={**doc, "tenant": "globex"})
    assert refused.status_code == 422 and "'tenant'" in refused.json()["error"]["message"]
    assert refused.json()["error"]["code"] == "invalid_request"
    question = "What is the saffron gateway password hint?"
    assert "marmalade" not in ask(client, GLOBEX, question).json()["prompt"]
    assert "marmalade" not in ask(client, ACME, question).json()["prompt"]
    assert client.post("/v1/documents", headers=ACME, json=doc).status_code == 200
    assert "marmalade" in ask(client, ACME, question).json()["prompt"]
    assert "marmalade" not in ask(client, GLOBEX, question).json()["prompt"]


def test_sessions_are_per_tenant(server):
    client, _ = server
    sent = client.post("/v1/sessions/shared-name/messages", headers=ACME,
                       json={"message": {"role": "user", "content": "acme secret: launch on Tuesday"}})
    assert sent.status_code == 200
    assert_error(client.get("/v1/sessions/shared-name/view", headers=GLOBEX), 404, "not_found")
    assert_error(client.post("/v1/sessions/shared-name/compact", headers=GLOBEX), 404, "not_found")
    client.post("/v1/sessions/shared-name/messages", headers=GLOBEX,
                json={"message": {"role": "user", "content": "globex note"}})
    view = client.get("/v1/sessions/shared-name/view", headers=GLOBEX).json()
    assert [m["content"] for m in view["messages"]] == ["globex note"]


# ---- working memory -------------------------------------------------------------------------------

def test_session_append_view_compact(server):
    client, _ = server
    path = "/v1/sessions/wm-1"
    turns = [("system", "You are the greenhouse planning assistant.", "strict"),
             ("user", "We need 40 humidity sensors for greenhouse B by 1 December.", "strict"),
             ("assistant", "Noted: 40 sensors, greenhouse B, deadline 1 December.", "fuzzy"),
             ("user", "Listing of the parts folder: a.txt b.txt c.txt d.txt", "forgettable"),
             ("assistant", "The folder holds four text files.", None),
             ("user", "Which sensor did we pick?", "strict")]
    for seq, (role, content, retention) in enumerate(turns):
        body = {"message": {"role": role, "content": content}}
        if retention:
            body["retention"] = retention
        sent = client.post(f"{path}/messages", headers=ACME, json=body)
        assert sent.status_code == 200, sent.text
        assert sent.json()["seq"] == seq
    stats = sent.json()["stats"]
    assert stats["session_id"] == "wm-1" and stats["messages"] == 6 and stats["unclassified_appends"] == 1

    view = client.get(f"{path}/view", headers=ACME, params={"budget": 4000}).json()
    shown = [m["content"] for m in view["messages"]]
    # Everything fits in 4,000 tokens: all turns in order (a "[Key entities]" header may sit after the system).
    assert [c for c in shown if not c.startswith("[Key entities]")] == [t[1] for t in turns]
    assert 0 < view["tokens"] <= 4000

    compacted = client.post(f"{path}/compact", headers=ACME)
    assert compacted.status_code == 200, compacted.text
    assert compacted.json()["stats"]["forced_compactions"] == 1 and compacted.json()["stats"]["summaries"] >= 1
    after = client.get(f"{path}/view", headers=ACME, params={"budget": 4000}).json()["messages"]
    assert after[0]["role"] == "system" and after[-1]["content"] == "Which sensor did we pick?"
    assert any("[Context Compressed]" in str(m["content"]) for m in after)
    assert len(after) < len(turns)

    # The system message and the pending question cannot fit in 10 tokens: a budget error, not a 500.
    assert_error(client.get(f"{path}/view", headers=ACME, params={"budget": 10}), 400, "budget")


def test_ask_with_a_session_uses_its_recent_turns(server):
    client, _ = server
    client.post("/v1/sessions/wm-ask/messages", headers=ACME,
                json={"message": {"role": "user", "content": "Our courier for the sensors is Falkenrath Logistics."},
                      "retention": "strict"})
    body = ask(client, ACME, "Which courier delivers the sensors?", session_id="wm-ask").json()
    # The session's turn reaches the prompt once: in the recent section while it is not archived yet, else
    # as its archived copy among the passages (the recent view places what the question reaches).
    assert body["prompt"].count("[S:wm-ask/m0] user: Our courier for the sensors is Falkenrath Logistics.") == 1


def test_unknown_session_is_404(server):
    client, _ = server
    assert_error(client.get("/v1/sessions/never-seen/view", headers=ACME), 404, "not_found")
    assert_error(client.post("/v1/sessions/never-seen/compact", headers=ACME), 404, "not_found")


# ---- bad input ------------------------------------------------------------------------------------

def test_bad_input_statuses(server):
    client, _ = server
    assert_error(client.post("/v1/ask", headers=ACME, json={"budget": 100}), 422, "invalid_request")
    assert_error(client.post("/v1/ask", headers=ACME, json={"question": "x", "budget": -5}), 422)
    assert_error(client.post("/v1/ask", headers={**ACME, "content-type": "application/json"}, content=b"{not json"),
                 422)
    error = assert_error(ask(client, ACME, QUESTION, budget=5), 400, "budget")
    assert "5" in error["message"]
    assert_error(client.post("/v1/documents", headers=ACME, json={"source_id": "x"}), 422, "invalid_request")
    assert_error(client.post("/v1/documents", headers={**ACME, "content-type": "text/plain"}, content=b"hi"), 415)
    assert_error(client.post("/v1/sessions/s-bad/messages", headers=ACME,
                             json={"message": {"role": "robot", "content": "beep"}}), 400, "bad_request")
    assert_error(client.post("/v1/sessions/s-bad/messages", headers=ACME,
                             json={"message": {"role": "user", "content": "x"}, "retention": "forever"}), 422)
    assert_error(client.get("/v1/sessions/wm-1/view", headers=ACME, params={"budget": "lots"}), 422)
    up = client.post("/v1/documents", headers=ACME, files={"file": ("image.png", b"\x89PNG\r\n\x1a\n\x00\x00")})
    assert_error(up, 400, "unsupported_file")


def test_too_large_is_413(server):
    client, _ = server
    big = b"x" * (MAX_UPLOAD + 1)
    assert_error(client.post("/v1/documents", headers=ACME, files={"file": ("big.txt", big)}), 413, "too_large")
    doc = json.dumps({"source_id": "big", "text": "y" * (MAX_UPLOAD + 1)})
    assert_error(client.post("/v1/documents", headers={**ACME, "content-type": "application/json"}, content=doc),
                 413, "too_large")


# ---- stores down ----------------------------------------------------------------------------------

def test_store_down_is_503(tmp_path, server):
    import socket

    with socket.socket() as probe:  # a loopback port with nothing listening: the "Qdrant server" is down
        probe.bind(("127.0.0.1", 0))
        dead = probe.getsockname()[1]
    settings = load_settings(data_dir=tmp_path, triple_extractor="rules", api_keys={"k": "acme"},
                             qdrant_url=f"http://127.0.0.1:{dead}")
    with serve_in_thread(create_app(settings)) as url, httpx.Client(base_url=url, timeout=60) as client:
        deadline = time.monotonic() + 120
        while (ready := client.get("/readyz")).json().get("checks", {}).get("model") == "loading":
            assert time.monotonic() < deadline
            time.sleep(0.2)
        error = assert_error(ready, 503, "not_ready")
        assert "vectors" in error["message"] and ready.json()["checks"]["catalog"] == "ok"
        error = assert_error(client.post("/v1/ask", headers={"X-API-Key": "k"}, json={"question": "hello"}),
                             503, "store_unavailable")
        assert str(dead) in error["message"]
        doc = {"source_id": "d", "text": "some text to store"}
        assert_error(client.post("/v1/documents", headers={"X-API-Key": "k"}, json=doc), 503, "store_unavailable")


# ---- keys off loopback ----------------------------------------------------------------------------

def test_serve_refuses_an_open_host_without_keys(monkeypatch):
    from agent_memory.api.server import serve
    from agent_memory.core.errors import ConfigError

    monkeypatch.delenv("AGENT_MEMORY_API_KEYS", raising=False)
    with pytest.raises(ConfigError, match="0.0.0.0"):
        serve(host="0.0.0.0", port=1)


def test_an_app_meant_for_an_open_host_demands_a_key(tmp_path):
    # Configured for 0.0.0.0 (served here on loopback): no key means 401 even with no keys configured.
    settings = load_settings(data_dir=tmp_path, api_host="0.0.0.0", api_keys={})
    with serve_in_thread(create_app(settings, warm=False)) as url, httpx.Client(base_url=url) as client:
        assert_error(client.post("/v1/ask", json={"question": "hi"}), 401, "unauthorized")
        assert client.get("/healthz").status_code == 200


def test_warm_up_loads_the_chinese_path_before_the_first_request(tmp_path):
    """The first Chinese question loads jieba's part-of-speech tagger (about a second): readiness
    waits for it, not a user. What warm-up leaves alive is kept out of later garbage collections."""
    import gc

    from agent_memory.core.chinese_words import load_posseg

    load_posseg.cache_clear()
    gc.unfreeze()
    settings = load_settings(data_dir=tmp_path, triple_extractor="none", qdrant_url=None, neo4j_uri=None,
                             postgres_url=None)
    with serve_in_thread(create_app(settings)) as url, httpx.Client(base_url=url, timeout=60) as client:
        wait_ready(client)
        assert load_posseg.cache_info().currsize == 1
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0  # closed: given back to the collector
