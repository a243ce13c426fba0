"""An operator removes a tenant with an admin key (``DELETE /v1/tenants/{tenant}``, and ``agent-memory forget --all``
through the server that owns the data dir with AGENT_MEMORY_ADMIN_KEY): everything the tenant holds goes, its
sessions, sources, facts and the records of its finished jobs, and nothing of another tenant; a tenant's key is
refused, a name no tenant may have is a 422, an unknown tenant a 404 and a tenant with jobs running a 409, each
naming the tenant, with nothing removed."""

from __future__ import annotations

import json
import threading

import httpx
import pytest

from agent_memory.api import create_app, ingestion
from agent_memory.api.testing import serve_in_thread
from agent_memory.core.config import load_settings
from agent_memory.core.records import SearchFilter
from agent_memory.remote import KEY_ENV
from tests.helpers import api_error, embedded_cli_env, run_cli

ACME_KEY, GLOBEX_KEY, ADMIN_KEY = "key-acme-0123456789abcdef", "key-globex-0123456789abcdef", "adm-0123456789abcdef"
ACME, GLOBEX, ADMIN = ({"X-API-Key": key} for key in (ACME_KEY, GLOBEX_KEY, ADMIN_KEY))
# A document over this many bytes is ingested as a job: each tenant leaves a finished job's record behind.
JOB_THRESHOLD = 200


@pytest.fixture
def served(tmp_path, monkeypatch):
    data = tmp_path / "data"
    embedded_cli_env(monkeypatch, data)
    monkeypatch.delenv(KEY_ENV, raising=False)
    settings = load_settings(data_dir=data, api_keys={ACME_KEY: "acme", GLOBEX_KEY: "globex"}, admin_keys=[ADMIN_KEY])
    app = create_app(settings, warm=False, job_threshold_bytes=JOB_THRESHOLD)
    with serve_in_thread(app, owns=data) as url, httpx.Client(base_url=url, timeout=120) as http:
        jobs = {}
        for headers, tenant in ((ACME, "acme"), (GLOBEX, "globex")):
            for n in range(2):
                body = {"source_id": f"notes/{tenant}-{n}", "text": f"The {tenant} team runs the Heron server {n}."}
                assert http.post("/v1/documents", json=body, headers=headers).status_code == 200
            long = {"source_id": f"notes/{tenant}-long", "text": f"The {tenant} archive lives in Tromso. " * 20}
            jobs[tenant] = _done(http, http.post("/v1/documents", json=long, headers=headers), headers)
            for n in range(3):
                message = {"message": {"role": "user", "content": f"{tenant} message {n}", "timestamp": 1767603600 + n}}
                assert http.post("/v1/sessions/chat/messages", json=message, headers=headers).status_code == 200
        app.state.api.memory.working_memory.flush()  # archived in the background: counted once it is stored
        yield http, app.state.api, jobs


def _done(http: httpx.Client, accepted: httpx.Response, headers: dict) -> str:
    assert accepted.status_code == 202, accepted.text
    for _ in range(600):
        job = http.get(accepted.json()["url"], headers=headers).json()
        if job["status"] in ("done", "failed"):
            assert job["status"] == "done", job
            return job["job_id"]
        threading.Event().wait(0.1)
    raise AssertionError(f"the job did not end: {job}")


def _held(state, tenant: str) -> dict:
    services = state.services
    return {"catalog": services.catalog.count(tenant), "items": services.vectors.count(SearchFilter(tenant=tenant)),
            "graph": services.graph.stats(tenant), "sessions": state.working_memory.exists(tenant, "chat")}


def test_an_admin_key_removes_a_tenant_and_nothing_of_another(served):
    http, state, jobs = served
    globex_before = _held(state, "globex")
    assert globex_before["catalog"] >= 3 and globex_before["items"] >= 3 and globex_before["sessions"]
    # A tenant's key, even for its own tenant, is no admin key; no key is no caller.
    message = api_error(http.delete("/v1/tenants/acme", headers=ACME), 403, "forbidden")
    assert "admin key" in message and "'acme'" in message
    api_error(http.delete("/v1/tenants/globex"), 401, "unauthorized")
    # A name no tenant may have, and one no store holds: each named, nothing removed.
    message = api_error(http.delete("/v1/tenants/ac%2Fme", headers=ADMIN), 422, "invalid_request")
    assert "'ac/me'" in message and "tenant names are" in message
    message = api_error(http.delete("/v1/tenants/acmee", headers=ADMIN), 404, "not_found")
    assert "no tenant 'acmee'" in message and "'acme'" in message
    assert _held(state, "acme")["catalog"] >= 3

    gone = http.delete("/v1/tenants/acme", headers=ADMIN)
    assert gone.status_code == 200, gone.text
    report = gone.json()
    assert report["tenant"] == "acme" and report["sessions"] == 1 and report["messages"] == 3
    assert report["sources"] >= 3 and report["items"] >= 3 and report["jobs"] == 1
    assert _held(state, "acme") == {"catalog": 0, "items": 0, "graph": {"entities": 0, "relations": 0},
                                    "sessions": False}
    # Its finished job's record went with it; the other tenant's stays, as does all it holds.
    assert http.get(f"/v1/jobs/{jobs['acme']}", headers=ACME).status_code == 404
    assert http.get(f"/v1/jobs/{jobs['globex']}", headers=GLOBEX).json()["status"] == "done"
    assert _held(state, "globex") == globex_before
    assert http.get("/v1/sessions/chat/messages", headers=GLOBEX).status_code == 200
    # Removed, the tenant is unknown.
    assert "no tenant 'acme'" in api_error(http.delete("/v1/tenants/acme", headers=ADMIN), 404)


def test_a_tenant_with_a_job_running_is_refused_by_both_removals_and_a_removal_behind_a_job_is_queued(served, monkeypatch):
    http, state, _ = served
    monkeypatch.setattr(ingestion, "LOCK_GRACE_S", 0.2)
    long = {"source_id": "notes/acme-late", "text": "The acme depot moved to Bergen. " * 20}
    with state.ingest_lock:  # the upload's job waits for the write lock: it is running, unfinished
        accepted = http.post("/v1/documents", json=long, headers=ACME)
        message = api_error(http.delete("/v1/tenants/acme", headers=ADMIN), 409, "tenant_busy")
        assert "tenant 'acme' has 1 job queued or running" in message and "nothing was removed" in message
        # The tenant's own key is refused the same way: its job would write into the emptied tenant.
        own = api_error(http.delete("/v1/tenant", params={"confirm": "acme"}, headers=ACME), 409, "tenant_busy")
        assert "tenant 'acme' has 1 job queued or running" in own
    _done(http, accepted, ACME)
    # The write lock held past its grace: the removal is a job, read back with the admin key, its result the answer.
    with state.ingest_lock:
        queued = http.delete("/v1/tenants/acme", headers=ADMIN)
        assert queued.status_code == 202, queued.text
    for _ in range(600):
        job = http.get(queued.json()["url"], headers=ADMIN).json()
        if job["status"] in ("done", "failed"):
            break
        threading.Event().wait(0.1)
    assert job["status"] == "done" and job["result"]["tenant"] == "acme" and job["result"]["sources"] >= 4, job
    assert http.get(queued.json()["url"], headers=ACME).status_code == 404
    assert _held(state, "acme")["catalog"] == 0 and _held(state, "globex")["catalog"] >= 3


def test_the_cli_removes_any_tenant_through_the_server_with_an_admin_key(served, capsys, monkeypatch):
    _, state, _ = served
    # Without an admin key, the API key's tenant alone: another is refused, nothing removed.
    monkeypatch.setenv(KEY_ENV, GLOBEX_KEY)
    code, _, err = run_cli(capsys, ["forget", "--all", "--tenant", "acme", "--yes"])
    assert code == 2 and "tenant 'globex'" in err, err
    monkeypatch.setenv("AGENT_MEMORY_ADMIN_KEY", "not-an-admin-key-0123456789")
    code, _, err = run_cli(capsys, ["forget", "--all", "--tenant", "acme", "--yes"])
    assert code == 2 and "refused the admin key in AGENT_MEMORY_ADMIN_KEY" in err and "not-an-admin" not in err
    assert _held(state, "acme")["catalog"] >= 3
    monkeypatch.setenv("AGENT_MEMORY_ADMIN_KEY", ADMIN_KEY)
    code, out, err = run_cli(capsys, ["forget", "--all", "--tenant", "acme", "--yes"])
    assert code == 0, err
    report = json.loads(out)
    assert report["tenant"] == "acme" and report["sessions"] == 1 and report["jobs"] == 1
    assert _held(state, "acme")["catalog"] == 0 and _held(state, "globex")["catalog"] >= 3
    code, _, err = run_cli(capsys, ["forget", "--all", "--tenant", "acme", "--yes"])
    assert code == 2 and "no tenant 'acme'" in err, err
