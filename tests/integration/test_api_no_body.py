"""Routes whose options are query parameters refuse a body (422 naming those parameters) instead of ignoring
it: ``POST /v1/check`` with ``{"repair": true}`` once answered 200 without repairing, and its sender believed
it repaired. The same for the expiry pass, compaction, and the deletes; an empty body or ``{}`` still passes."""

from __future__ import annotations

import httpx
import pytest

from agent_memory.api import create_app
from agent_memory.api.testing import serve_in_thread, wait_ready
from agent_memory.core.config import load_settings


@pytest.fixture(scope="module")
def http(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("no-body") / "data"
    settings = load_settings(data_dir=data_dir, triple_extractor="rules", qdrant_url=None, neo4j_uri=None,
                             postgres_url=None)
    with serve_in_thread(create_app(settings)) as url, httpx.Client(base_url=url, timeout=60) as client:
        wait_ready(client)
        assert client.post("/v1/documents", json={"source_id": "notes/gate", "text": "Gate 3 closes at 18:00."}
                           ).status_code == 200
        assert client.post("/v1/sessions/s1/messages", json={"message": {"role": "user", "content": "I park at gate 3."}}
                           ).status_code == 200
        yield client


@pytest.mark.parametrize("method, path, body, named", [
    ("POST", "/v1/check", {"repair": True, "adopt": False}, "(repair, adopt), e.g. /v1/check?repair=true&adopt=false"),
    ("DELETE", "/v1/sessions/s1", {"forget": True}, "(forget), e.g. /v1/sessions/s1?forget=true"),
    ("POST", "/v1/sessions/s1/compact", {"agent": "a"}, "(agent_id), e.g. /v1/sessions/s1/compact?agent_id=..."),
    ("DELETE", "/v1/tenant", {"confirm": "default"}, "(confirm), e.g. /v1/tenant?confirm=default"),
    ("DELETE", "/v1/sources", {"prefix": "notes/"}, "(prefix, file_ids), e.g. /v1/sources?prefix=notes%2F"),
    ("DELETE", "/v1/sources/notes/gate", {"all": True}, "takes no body and no options"),
    ("POST", "/v1/gc", {"tenant": "default"}, "takes no body and no options"),
])
def test_a_body_to_a_route_that_reads_none_is_refused_naming_its_query_parameters(http, method, path, body, named):
    refused = http.request(method, path, json=body)
    message = refused.json()["error"]["message"]
    assert refused.status_code == 422 and f"{method} {path} takes no body" in message and named in message
    assert "nothing was done" in message
    # Nothing was: the session and the source are still there.
    assert http.get("/v1/sessions/s1/messages").json()["total"] == 1
    assert http.get("/v1/sources/notes/gate").status_code == 200


def test_a_body_that_is_no_json_is_refused_too_and_an_empty_one_passes(http):
    refused = http.post("/v1/check", content=b"repair=true",
                        headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert refused.status_code == 422 and "e.g. /v1/check?repair=..." in refused.json()["error"]["message"]
    assert http.post("/v1/check").status_code == 200
    assert http.post("/v1/check", json={}).status_code == 200
    assert http.post("/v1/check", params={"repair": "true"}).json()["ok"]  # the query parameters, as before
