"""The speaker route: a question that names a speaker of the tenant finds that speaker's turns even
when the rest of the memory (documents, other conversations) fills the dense and keyword routes."""

from __future__ import annotations

import pytest

from agent_memory.core.records import Document, TurnRecord
from agent_memory.ingest.pipeline import IngestionPipeline
from agent_memory.retrieval.pipeline import RetrievalPipeline

TENANT = "crowded"
ANSWER = "crowded-chat/3"
# The dense and keyword routes are cut to a few hits, so the documents about painting (and about
# another Ann) fill them; the answer turn does not say "paint".
NARROW = {"dense": {"limit": 4}, "keyword": {"limit": 4}}


@pytest.fixture(scope="module")
def services(tmp_path_factory):
    from agent_memory.core.config import load_settings
    from agent_memory.services import build_services

    settings = load_settings(data_dir=tmp_path_factory.mktemp("speaker-route"), triple_extractor="none",
                             qdrant_url=None, neo4j_uri=None)
    with build_services(settings) as svc:
        ingestion = IngestionPipeline(svc)
        lines = [("Bob", "Morning Ann! How was the weekend?"),
                 ("Ann", "Busy, the garden took most of Saturday."),
                 ("Bob", "Did you get to the studio at all?"),
                 ("Ann", "Yes, I finished the one with the red tower by the sea, finally."),
                 ("Bob", "Can't wait to see it. Lunch on Friday?")]
        ingestion.ingest_turns([TurnRecord(session_id="crowded-chat", turn_id=str(n), speaker=who, text=text,
                                           tenant=TENANT, timestamp="2024-05-06")
                                for n, (who, text) in enumerate(lines)])
        ingestion.ingest_documents([
            Document(source_id=f"painter-{n}", tenant=TENANT, title=f"Painter {n}",
                     text=f"Painter {n} painted landscapes and a portrait of Ann, the painter's sister; the museum "
                          f"shows what painter {n} painted in oil on canvas between {1800 + n} and {1830 + n}.")
            for n in range(30)])
        yield svc


def candidates(services, question: str, overrides: dict) -> list[str]:
    with RetrievalPipeline.from_services(services, overrides=overrides) as pipeline:
        result = pipeline.run(question, tenant=TENANT, budget=1200, debug=True)
    return [c["source_id"] for c in result.fused]


def test_the_named_speakers_turns_are_candidates_when_documents_fill_the_routes(services):
    question = "What has Ann painted recently?"
    without = candidates(services, question, {**NARROW, "speakers": {"enabled": False}})
    assert ANSWER not in without  # the documents took every place of the narrowed routes
    with RetrievalPipeline.from_services(services, overrides=NARROW) as pipeline:
        result = pipeline.run(question, tenant=TENANT, budget=1200, debug=True)
    route = result.routes["speakers"]
    assert route and {row["source_id"] for row in route} == {"crowded-chat/1", "crowded-chat/3"}  # Ann's only
    assert ANSWER in [c["source_id"] for c in result.fused]  # a candidate: the reranker weighs it
    assert f"[S:{ANSWER}]" in result.prompt


def test_a_question_that_names_no_speaker_leaves_the_route_empty(services):
    with RetrievalPipeline.from_services(services, overrides=NARROW) as pipeline:
        result = pipeline.run("What did the painters paint?", tenant=TENANT, budget=800, debug=True)
    assert result.routes["speakers"] == []


def test_the_callers_own_speaker_filter_is_kept(services):
    # Asked about Ann, filtered to Bob's turns: the route adds none of Ann's.
    with RetrievalPipeline.from_services(services, overrides=NARROW) as pipeline:
        result = pipeline.run("What has Ann painted recently?", tenant=TENANT, budget=800, debug=True,
                              metadata={"speaker": "Bob"})
    assert result.routes["speakers"] == []
    assert ANSWER not in [c["source_id"] for c in result.fused]
