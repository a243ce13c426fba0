"""A misspelled key in a request body is a 422 naming it, on every route that takes a body.

A misspelled optional field once answered 200 with its default (``"budgt": 50`` asked with the default
budget; ``"filters": {"metdata": ...}`` filtered nothing): pydantic ignores keys a model does not
declare. Every request body is a ``ClosedBody`` (api/strict.py), nested models (filters) included.
The routes run over embedded stores without a model: the body is refused before any route runs.
"""

from __future__ import annotations

import os

import httpx
import pytest

os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")

from agent_memory.api import create_app  # noqa: E402
from agent_memory.api.testing import serve_in_thread  # noqa: E402
from agent_memory.core.config import load_settings  # noqa: E402
from tests.helpers import api_error  # noqa: E402

MESSAGE = {"role": "user", "content": "Order 40 units of the X-300."}

# (method, path, body with one misspelled optional key, that key, the key it should have been)
MISSPELLED = [
    ("POST", "/v1/ask", {"question": "Maria", "budgt": 50}, "budgt", "budget"),
    ("POST", "/v1/ask", {"question": "Maria", "filters": {"kind": ["chunk"]}}, "kind", "kinds"),
    ("POST", "/v1/prompt", {"question": "Maria", "budgt": 50}, "budgt", "budget"),
    ("POST", "/v1/prompt", {"question": "Maria", "filters": {"metdata": {"x": 1}}}, "metdata", "metadata"),
    ("POST", "/v1/search", {"query": "Maria", "limt": 3}, "limt", "limit"),
    ("POST", "/v1/search", {"query": "Maria", "filters": {"source_id": ["a"]}}, "source_id", "source_ids"),
    ("POST", "/v1/documents", {"source_id": "x", "text": "y", "titel": "t"}, "titel", "title"),
    ("POST", "/v1/sessions/typo/messages", {"message": MESSAGE, "retension": "strict"}, "retension", "retention"),
    ("PUT", "/v1/sessions/typo/config", {"window_token": 600}, "window_token", "window_tokens"),
]


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    settings = load_settings(data_dir=tmp_path_factory.mktemp("unknown-keys"), triple_extractor="none",
                             llm_model=None, qdrant_url=None, neo4j_uri=None, postgres_url=None)
    with serve_in_thread(create_app(settings, warm=False)) as url, httpx.Client(base_url=url, timeout=60) as http:
        yield http


@pytest.mark.parametrize("method, path, body, key, meant", MISSPELLED,
                         ids=[f"{m} {p} {k}" for m, p, _, k, _ in MISSPELLED])
def test_a_misspelled_optional_key_is_a_422_naming_it(client, method, path, body, key, meant):
    message = api_error(client.request(method, path, json=body), 422, "invalid_request")
    assert f"unknown key {key!r}" in message and f"did you mean {meant!r}" in message, message


def test_a_refused_body_changes_nothing(client):
    api_error(client.post("/v1/documents", json={"source_id": "kept-out", "text": "y", "metdata": {}}), 422)
    assert client.get("/v1/sources/kept-out").status_code == 404
    api_error(client.post("/v1/sessions/kept-out/messages", json={"message": MESSAGE, "retention": "strict",
                                                                  "agent": "a"}), 422)
    assert client.get("/v1/sessions/kept-out/view").status_code == 404


def test_every_unknown_key_is_named_with_the_known_ones(client):
    message = api_error(client.post("/v1/ask", json={"question": "Maria", "zz": 1, "yy": 2}), 422)
    assert "unknown keys 'zz', 'yy'" in message
    assert "known: question, session_id, budget, filters" in message


# Per-request retrieval settings (``overrides``): checked against the strict retrieval config, a 400 naming the
# key and the value given (tests/unit/test_ranking.py has each message whole), never a 500 or a quiet default.
BAD_OVERRIDES = [
    ({"rerank_topp": 5}, "rerank_topp: unknown key (did you mean 'rerank_top'?), got 5"),
    ({"dense": {"limt": 5}}, "dense.limt: unknown key (did you mean 'limit'?), got 5"),
    ({"chunk_weights": {"zz": 0.5}}, "chunk_weights.zz: unknown key (known: dense, "),
    ({"dense": {"limit": "many"}}, "dense.limit: Input should be a valid integer"),
    ({"dense": {"limit": True}}, "dense.limit: should be a number, not a boolean, got True"),
    ({"shares": "all"}, "shares: Input should be a valid dictionary"),
]


@pytest.mark.parametrize("path", ["/v1/ask", "/v1/prompt"])
@pytest.mark.parametrize("overrides, said", BAD_OVERRIDES, ids=[str(o) for o, _ in BAD_OVERRIDES])
def test_a_bad_retrieval_override_is_a_400_naming_the_key_and_value(client, path, overrides, said):
    message = api_error(client.post(path, json={"question": "Maria", "overrides": overrides}), 400,
                        "invalid_retrieval_settings")
    assert said in message and message.startswith("invalid retrieval settings for preset 'default': "), message
    if "many" in str(overrides):
        assert "got 'many'" in message


def test_overrides_that_are_not_an_object_are_the_bodys_422(client):
    message = api_error(client.post("/v1/ask", json={"question": "Maria", "overrides": ["dense"]}), 422,
                        "invalid_request")
    assert "overrides: Input should be a valid dictionary (got ['dense'])" in message


@pytest.mark.parametrize("value, said", [(True, "not a boolean (got True)"), ("500", "not a string (got '500')")])
@pytest.mark.parametrize("path", ["/v1/ask", "/v1/prompt"])
def test_a_number_sent_as_a_boolean_or_a_string_is_a_422_naming_it(client, path, value, said):
    message = api_error(client.post(path, json={"question": "Maria", "budget": value}), 422, "invalid_request")
    assert f"budget: should be a number, {said}" in message, message
    assert client.post(path, json={"question": "Maria", "budget": 500}).status_code == 200
