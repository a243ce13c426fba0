"""Hostile requests over a real uvicorn server: every known condition has its status, none is a 500.

Bad uploads → 400 ``unsupported_file`` with the reason; bodies over the limit → 413 on every
endpoint; malformed tool calls → 400 naming the field (and the session stays usable); a posted
document may not replace a source an uploaded file owns; what was stored stays retrievable.
"""

from __future__ import annotations

import json
import os
import threading

import httpx
import pytest

os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")

from agent_memory.api import create_app  # noqa: E402
from agent_memory.api.testing import serve_in_thread, wait_ready  # noqa: E402
from agent_memory.core.config import load_settings  # noqa: E402
from agent_memory.core.errors import StoreUnavailableError  # noqa: E402
from tests.helpers import api_error

MAX_BODY = 64 * 1024
HARBOUR = "The harbour of Velmora opened in 1892 and handles four million tonnes of grain a year."


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    settings = load_settings(data_dir=tmp_path_factory.mktemp("hostile-api"), triple_extractor="none",
                             qdrant_url=None, neo4j_uri=None, postgres_url=None)
    app = create_app(settings, max_upload_bytes=256 * 1024, max_body_bytes=MAX_BODY)
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=120) as http:
        wait_ready(http)
        up = http.post("/v1/documents", files={"file": ("harbour.md", HARBOUR.encode())},
                       data={"source_id": "harbour.md"})
        assert up.status_code == 200, up.text
        yield http, app


@pytest.fixture
def client(server):
    return server[0]


@pytest.mark.parametrize("name, content, reason", [
    ("wrong.json", json.dumps({"data": [1, 2, "x"]}).encode(), "data.0"),
    ("deep.json", b"[" * 100_000 + b"]" * 100_000, "nested deeper"),
    ("locomo.json", json.dumps({"conversation": {"session_1": [1]}}).encode(), "session_1.0"),
    ("binary.txt", bytes(range(256)) * 4, "binary content"),
    ("empty.md", b"", "empty file"),
    ("latin1.txt", "caf\xe9".encode("latin-1"), "invalid UTF-8"),
])
def test_bad_uploads_answer_400_with_the_reason(client, name, content, reason):
    message = api_error(client.post("/v1/documents", files={"file": (name, content)}), 400, "unsupported_file")
    assert reason in message


def test_every_endpoint_has_a_body_limit(client):
    big = "x" * (MAX_BODY + 1)
    api_error(client.post("/v1/sessions/s-big/messages", json={"message": {"role": "user", "content": big}}),
           413, "too_large")
    api_error(client.post("/v1/ask", json={"question": big}), 413, "too_large")
    # Without a Content-Length (chunked), the body is counted as it arrives.
    chunks = (json.dumps({"question": big}).encode()[i:i + 8192] for i in range(0, MAX_BODY + 100, 8192))
    api_error(client.post("/v1/ask", content=chunks, headers={"content-type": "application/json"}), 413, "too_large")
    assert client.get("/v1/sessions/s-big/view").status_code == 404  # nothing was stored


@pytest.mark.parametrize("message, field", [
    ({"role": "assistant", "content": None, "tool_calls": "zzz"}, "tool_calls"),
    ({"role": "assistant", "content": None, "tool_calls": [1, 2]}, "tool_calls[0]"),
    ({"role": "user", "content": [{"type": "tool_result", "content": "x"}]}, "tool_use_id"),
])
def test_malformed_tool_calls_are_refused_and_the_session_stays_usable(client, message, field):
    ok = client.post("/v1/sessions/s-tools/messages", json={"message": {"role": "user", "content": "hello"}})
    assert ok.status_code == 200, ok.text
    text = api_error(client.post("/v1/sessions/s-tools/messages", json={"message": message}), 400, "bad_request")
    assert field in text
    assert client.get("/v1/sessions/s-tools/view").status_code == 200
    assert client.post("/v1/sessions/s-tools/compact").status_code == 200


def test_a_posted_document_cannot_replace_an_uploaded_files_source(client):
    posted = client.post("/v1/documents", json={"source_id": "harbour.md", "text": "The harbour closed in 1950."})
    assert "belongs to" in api_error(posted, 400, "bad_request")
    answer = client.post("/v1/ask", json={"question": "When did the harbour of Velmora open?", "budget": 600})
    assert answer.status_code == 200 and "1892" in answer.json()["prompt"]
    assert "1950" not in answer.json()["prompt"]


def test_the_api_answers_503_while_a_store_is_down_and_recovers(server):
    http, app = server
    store = app.state.api.services.vectors
    names = ("search_dense", "search_sparse", "get", "scroll", "count", "existing_ids", "ids_for_source")

    def down(*_args, **_kwargs):
        raise StoreUnavailableError("vector store unreachable (connection refused)")

    for name in names:  # the real store's calls fail, as when its server went away
        setattr(store, name, down)
    try:
        question = {"question": "When did the harbour of Velmora open?", "budget": 600}
        assert "unreachable" in api_error(http.post("/v1/ask", json=question), 503, "store_unavailable")
        assert http.get("/readyz").status_code == 503
    finally:
        for name in names:
            delattr(store, name)
    assert http.get("/readyz").status_code == 200
    recovered = http.post("/v1/ask", json=question)
    assert recovered.status_code == 200 and "1892" in recovered.json()["prompt"]


def test_promotion_runs_off_the_request_path(server):
    http, app = server
    memory = app.state.api.memory.working_memory
    release = threading.Event()
    store = memory._store_turns

    def slow_store(turns):  # promotion held until released: the request must not wait for it
        release.wait(60)
        store(turns)

    memory._store_turns = slow_store
    try:
        before = memory.promoted
        text = "I prefer the X-300 sensor; we decided to order 40 units. " + "Detail. " * 5_000
        answered = http.post("/v1/sessions/s-promote/messages", json={"message": {"role": "user", "content": text},
                                                                      "retention": "strict"})
        assert answered.status_code == 200, answered.text
        assert memory.promoted == before  # answered while the promotion was still waiting
    finally:
        release.set()
        memory.flush()
        memory._store_turns = store
    assert memory.promoted == before + 1


@pytest.mark.parametrize("path", ["/v1/sessions/s-deep/messages", "/v1/ask", "/v1/documents"])
def test_a_deeply_nested_json_body_is_a_client_error(client, path):
    body = b'{"message": ' + b"[" * 30_000 + b"]" * 30_000 + b"}"  # under the body limit
    answered = client.post(path, content=body, headers={"content-type": "application/json"})
    assert answered.status_code in (400, 422), answered.text
    assert answered.json()["error"]["code"] in ("bad_request", "invalid_request")


@pytest.mark.parametrize("source_id", ["../x.txt", "/x.txt", "a/./b.txt", "a//b.txt", "notes/", "..", " "])
def test_a_source_id_with_a_root_or_dot_parts_is_refused_naming_it(client, source_id):
    # The default ID (the file's name) is normalized; an ID the client chose is refused, not rewritten.
    upload = client.post("/v1/documents", files={"file": ("x.txt", b"The Velmora lighthouse is red.")},
                         data={"source_id": source_id})
    assert repr(source_id) in api_error(upload, 422, "invalid_request")
    posted = client.post("/v1/documents", json={"source_id": source_id, "text": "The Velmora lighthouse is red."})
    assert repr(source_id) in api_error(posted, 422, "invalid_request")
    listed = client.get("/v1/sources").json()["sources"]
    assert not [r["source_id"] for r in listed if r["source_id"].endswith(".txt")]  # nothing was stored
