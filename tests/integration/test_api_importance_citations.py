"""Memory over time through the HTTP API with the fake LLM (the paid endpoint is the only fake):
a source an answer cites gains importance (persisted in the vector store, seen by inspect) and then
ranks above an equal competitor; date ranges in the metadata filters of /v1/ask and /v1/prompt."""

from __future__ import annotations

import os

import httpx
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")

from agent_memory.answer import SYSTEM_PROMPT  # noqa: E402
from agent_memory.api import create_app  # noqa: E402
from agent_memory.api.testing import serve_in_thread, wait_ready  # noqa: E402
from agent_memory.core.config import load_settings  # noqa: E402
from tests.fake_openai import FakeOpenAI, Reply  # noqa: E402

QUESTION = "What is the door code of the Nordwerk storage room?"
# Two equal competitors: the same wording, each its own code; only importance can part them for long.
DOCS = [{"source_id": "codes/east", "text": "Nordwerk storage room door code: 4471.",
         "metadata": {"published": "2024-03-10"}},
        {"source_id": "codes/west", "text": "Nordwerk storage room door code: 9902.",
         "metadata": {"published": "2024-07-02T08:00:00Z"}}]
# A heavy importance weight for the ranking check: with two candidates, the similarity signals are
# z-scored over two values, so the slightest difference in wording is 2 standard deviations; one
# citation step (0.25 x 10 = 2.5) must outweigh it.
HEAVY = {"importance_signal": 10.0}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    cites: list[str] = []

    def respond(request: dict):
        messages = request.get("messages", [])
        if messages and messages[0].get("content") == SYSTEM_PROMPT:
            return Reply(text="The code is in the notes " + " ".join(f"[S:{sid}]" for sid in cites) + ".")
        return Reply(text="A short summary of the text.")

    with FakeOpenAI(responder=respond) as fake:
        settings = load_settings(data_dir=tmp_path_factory.mktemp("api-importance"), triple_extractor="rules",
                                 llm_model="fake-model", llm_base_url=fake.base_url, llm_max_retries=0,
                                 llm_timeout_s=10, api_keys={}, importance_citation_step=0.25)
        with serve_in_thread(create_app(settings)) as url, httpx.Client(base_url=url, timeout=120) as client:
            wait_ready(client)
            for doc in DOCS:
                response = client.post("/v1/documents", json=doc)
                assert response.status_code == 200, response.text
            yield client, cites


def importance(client, source_id: str) -> float:
    response = client.get(f"/v1/sources/{source_id}")
    assert response.status_code == 200, response.text
    values = {item["metadata"]["importance"] for item in response.json()["items"] if item["kind"] == "chunk"}
    assert len(values) == 1
    return values.pop()


def order(client) -> list[str]:
    """Source IDs by rerank score (the debug dump's candidates, before de-duplication)."""
    response = client.post("/v1/prompt", json={"question": QUESTION, "budget": 600, "overrides": HEAVY})
    assert response.status_code == 200, response.text
    return [row["source_id"] for row in response.json()["fused"] if row["source_id"] in ("codes/east", "codes/west")]


def test_a_cited_source_gains_importance_and_outranks_its_equal(server):
    client, cites = server
    assert importance(client, "codes/east") == importance(client, "codes/west") == 0.5
    # Cite whichever of the two ranks second now: after the answer it must rank first.
    loser = order(client)[1]
    other = next(s for s in ("codes/east", "codes/west") if s != loser)
    cites[:] = [loser, "codes/invented"]  # an invented citation raises nothing
    body = client.post("/v1/ask", json={"question": QUESTION, "budget": 600}).json()
    assert body["mode"] == "llm" and [c["source_id"] for c in body["citations"]] == [loser]
    assert importance(client, loser) == 0.75 and importance(client, other) == 0.5
    assert order(client)[0] == loser
    # The step is capped: two more citations stop at 1.0.
    for _ in range(2):
        client.post("/v1/ask", json={"question": QUESTION, "budget": 600})
    assert importance(client, loser) == 1.0 and importance(client, other) == 0.5
    # A retrieval-only answer (no citation) changes nothing.
    cites[:] = []
    client.post("/v1/ask", json={"question": QUESTION, "budget": 600})
    assert importance(client, other) == 0.5


def test_date_ranges_in_the_api_filters(server):
    client, _ = server

    def found(published) -> set[str]:
        response = client.post("/v1/prompt", json={"question": QUESTION, "budget": 600,
                                                   "filters": {"metadata": {"published": published}}})
        assert response.status_code == 200, response.text
        return {p["source_id"] for p in response.json()["passages"]}

    assert found({"gte": "2024-03-01", "lte": "2024-06-30"}) == {"codes/east"}
    assert found({"gte": "2024-07-02T07:00:00+00:00"}) == {"codes/west"}
    response = client.post("/v1/ask", json={"question": QUESTION,
                                            "filters": {"metadata": {"published": {"lte": "2024-06-31"}}}})
    assert response.status_code == 400 and "'2024-06-31'" in response.text
