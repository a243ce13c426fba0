"""The HTTP API against its own OpenAPI schema, a few generated requests per operation (a fixed seed): no 500,
every status documented, every answer of its documented content type, headers and model, with a tenant's key
and with an admin key. scripts/fuzz_api.py runs the long version. Skipped where Schemathesis is not installed
(the test extra installs it)."""

from __future__ import annotations

import httpx
import pytest

schemathesis = pytest.importorskip("schemathesis")

from hypothesis import HealthCheck, settings  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.specs.openapi.checks import (  # noqa: E402
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from agent_memory.api import create_app  # noqa: E402
from agent_memory.api.schemas_transfer import IMPORT_MEDIA_TYPES  # noqa: E402
from agent_memory.api.testing import serve_in_thread  # noqa: E402
from agent_memory.core.config import load_settings  # noqa: E402

TENANT_KEY, ADMIN_KEY = "key-acme-0123456789abcdef", "adm-0123456789abcdef"
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance,
          response_headers_conformance]
# An import's body is documented as JSON Lines, which Schemathesis sends as it sends text.
for _media_type in IMPORT_MEDIA_TYPES:
    if _media_type != "text/plain":
        schemathesis.serializer.alias(_media_type, "text/plain")


@pytest.fixture(scope="module")
def served_url(tmp_path_factory):
    data = tmp_path_factory.mktemp("schema-fuzz") / "data"
    settings_ = load_settings(data_dir=data, triple_extractor="rules", qdrant_url=None, neo4j_uri=None,
                              postgres_url=None, api_keys={TENANT_KEY: "acme"}, admin_keys=[ADMIN_KEY])
    with serve_in_thread(create_app(settings_, warm=False)) as url, httpx.Client(base_url=url, timeout=60) as http:
        key = {"X-API-Key": TENANT_KEY}
        for n, text in enumerate(("Gate 3 closes at 18:00.", "Maria moved the build farm to Bergen.")):
            assert http.post("/v1/documents", json={"source_id": f"notes/{n}", "text": text}, headers=key
                             ).status_code == 200
        for n in range(3):
            message = {"message": {"role": "user", "content": f"I park at gate {n}."}}
            assert http.post("/v1/sessions/s1/messages", json=message, headers=key).status_code == 200
        yield url


def _schema():
    """The app's own schema, as served, with a backup left out: it writes a copy of the data dir into whatever
    absolute folder it is sent."""
    app = create_app(load_settings(data_dir="/nonexistent/agent-memory-schema", api_keys={TENANT_KEY: "acme"},
                                   admin_keys=[ADMIN_KEY]), warm=False)
    return schemathesis.openapi.from_dict(app.openapi()).exclude(path="/v1/backup")


schema = _schema()


@schema.parametrize()
@settings(max_examples=5, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_operation_answers_as_its_schema_says_to_a_tenant_s_key(case, served_url):
    case.call_and_validate(base_url=served_url, headers={"X-API-Key": TENANT_KEY}, checks=CHECKS)


@schema.parametrize()
@settings(max_examples=5, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_operation_answers_as_its_schema_says_to_an_admin_key(case, served_url):
    case.call_and_validate(base_url=served_url, headers={"X-API-Key": ADMIN_KEY}, checks=CHECKS)
