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



def test_the_hop_reads_its_first_texts_by_meaning_each_in_its_own_space(services, monkeypatch):
    embedder = services.embedder
    asked: list[tuple[str, list[str] | None]] = []
    embed_query = embedder.embed_query

    def spy(text, spaces=None):
        asked.append((text, None if spaces is None else list(spaces)))
        return embed_query(text, spaces)

    monkeypatch.setattr(embedder, "embed_query", spy)
    for overrides, expected in (({"hop_dense": False}, 0), ({"hop_dense_texts": 1}, 1)):
        asked.clear()
        with RetrievalPipeline.from_services(services, overrides={"second_hop": True, "hop_dense_scope": "candidates",
                                                                  **overrides}) as hop:
            result = hop.run(QUESTION, tenant="hop", budget=2000, debug=True)
        hop_texts = [(text, spaces) for text, spaces in asked if text != QUESTION]
        assert len(hop_texts) == expected and len(result.routes["hop"]) >= 1
        assert all(spaces == [embedder.space_for(text)] for text, spaces in hop_texts)
    # Read by meaning among the candidates, the answer is still the hop's best hit.
    [row] = [r for r in result.fused if r["source_id"] == "answer"]
    assert row["routes"]["hop"] == 1


def test_a_hop_text_by_meaning_is_compared_only_with_candidates_of_its_space():
    import numpy as np

    from agent_memory.core.records import MemoryItem, SearchFilter
    from agent_memory.retrieval.hop import _closest
    from agent_memory.retrieval.types import Candidate

    def cand(item_id: str, vector, space: str, tenant: str = "t") -> Candidate:
        c = Candidate(item=MemoryItem(id=item_id, tenant=tenant, source_id=item_id, kind="chunk", text=item_id))
        c.vector, c.vector_space = np.asarray(vector, dtype=np.float32), space
        return c

    pool = [cand("far", [0.0, 1.0], "en"), cand("near", [1.0, 0.0], "en"), cand("other-space", [1.0, 0.0], "zh"),
            cand("mid", [0.7, 0.7], "en"), cand("other-tenant", [1.0, 0.0], "en", tenant="u"),
            Candidate(item=MemoryItem(id="no-vector", tenant="t", source_id="x", kind="chunk", text="x"))]
    hits = _closest(pool, "en", np.array([1.0, 0.0], dtype=np.float32), SearchFilter(tenant="t"), limit=2)
    assert [h.item.id for h in hits] == ["near", "mid"]
    assert _closest(pool, "ja", np.array([1.0, 0.0]), SearchFilter(tenant="t"), limit=2) == []
