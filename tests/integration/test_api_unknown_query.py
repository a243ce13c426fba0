"""Every /v1 route refuses a query parameter it does not read (422 naming it and the ones the route takes)
instead of ignoring it: ``DELETE /v1/sessions/s1?froget=true`` once deleted the session and kept its archived
turns, answering 200, and ``POST /v1/check?repiar=true`` ran a plain check. Nothing is done; the refusal comes
before the API key's check, as a body's refusal does; liveness, readiness, the debug page and the API's
documentation take any query string as before."""

from __future__ import annotations

import httpx
import pytest

from agent_memory.api import create_app
from agent_memory.api.testing import serve_in_thread, wait_ready
from agent_memory.core.config import load_settings

KEY = {"X-API-Key": "key-acme"}


@pytest.fixture(scope="module")
def http(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("unknown-query") / "data"
    settings = load_settings(data_dir=data_dir, triple_extractor="rules", qdrant_url=None, neo4j_uri=None,
                             postgres_url=None, api_keys={"key-acme": "acme"})
    with serve_in_thread(create_app(settings)) as url, \
            httpx.Client(base_url=url, timeout=60, headers=KEY) as client:
        wait_ready(client)
        assert client.post("/v1/documents", json={"source_id": "notes/gate", "text": "Gate 3 closes at 18:00."}
                           ).status_code == 200
        assert client.post("/v1/sessions/typo1/messages",
                           json={"message": {"role": "user", "content": "I park at gate 3."}}).status_code == 200
        yield client


def _refusal(response) -> str:
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "invalid_request"
    message = response.json()["error"]["message"]
    assert "nothing was done" in message
    return message


def _untouched(http) -> None:
    assert http.get("/v1/sessions/typo1/messages").json()["total"] == 1
    assert http.get("/v1/sources/notes/gate").status_code == 200


def test_a_misspelt_forget_deletes_nothing_and_names_the_parameter(http):
    message = _refusal(http.delete("/v1/sessions/typo1", params={"froget": "true"}))
    assert "DELETE /v1/sessions/typo1 got an unknown query parameter: 'froget' (did you mean 'forget'?)" in message
    assert "; it takes the query parameter forget (nothing was done)" in message
    _untouched(http)


def test_a_misspelt_repair_runs_no_check(http):
    message = _refusal(http.post("/v1/check", params={"repiar": "true"}))
    assert "'repiar' (did you mean 'repair'?)" in message and "it takes the query parameters repair, adopt" in message
    assert http.post("/v1/check", params={"repair": "true"}).json()["ok"]  # the parameter it reads, as before


def test_a_route_without_options_refuses_any(http):
    message = _refusal(http.delete("/v1/sources/notes/gate", params={"x": "1"}))
    assert "'x'; it takes no query parameters" in message
    _untouched(http)


def test_an_import_names_no_tenant_in_its_query(http):
    export = http.get("/v1/export").content
    message = _refusal(http.post("/v1/import", params={"tenant": "globex"}, content=export,
                                 headers={"Content-Type": "application/x-ndjson"}))
    assert "POST /v1/import got an unknown query parameter: 'tenant'; it takes no query parameters" in message
    assert "globex" not in message  # a value is never echoed
    imported = http.post("/v1/import", content=export, headers={"Content-Type": "application/x-ndjson"})
    assert imported.status_code == 200, imported.text


def test_a_get_route_refuses_a_misspelt_filter_and_reads_its_own(http):
    message = _refusal(http.get("/v1/sources", params={"prefx": "notes/"}))
    assert "'prefx' (did you mean 'prefix'?)" in message and "prefix, kind, offset, limit" in message
    assert [s["source_id"] for s in http.get("/v1/sources", params={"prefix": "notes/"}).json()["sources"]] == [
        "notes/gate"]
    # HEAD runs as GET: refused alike.
    assert http.head("/v1/sources", params={"prefx": "notes/"}).status_code == 422


def test_a_one_value_parameter_given_twice_is_refused(http):
    message = _refusal(http.delete("/v1/sessions/typo1?forget=false&forget=true"))
    assert "got 'forget' more than once, and it takes one value" in message
    _untouched(http)


def test_many_and_huge_names_are_cut(http):
    query = "&".join(f"{'n' * 2000}{i}=v" for i in range(20))
    message = _refusal(http.get(f"/v1/stats?{query}"))
    assert "20 unknown query parameters" in message and "and 15 more" in message
    assert len(message) < 600


def test_the_refusal_comes_before_the_api_key_check(http):
    bare = httpx.post(http.base_url.join("/v1/check"), params={"repiar": "true"}, timeout=60)
    assert "'repiar'" in _refusal(bare)
    assert httpx.post(http.base_url.join("/v1/check"), params={"repair": "true"}, timeout=60).status_code == 401


@pytest.mark.parametrize("path", ["/healthz?probe=1", "/readyz?_=1", "/debug?q=where+is+gate+3",
                                  "/openapi.json?v=2", "/docs?x=1", "/redoc?x=1"])
def test_pages_outside_v1_take_any_query(http, path):
    assert http.get(path).status_code == 200
