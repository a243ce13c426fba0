"""HTTP at its edges, over a real uvicorn server, as an operator's tools and a client's mistakes send it:
HEAD for health checks, unknown routes and methods, IDs that cannot be paths, bodies sent with the wrong
content type or nested past the JSON parser's own limit, another auth scheme, a client that hangs up.
Every answer says what was wrong and names the bad value; none is a 500."""

from __future__ import annotations

import logging
import os
import socket
import time

import httpx
import pytest

os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")

from agent_memory.api import create_app  # noqa: E402
from agent_memory.api.testing import serve_in_thread  # noqa: E402
from agent_memory.core.config import load_settings  # noqa: E402
from tests.helpers import api_error

KEYS = {"key-acme": "acme"}
USER = {"message": {"role": "user", "content": "The greenhouse pump was replaced on 2 March."}}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    settings = load_settings(data_dir=tmp_path_factory.mktemp("http-edges"), triple_extractor="none",
                             qdrant_url=None, neo4j_uri=None, postgres_url=None, api_keys=KEYS)
    app = create_app(settings, warm=False)
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=60,
                                                   headers={"X-API-Key": "key-acme"}) as http:
        yield http, url


@pytest.fixture
def client(server):
    return server[0]


@pytest.mark.parametrize("path", ["/healthz", "/debug", "/debug/static/debug.js", "/v1/stats", "/v1/sessions"])
def test_head_answers_as_get_without_a_body(client, path):
    got, head = client.get(path), client.head(path)
    assert head.status_code == got.status_code
    assert head.content == b""
    assert head.headers["content-type"] == got.headers["content-type"]


def test_an_unknown_route_and_a_wrong_method_are_named(client):
    assert "GET '/v1/nope'" in api_error(client.get("/v1/nope"), 404, "not_found")
    message = api_error(client.request("OPTIONS", "/v1/stats"), 405, "method_not_allowed")
    assert "OPTIONS" in message and "/v1/stats" in message and "GET" in message


def test_a_session_id_holding_an_encoded_slash_is_named(client):
    for response in (client.post("/v1/sessions/team%2Falpha/messages", json=USER),
                     client.delete("/v1/sessions/team%2Falpha")):
        assert "'team/alpha'" in api_error(response, 422, "invalid_request")


def test_a_path_that_is_not_utf8_is_refused_so_two_ids_never_become_one(client):
    for raw in ("%ff", "%fe"):
        message = api_error(client.post(f"/v1/sessions/{raw}/messages", json=USER), 400, "bad_request")
        assert raw in message
    assert client.get("/v1/sessions").json()["sessions"] == []


def test_a_session_id_with_a_control_character_is_refused(client):
    message = api_error(client.post("/v1/sessions/a%00b/messages", json=USER), 422, "invalid_request")
    assert "control characters" in message and "a\\x00b" in message


@pytest.mark.parametrize("content_type, shown", [("text/plain", "'text/plain'"),
                                                 ("application/x-www-form-urlencoded", "x-www-form-urlencoded"),
                                                 (None, "no content-type")])
def test_a_json_body_sent_as_another_type_is_415_naming_it(client, content_type, shown):
    headers = {"content-type": content_type} if content_type else {}
    response = client.post("/v1/sessions/s1/messages", content=b'{"message": {"role": "user", "content": "x"}}',
                           headers=headers)
    assert shown in api_error(response, 415, "unsupported_media_type")


def test_a_json_body_with_a_charset_is_read(client):
    response = client.post("/v1/sessions/charset/messages", content=b'{"message": {"role": "user", "content": "x"}}',
                           headers={"content-type": "application/json; charset=utf-8"})
    assert response.status_code == 200, response.text


def test_json_nested_past_the_parsers_own_limit_is_the_nesting_error(client):
    body = b"[" * 5000 + b"]" * 5000
    response = client.post("/v1/ask", content=body, headers={"content-type": "application/json"})
    assert "nested deeper than 100" in api_error(response, 400, "bad_request")


def test_another_authorization_scheme_is_named(server):
    _, url = server
    response = httpx.get(f"{url}/v1/stats", headers={"Authorization": "Basic a2V5LWFjbWU6"})
    assert "'Basic'" in api_error(response, 401, "unauthorized")
    assert response.headers["www-authenticate"] == "Bearer"


def test_a_client_that_hangs_up_mid_upload_is_no_server_error(server, caplog):
    _, url = server
    host, port = url.removeprefix("http://").split(":")
    head = (b'--XX\r\nContent-Disposition: form-data; name="file"; filename="cut.md"\r\n'
            b"Content-Type: text/markdown\r\n\r\n")
    caplog.set_level(logging.INFO, logger="agent_memory.api.errors")
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(b"POST /v1/documents HTTP/1.1\r\nHost: x\r\nX-API-Key: key-acme\r\n"
                     b"Content-Type: multipart/form-data; boundary=XX\r\nContent-Length: 1000000\r\n\r\n"
                     + head + b"word " * 1000)
    deadline = time.monotonic() + 30
    while not any("client disconnected" in r.getMessage() for r in caplog.records):
        assert time.monotonic() < deadline, [r.getMessage() for r in caplog.records]
        time.sleep(0.05)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert httpx.get(f"{url}/healthz").status_code == 200
