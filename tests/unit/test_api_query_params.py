"""The refusal of query parameters a route does not read (api/deps.py), on a small app: a list parameter
takes its repetitions as its values; a one-value parameter given twice, or an unknown one, is refused."""

from __future__ import annotations

from typing import Annotated

from fastapi import FastAPI, Query
from fastapi.testclient import TestClient

from agent_memory.api.deps import KNOWN_QUERY
from agent_memory.api.errors import install_error_handlers


def _client() -> TestClient:
    app = FastAPI(dependencies=[KNOWN_QUERY])
    install_error_handlers(app)

    @app.get("/tags")
    def tags(tag: Annotated[list[str] | None, Query()] = None, limit: int = 5) -> dict:
        return {"tag": tag, "limit": limit}

    return TestClient(app)


def test_a_list_parameter_takes_its_repetitions():
    assert _client().get("/tags?tag=a&tag=b&limit=2").json() == {"tag": ["a", "b"], "limit": 2}


def test_a_one_value_parameter_given_twice_is_refused():
    refused = _client().get("/tags?limit=2&limit=9")
    assert refused.status_code == 422
    assert "got 'limit' more than once" in refused.json()["error"]["message"]


def test_an_unknown_parameter_is_named_with_the_known_ones_and_no_value():
    refused = _client().get("/tags?tga=secret-value")
    message = refused.json()["error"]["message"]
    assert refused.status_code == 422 and "'tga' (did you mean 'tag'?)" in message
    assert "it takes the query parameters tag, limit" in message and "secret-value" not in message
