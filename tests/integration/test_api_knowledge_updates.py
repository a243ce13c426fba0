"""Knowledge updates through the HTTP API: three moves of one person, 'where now' and 'where in March'."""

from __future__ import annotations

import os
import re

import httpx
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")

from agent_memory.api import create_app  # noqa: E402
from agent_memory.api.testing import serve_in_thread, wait_ready  # noqa: E402
from agent_memory.core.config import load_settings  # noqa: E402

MOVES = [("moves/2023-11", "2023-11-05", "Berlin"), ("moves/2024-02", "2024-02-10", "Lisbon"),
         ("moves/2024-06", "2024-06-20", "Porto")]


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    settings = load_settings(data_dir=tmp_path_factory.mktemp("api-updates"), triple_extractor="rules",
                             llm_model=None)
    with serve_in_thread(create_app(settings)) as url, httpx.Client(base_url=url, timeout=120) as http:
        wait_ready(http)
        for source_id, day, city in MOVES:
            sent = http.post("/v1/documents", json={"source_id": source_id, "text": f"Maria moved to {city}.",
                                                    "metadata": {"date": day}})
            assert sent.status_code == 200, sent.text
        yield http


def maria_facts(prompt: str) -> list[str]:
    section = prompt.split("## Known facts", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if re.match(r"- Maria — move to", line)]


def test_where_now_is_the_newest_move(client):
    body = client.post("/v1/ask", json={"question": "Where does Maria live now?", "budget": 3000,
                                        "question_date": "2024-08-01"}).json()
    facts = maria_facts(body["prompt"])
    assert len(facts) == 3, body["prompt"]
    assert "Porto (2024-06-20)" in facts[0] and "superseded" not in facts[0]
    assert all("superseded" in line for line in facts[1:])
    assert "Berlin (2023-11-05 to 2024-02-10, superseded)" in body["prompt"]  # kept, dated, marked


def test_where_in_march_is_the_move_valid_then(client):
    body = client.post("/v1/ask", json={"question": "Where did Maria live in March?", "budget": 3000,
                                        "question_date": "2024-08-01", }, params={"debug": "true"}).json()
    facts = maria_facts(body["prompt"])
    assert "Lisbon (2024-02-10 to 2024-06-20, superseded)" in facts[0], body["prompt"]
    assert any(d["stage"] == "facts" and "March" in d["target"] for d in body["debug"]["decisions"])
    # Switched off (current_facts_first): the graph route's order, nothing reordered, still marked.
    off = client.post("/v1/ask", json={"question": "Where did Maria live in March?", "budget": 3000,
                                       "question_date": "2024-08-01", "overrides": {"current_facts_first": False}},
                      params={"debug": "true"}).json()
    assert not any(d["stage"] == "facts" for d in off["debug"]["decisions"])
    assert len(maria_facts(off["prompt"])) == 3 and "superseded" in off["prompt"]


def test_upkeep_views_through_the_api(client):
    stats = client.get("/v1/stats").json()
    assert stats["sources"] == 3 and stats["items_per_kind"]["chunk"] == 3 and stats["triples"] >= 3
    assert stats["superseded_triples"] == 2 and 0 < stats["superseded_share"] < 1  # Berlin and Lisbon
    page = client.get("/v1/sources", params={"prefix": "moves/", "limit": 2}).json()
    assert [r["source_id"] for r in page["sources"]] == ["moves/2023-11", "moves/2024-02"]
    assert page["total"] == 3 and page["next_offset"] == 2  # every page together, and where the next starts
    last = client.get("/v1/sources", params={"prefix": "moves/", "limit": 2, "offset": 2}).json()
    assert [r["source_id"] for r in last["sources"]] == ["moves/2024-06"] and last["next_offset"] is None
    assert client.get("/v1/sources/", params={"prefix": "moves/", "limit": 2}).json() == page  # trailing slash
    found = client.get("/v1/sources/moves/2024-06").json()
    assert found["catalog"]["triples"] >= 1 and found["items"][0]["metadata"]["importance"] == 0.5
    assert found["items"][0]["metadata"]["date"] == "2024-06-20"
    assert client.get("/v1/sources/moves/none").status_code == 404
    assert client.post("/v1/gc").json() == {"expired": {"sources": 0, "items": 0, "triples": 0, "session_messages": 0}}  # nothing expires


def test_metadata_filter_through_the_api(client):
    body = client.post("/v1/ask", json={"question": "Where did Maria move?", "budget": 1200,
                                        "filters": {"metadata": {"date": ["2024-02-10"]}}}).json()
    assert {p["source_id"] for p in body["passages"]} == {"moves/2024-02"}
    bad = client.post("/v1/ask", json={"question": "Where?", "filters": {"metadata": {"date": {"after": 1}}}})
    assert bad.status_code == 400 and "gte" in bad.json()["error"]["message"]
