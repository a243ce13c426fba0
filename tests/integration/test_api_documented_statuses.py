"""Every refusal the API answers is listed among its operation's responses in ``/openapi.json``, with the error
model, so that a client generated from the schema knows it and a schema-driven check of the API finds none
undocumented (scripts/fuzz_api.py found each of these): an admin key on a tenant's route (403); what the app's
own layers refuse before a route's code runs: a body over the limit on any route (413), a path parameter not
UTF-8 or a JSON body not strict JSON (400), a body of another content type (415), a query parameter the route
does not read (422). A body sent without a content type is a 415 on every route that reads one, where a
document's and an import's were a 400 that the import did not list. A 405 names, in its message and its Allow
header, every method the path takes, where it named those of one route only (``PATCH /v1/sources``: DELETE).
The schema's pattern of a session ID takes the IDs the server takes, where it let through control characters
and blank IDs, which the server refuses; its presets are an enum of the names the server takes; a message needs a role, one of those the server takes, and carries no key that no role may carry. The import's documented example is an export that imports, where it
was a header cut short with '...' that the server refused. A store that stops answering is a 503 documented on
every operation that reads or writes one. A JSON body over the limit is a 413 before it is parsed, where a
malformed one on ``POST /v1/documents`` was read whole and answered 422."""

from __future__ import annotations

import json
import re
from contextlib import contextmanager
from urllib.parse import quote

import httpx
import pytest

from agent_memory.api import create_app
from agent_memory.api.testing import serve_in_thread
from agent_memory.core.config import load_settings
from agent_memory.core.errors import StoreUnavailableError
from tests.helpers import api_error

TENANT_KEY, ADMIN_KEY = "key-acme-0123456789abcdef", "adm-0123456789abcdef"
TENANT, ADMIN = {"X-API-Key": TENANT_KEY}, {"X-API-Key": ADMIN_KEY}
LIMIT = 2048
# The operations an admin key runs: the server-wide ones and the jobs it queued.
ADMIN_OPERATIONS = {("GET", "/v1/jobs/{job_id}"), ("POST", "/v1/check"), ("POST", "/v1/backup"),
                    ("DELETE", "/v1/tenants/{tenant}")}
PATH_VALUES = {"{session_id}": "s1", "{source_id}": "notes/a", "{job_id}": "j1", "{tenant}": "acme"}


# The /v1 operations whose request reaches no store that can stop answering: whoami reads the caller's key (held in
# memory); a backup refuses a deployment with stores on servers (400) before it queues its job in the job spool on the
# local disk, which keeps a job in memory when the disk refuses it.
NO_STORE_OPERATIONS = {("GET", "/v1/whoami"), ("POST", "/v1/backup")}


@pytest.fixture(scope="module")
def served_app(tmp_path_factory):
    data = tmp_path_factory.mktemp("documented-statuses") / "data"
    settings = load_settings(data_dir=data, triple_extractor="rules", qdrant_url=None, neo4j_uri=None,
                             postgres_url=None, api_keys={TENANT_KEY: "acme"}, admin_keys=[ADMIN_KEY])
    # Small body limits: a body over them is a few KiB.
    app = create_app(settings, warm=False, max_body_bytes=LIMIT, max_upload_bytes=LIMIT)
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=60) as http:
        yield http, http.get("/openapi.json").json(), app


@pytest.fixture(scope="module")
def served(served_app):
    http, schema, _ = served_app
    return http, schema


def _documented(schema: dict, method: str, path: str, status: int) -> None:
    responses = schema["paths"][path][method.lower()]["responses"]
    assert str(status) in responses, f"{method} {path} answers {status}, documented: {sorted(responses)}"
    assert responses[str(status)]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ErrorOut"}


def _tenant_routes(schema: dict) -> list[tuple[str, str]]:
    """Every /v1 operation an admin key does not run: all but the jobs it reads and the server-wide ones."""
    return [(method, path) for method, path in _operations(schema) if path.startswith("/v1/")
            and (method, path) not in ADMIN_OPERATIONS]


def _operations(schema: dict) -> list[tuple[str, str]]:
    return [(method.upper(), path) for path, operations in schema["paths"].items() for method in operations]


def _concrete(path: str) -> str:
    for name, value in PATH_VALUES.items():
        path = path.replace(name, value)
    return path


def test_an_admin_key_on_a_tenant_s_route_is_a_documented_403(served):
    http, schema = served
    routes = _tenant_routes(schema)
    assert len(routes) >= 20 and ("GET", "/v1/whoami") in routes and ("POST", "/v1/ask") in routes
    for method, path in routes:
        message = api_error(http.request(method, _concrete(path), headers=ADMIN), 403, "forbidden")
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


def test_what_the_app_s_own_layers_refuse_is_documented_on_every_operation_they_reach(served):
    http, schema = served
    operations = _operations(schema)
    assert len(operations) >= 29
    for method, path in operations:
        headers = ADMIN if (method, path) in ADMIN_OPERATIONS else TENANT
        url = _concrete(path)
        kind = "application/x-ndjson" if path == "/v1/import" else "application/json"
        too_large = http.request(method, url, content=b'{"text": "%s"}' % (b"x" * LIMIT),
                                 headers={**headers, "Content-Type": kind})
        assert "exceeds the limit" in api_error(too_large, 413, "too_large")
        _documented(schema, method, path, 413)
        if "{" in path:
            not_utf8 = path[:path.index("{")] + "%ff" + path[path.index("}") + 1:]
            not_utf8 = _concrete(not_utf8)
            assert "%ff" in api_error(http.request(method, not_utf8, headers=headers), 400, "bad_request")
            _documented(schema, method, path, 400)
        if method in ("POST", "PUT"):
            nan = http.request(method, url, content=b'{"a": NaN}', headers={**headers, "Content-Type": "application/json"})
            assert "NaN" in api_error(nan, 400, "bad_request")
            _documented(schema, method, path, 400)
            if "requestBody" in schema["paths"][path][method.lower()]:
                xml = http.request(method, url, content=b"<a/>", headers={**headers, "Content-Type": "text/xml"})
                assert "'text/xml'" in api_error(xml, 415, "unsupported_media_type")
                _documented(schema, method, path, 415)
        if path.startswith("/v1/"):
            unknown = http.request(method, url, params={"frobnicate": "1"}, headers=headers)
            assert "'frobnicate'" in api_error(unknown, 422, "invalid_request")
            _documented(schema, method, path, 422)


@pytest.mark.parametrize("method, path, allowed", [
    ("PATCH", "/v1/sources", "DELETE, GET, HEAD"), ("OPTIONS", "/v1/sources/notes/a", "DELETE, GET, HEAD"),
    ("PATCH", "/v1/sessions/s1/messages", "GET, HEAD, POST"), ("OPTIONS", "/v1/sessions/s1/config", "GET, HEAD, PUT"),
    ("POST", "/v1/whoami", "GET, HEAD"), ("PUT", "/v1/ask", "POST"),
])
def test_a_method_a_path_does_not_take_is_405_naming_every_method_it_does(served, method, path, allowed):
    http, _ = served
    response = http.request(method, path, headers=TENANT)
    assert f"(allowed: {allowed})" in api_error(response, 405, "method_not_allowed")
    assert response.headers["allow"] == allowed


@pytest.mark.parametrize("session_id, valid", [
    ("s1", True), ("team alpha", True), ("café 🙂", True), (" padded ", True), ("a\x07b", False), ("a\x85b", False),
    ("\x7f", False), ("   ", False), ("\t", False), ("a/b", False)])
def test_the_schema_s_session_id_pattern_takes_exactly_the_ids_the_server_takes(served, session_id, valid):
    http, schema = served
    parameter = schema["paths"]["/v1/sessions/{session_id}/messages"]["get"]["parameters"][0]
    assert parameter["name"] == "session_id"
    for pattern in (parameter["schema"]["pattern"], schema["components"]["schemas"]["AskIn"]["properties"]
                    ["session_id"]["pattern"], schema["components"]["schemas"]["SearchIn"]["properties"]
                    ["session_id"]["pattern"]):
        assert bool(re.search(pattern, session_id)) is valid
    answer = http.get(f"/v1/sessions/{quote(session_id, safe='')}/messages", headers=TENANT)
    assert answer.status_code == (404 if valid else 422), answer.text
    answer = http.post("/v1/search", json={"query": "gate", "session_id": session_id}, headers=TENANT)
    assert answer.status_code in ((200,) if valid else (400, 422)), answer.text


def test_the_schema_s_presets_are_the_names_the_server_takes(served):
    http, schema = served
    string = next(part for part in schema["components"]["schemas"]["AskIn"]["properties"]["preset"]["anyOf"]
                  if part.get("type") == "string")
    for name in string["enum"]:
        assert http.post("/v1/prompt", json={"question": "gate", "preset": name}, headers=TENANT).status_code == 200
    message = api_error(http.post("/v1/prompt", json={"question": "gate", "preset": "nope"}, headers=TENANT), 400)
    assert f"unknown retrieval preset 'nope'; known: {', '.join(string['enum'])}" in message


def test_the_schema_s_message_needs_a_role_of_those_the_server_takes(served):
    http, schema = served
    message = schema["components"]["schemas"]["MessageIn"]["properties"]["message"]
    assert message["required"] == ["role"]
    roles = message["properties"]["role"]["enum"]
    for body in ({"content": "hello"}, {"role": "narrator", "content": "hello"}):
        refused = http.post("/v1/sessions/roles/messages", json={"message": body}, headers=TENANT)
        assert f"message role must be one of {tuple(roles)}" in api_error(refused, 400, "bad_request")
    for role in ("user", "assistant", "system", "developer"):
        sent = {"message": {"role": role, "content": "hello"}}
        assert http.post("/v1/sessions/roles/messages", json=sent, headers=TENANT).status_code == 200
    # Its keys are those some role may carry; another is refused, named.
    assert message["additionalProperties"] is False
    assert set(message["properties"]) == {"role", "content", "name", "timestamp", "tool_calls", "refusal", "tool_call_id"}
    refused = http.post("/v1/sessions/roles/messages", json={"message": {"role": "user", "content": "x", "mood": "ok"}},
                        headers=TENANT)
    assert "'mood'" in api_error(refused, 400, "bad_request")


def test_the_documented_import_example_imports(served):
    http, schema = served
    content = schema["paths"]["/v1/import"]["post"]["requestBody"]["content"]
    for media_type, entry in content.items():
        answer = http.post("/v1/import", content=entry["example"].encode(),
                           headers={**TENANT, "Content-Type": media_type})
        assert answer.status_code == 200, answer.text
        report = answer.json()
        assert report["complete"] and not report["skipped"] and report["sources_written"] + report["sources_unchanged"] == 1
    assert "X-300" in http.get("/v1/sources/notes/greenhouse", params={"full": "true"}, headers=TENANT).text


@contextmanager
def stores_stop_answering(app):
    """Every call of each store (vectors, graph, catalog, sessions) raises as a store whose server went away
    (the drivers raise StoreUnavailableError), until the block ends."""
    state = app.state.api
    stores = [state.services.vectors, state.services.graph, state.services.catalog, state.services.sessions.store]

    def down(*_args, **_kwargs):
        raise StoreUnavailableError("store unreachable (connection refused)")

    patched = []
    for store in stores:
        for name in dir(type(store)):
            if not name.startswith("_") and name != "close" and callable(getattr(type(store), name)):
                setattr(store, name, down)
                patched.append((store, name))
    try:
        yield
    finally:
        for store, name in patched:
            delattr(store, name)


@pytest.mark.parametrize("method, path, url, body", [
    ("POST", "/v1/ask", "/v1/ask", {"question": "When did the gate open?"}),
    ("POST", "/v1/documents", "/v1/documents", {"source_id": "notes/down", "text": "The gate opened in 1892."}),
    ("POST", "/v1/sessions/{session_id}/messages", "/v1/sessions/down/messages",
     {"message": {"role": "user", "content": "hello"}}),
    ("GET", "/v1/sources", "/v1/sources", None),
])
def test_a_store_that_stops_answering_is_a_documented_503(served_app, method, path, url, body):
    http, schema, app = served_app
    with stores_stop_answering(app):
        answer = http.request(method, url, json=body, headers=TENANT)
    assert "unreachable" in api_error(answer, 503, "store_unavailable")
    _documented(schema, method, path, 503)
    assert http.request(method, url, json=body, headers=TENANT).status_code == 200  # and answers once it is back


def test_every_operation_that_reaches_a_store_documents_503(served):
    _, schema = served
    operations = [(method, path) for method, path in _operations(schema) if path.startswith("/v1/")]
    assert NO_STORE_OPERATIONS <= set(operations) and len(operations) >= 25
    for method, path in operations:
        if (method, path) not in NO_STORE_OPERATIONS:
            _documented(schema, method, path, 503)
    assert all("503" not in schema["paths"][path][method.lower()]["responses"] for method, path in NO_STORE_OPERATIONS)


@pytest.mark.parametrize("path", ["/v1/documents", "/v1/import", "/v1/ask", "/v1/sessions/{session_id}/messages"])
def test_a_malformed_json_body_over_the_limit_is_413_before_it_is_parsed(served, path):
    http, schema = served
    documented, path = path, _concrete(path)
    malformed = b'{"text": "' + b"x" * (2 * LIMIT)  # no closing quote nor brace
    json_type = {**TENANT, "Content-Type": "application/json"}
    declared = http.post(path, content=malformed, headers=json_type)
    assert f"exceeds the limit of {LIMIT} bytes" in api_error(declared, 413, "too_large")
    # Without a Content-Length (chunked), counted as it arrives.
    chunked = http.post(path, content=iter([malformed[:LIMIT], malformed[LIMIT:]]), headers=json_type)
    assert "content-length" not in chunked.request.headers
    assert f"exceeds the limit of {LIMIT} bytes" in api_error(chunked, 413, "too_large")
    _documented(schema, "POST", documented, 413)
    # Under the limit, the same malformed JSON is still refused as such.
    assert "malformed JSON" in api_error(http.post(path, content=malformed[:LIMIT // 2], headers=json_type), 422)
    assert json.loads(http.get("/v1/whoami", headers=TENANT).text) == {"tenant": "acme"}
