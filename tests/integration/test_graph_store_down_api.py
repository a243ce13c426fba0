"""The graph store (Neo4j) away, through HTTP, with real parts: settings whose Neo4j URI is a loopback port where
nothing listens, so the driver's connection is refused at once. The API still starts (in process, and as
`agent-memory serve` in its own process: no crash loop while Neo4j is down); /healthz says the process is up,
/readyz says 503 naming the graph store; a question (/v1/ask, /v1/prompt, /v1/search) and a write that
reaches the graph answer 503 ``store_unavailable`` naming Neo4j within seconds, not after the driver's
retries, and never a prompt silently without the graph. No Neo4j server is needed."""

from __future__ import annotations

import os
import socket
import time

import httpx
import pytest

os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")

from agent_memory.api import create_app  # noqa: E402
from agent_memory.api.testing import serve_in_subprocess, serve_in_thread  # noqa: E402
from agent_memory.core.config import load_settings  # noqa: E402
from agent_memory.core.version import __version__  # noqa: E402
from tests.helpers import api_error  # noqa: E402

pytest.importorskip("neo4j")  # the `servers` extra: without it a Neo4j URI is a config error, tested elsewhere

QUESTION = {"question": "When did the harbour of Velmora open?", "budget": 600}


def dead_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def settled(http: httpx.Client, timeout: float = 300.0) -> httpx.Response:
    """/readyz once the warm-up ended (the model loaded or failed): until then it says "loading"."""
    deadline = time.monotonic() + timeout
    while True:
        answer = http.get("/readyz")
        if answer.status_code == 200 or answer.json().get("checks", {}).get("model") != "loading":
            return answer
        assert time.monotonic() < deadline, answer.text
        time.sleep(0.25)


def graph_down_named(answer: httpx.Response, uri: str) -> None:
    assert answer.status_code == 503, answer.text
    body = answer.json()
    assert body["error"]["code"] == "not_ready" and "graph: failed" in body["error"]["message"], body
    assert body["checks"]["graph"].startswith("failed: StoreUnavailableError: Neo4j at " + uri), body
    assert body["checks"]["catalog"] == "ok" and body["checks"]["vectors"] == "ok", body


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    uri = f"bolt://127.0.0.1:{dead_port()}"
    settings = load_settings(data_dir=tmp_path_factory.mktemp("graph-down"), triple_extractor="rules",
                             llm_model=None, qdrant_url=None, neo4j_uri=uri, postgres_url=None)
    with serve_in_thread(create_app(settings)) as url, httpx.Client(base_url=url, timeout=120) as http:
        yield http, uri


def test_the_api_starts_and_says_the_graph_store_is_down(served):
    http, uri = served
    assert http.get("/healthz").json() == {"status": "ok", "version": __version__}
    graph_down_named(settled(http), uri)


@pytest.mark.parametrize("path, body", [("/v1/ask", QUESTION), ("/v1/prompt", QUESTION),
                                        ("/v1/search", {"query": "harbour of Velmora"})])
def test_a_question_answers_503_naming_the_graph_store_at_once(served, path, body):
    http, uri = served
    settled(http)
    started = time.monotonic()
    message = api_error(http.post(path, json=body), 503, "store_unavailable")
    assert time.monotonic() - started < 10  # the driver's retries once took 33-63 s to say so
    assert message.startswith(f"Neo4j at {uri} is unavailable") and "Connection refused" in message, message


def test_a_write_that_reaches_the_graph_answers_503_and_is_done_again_by_the_next_write(served):
    http, uri = served
    settled(http)
    posted = http.post("/v1/documents", json={"source_id": "harbour.md",
                                              "text": "The harbour of Velmora opened in 1892."})
    assert api_error(posted, 503, "store_unavailable").startswith(f"Neo4j at {uri} is unavailable")
    # The refused write takes back the text it had stored (it was searchable once Neo4j answered, with no
    # catalog entry); with no entry, a retry once Neo4j is back writes the source whole.
    api_error(http.get("/v1/sources/harbour.md"), 404, "not_found")
    # Nor does the refused document hold its ID: a file may take it (its claim was released with its text).
    upload = http.post("/v1/documents", files={"file": ("harbour.md", b"the tide was low and the boats stayed in.")})
    assert upload.status_code == 200 and upload.json()["report"]["files_ingested"] == 1, upload.text


def test_a_write_refused_for_the_graph_keeps_the_version_stored_before(served):
    """The new version's text was stored, then the earlier version's pieces deleted, then the graph refused:
    the source held text its catalog entry did not know, and lost the one it did."""
    http, uri = served
    settled(http)
    before = http.post("/v1/documents", json={"source_id": "tides.md", "text": "the tide was low and the boats "
                                              "stayed in."})  # no fact in it: the graph is not asked
    assert before.status_code == 200, before.text
    stored = http.get("/v1/sources/tides.md").json()
    posted = http.post("/v1/documents", json={"source_id": "tides.md",
                                              "text": "The lighthouse of Velmora was painted white in 1901."})
    assert api_error(posted, 503, "store_unavailable").startswith(f"Neo4j at {uri} is unavailable")
    after = http.get("/v1/sources/tides.md").json()
    assert after == stored  # its catalog entry and its items, as they were
    assert [item["text"] for item in after["items"]] == ["the tide was low and the boats stayed in."]


def test_serve_starts_while_neo4j_is_away_and_reports_it(tmp_path):
    """`agent-memory serve` with Neo4j away at its start: the process stays up and says what is down (an
    orchestrator restarting it would not bring Neo4j back), and answers 503 until Neo4j is there."""
    uri = f"bolt://127.0.0.1:{dead_port()}"
    env = {"AGENT_MEMORY_NEO4J_URI": uri, "AGENT_MEMORY_TRIPLE_EXTRACTOR": "none", "AGENT_MEMORY_LLM_MODEL": "",
           "AGENT_MEMORY_QDRANT_URL": None, "AGENT_MEMORY_POSTGRES_URL": None, "AGENT_MEMORY_API_KEYS": None,
           "AGENT_MEMORY_TENANT": None}
    with serve_in_subprocess(tmp_path / "data", env, log=tmp_path / "serve.log") as url, \
            httpx.Client(base_url=url, timeout=60) as http:
        graph_down_named(settled(http), uri)
        assert api_error(http.post("/v1/ask", json=QUESTION), 503, "store_unavailable").startswith(f"Neo4j at {uri}")
        assert http.get("/healthz").status_code == 200  # still up after the failures
