"""Every refusal the API answers is listed among its operation's responses in ``/openapi.json``, with the error
model, so that a client generated from the schema knows it and a schema-driven check of the API finds none
undocumented (scripts/fuzz_api.py found each of these): an admin key on a tenant's route (403). A body sent
without a content type is a 415 on every route that reads one, where a document's and an import's were a 400
that the import did not list."""

from __future__ import annotations

import httpx
import pytest

from agent_memory.api import create_app
from agent_memory.api.testing import serve_in_thread
from agent_memory.core.config import load_settings
from tests.helpers import api_error

TENANT_KEY, ADMIN_KEY = "key-acme-0123456789abcdef", "adm-0123456789abcdef"
TENANT, ADMIN = {"X-API-Key": TENANT_KEY}, {"X-API-Key": ADMIN_KEY}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    data = tmp_path_factory.mktemp("documented-statuses") / "data"
    settings = load_settings(data_dir=data, triple_extractor="rules", qdrant_url=None, neo4j_uri=None,
                             postgres_url=None, api_keys={TENANT_KEY: "acme"}, admin_keys=[ADMIN_KEY])
    with serve_in_thread(create_app(settings, warm=False)) as url, httpx.Client(base_url=url, timeout=60) as http:
        yield http, http.get("/openapi.json").json()


def _documented(schema: dict, method: str, path: str, status: int) -> None:
    responses = schema["paths"][path][method.lower()]["responses"]
    assert str(status) in responses, f"{method} {path} answers {status}, documented: {sorted(responses)}"
    assert responses[str(status)]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ErrorOut"}


def _tenant_routes(schema: dict) -> list[tuple[str, str]]:
    """Every /v1 operation an admin key does not run: all but the jobs it reads and the server-wide ones."""
    own = {("GET", "/v1/jobs/{job_id}"), ("POST", "/v1/check"), ("POST", "/v1/backup"),
           ("DELETE", "/v1/tenants/{tenant}")}
    return [(method.upper(), path) for path, operations in schema["paths"].items() if path.startswith("/v1/")
            for method in operations if (method.upper(), path) not in own]


def test_an_admin_key_on_a_tenant_s_route_is_a_documented_403(served):
    http, schema = served
    routes = _tenant_routes(schema)
    assert len(routes) >= 20 and ("GET", "/v1/whoami") in routes and ("POST", "/v1/ask") in routes
    for method, path in routes:
        concrete = path.replace("{session_id}", "s1").replace("{source_id}", "notes/a")
        message = api_error(http.request(method, concrete, headers=ADMIN), 403, "forbidden")
        assert "an admin key reaches none" in message
        _documented(schema, method, path, 403)
    # A server-wide operation is the admin key's: no 403 there.
    assert http.post("/v1/check", headers=ADMIN).status_code in (200, 202)


@pytest.mark.parametrize("path", ["/v1/documents", "/v1/import", "/v1/ask", "/v1/sessions/s1/messages"])
def test_a_body_without_a_content_type_is_415_on_every_route_that_reads_one(served, path):
    http, _ = served
    response = http.post(path, content=b'{"text": "x"}', headers=TENANT)
    assert "content-type" not in response.request.headers
    message = api_error(response, 415, "unsupported_media_type")
    assert "no content-type" in message
