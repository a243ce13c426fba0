"""The second hop on real stores (agent_memory/retrieval/hop.py): a paragraph that only a bridge name leads to."""

from __future__ import annotations

import pytest

from agent_memory.core.records import Document
from agent_memory.ingest.pipeline import IngestionPipeline
from agent_memory.retrieval.pipeline import RetrievalPipeline

QUESTION = "Who was the first president of the association which published the Journal of Widget Integration?"
BRIDGE = Document(source_id="journal", title="Journal of Widget Integration", tenant="hop",
                  text="The Journal of Widget Integration is a quarterly academic journal published by the "
                       "Quellmark Fellowship of Engineers. It was established in 1991.")
# The answer's paragraph is not the page of the bridge name (its title is another), and shares only
# "first president" with the question: the links cannot reach it, and the first round ranks it low.
ANSWER = Document(source_id="answer", title="Early engineering societies", tenant="hop",
                  text="The Quellmark Fellowship of Engineers was founded in Leeds in 1887. Its first president "
                       "was Orla Pennick, a bridge builder.")
DISTRACTORS = [
    Document(source_id=f"d{n}", title=f"Association {n}", tenant="hop",
             text=f"The first president of the {name} association was {person}, who also published its journal.")
    for n, (name, person) in enumerate([("rowing", "Ada Brin"), ("chess", "Tom Vell"), ("glass", "Ivo Rask"),
                                        ("weaving", "Lia Moor"), ("pottery", "Sam Oake"), ("botany", "Eve Tarn"),
                                        ("cycling", "Max Lode"), ("poetry", "Una Fitch"), ("sailing", "Ben Orr"),
                                        ("archery", "Kit Hale"), ("baking", "Rue Dane"), ("falconry", "Jo Pym")])
]


@pytest.fixture(scope="module")
def services(tmp_path_factory):
    from agent_memory.core.config import load_settings
    from agent_memory.services import build_services

    settings = load_settings(data_dir=tmp_path_factory.mktemp("hop") / "data", triple_extractor="rules",
                             qdrant_url=None, neo4j_uri=None)
    with build_services(settings) as svc:
        IngestionPipeline(svc).ingest_documents([BRIDGE, ANSWER, *DISTRACTORS])
        yield svc


def ranks(result) -> list[str]:
    return [row["source_id"] for row in result.fused]


def test_the_second_hop_follows_the_bridge_name_to_the_answer(services):
    with RetrievalPipeline.from_services(services, overrides={"second_hop": False}) as plain, \
            RetrievalPipeline.from_services(services, overrides={"second_hop": True}) as hop, \
            RetrievalPipeline.from_services(services, overrides={"second_hop": True, "hop_signal": 6.0}) as strong:
        before = plain.run(QUESTION, tenant="hop", budget=2000, debug=True)
        after = hop.run(QUESTION, tenant="hop", budget=2000, debug=True)
        lifted = strong.run(QUESTION, tenant="hop", budget=2000, debug=True)
    assert "hop" not in before.routes
    # Its own decisions and hits in the dump: the answer found by the bridge the journal's paragraph names.
    hop_rows = after.routes["hop"]
    assert any(r["source_id"] == "answer" and "Quellmark Fellowship of Engineers" in r["text"] for r in hop_rows)
    [row] = [r for r in after.fused if r["source_id"] == "answer"]
    assert "Quellmark Fellowship of Engineers" in row["note"] and "hop" in row["routes"]
    assert row["routes"]["hop"] == 1  # the hop's best hit: its search put it first
    # Every distractor shares "first president", "association" and "published" with the question, the
    # answer only "first president": the hop lifts it, and a strong enough hop signal to the top three.
    assert ranks(after).index("answer") < ranks(before).index("answer")
    assert ranks(lifted).index("answer") <= 2
    assert "hop" in after.timings_ms


def test_the_second_hop_keeps_to_the_callers_filter(services):
    with RetrievalPipeline.from_services(services, overrides={"second_hop": True, "hop_signal": 6.0}) as hop:
        result = hop.run(QUESTION, tenant="hop", budget=2000, debug=True, source_ids=["journal", "d0", "d1"])
        other = hop.run(QUESTION, tenant="default", budget=2000, debug=True)
    assert set(ranks(result)) <= {"journal", "d0", "d1"}
    assert not any(d.stage == "hop" and d.target == "answer" for d in result.decisions)
    assert not other.fused  # another tenant's memory holds nothing of these

