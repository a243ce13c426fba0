"""An assistant's acknowledgement is read alone: on real stores and embeddings through the served default, "Okay,
noted." after the user's "Finished reading Pachinko last night." takes neither that turn's similarity (its
turn-context vector) nor a share of its score, so the prompt's room goes to what the user said
(agent_memory/retrieval/rerank/signals.py ``read_alone``, the config's ``context_read_alone``)."""

from __future__ import annotations

import pytest

from agent_memory.core.records import TurnRecord
from agent_memory.evaluation.metric import cited_ids
from agent_memory.ingest.pipeline import IngestionPipeline
from agent_memory.retrieval.config import load_preset
from agent_memory.retrieval.pipeline import RetrievalPipeline

# Sessions of (user, assistant) pairs: the user's doings of one kind weeks apart, the assistant's acknowledgements.
PAIRS = {
    "en": [("Finished reading Pachinko last night.", "Okay, noted."),
           ("Went to the Hozier gig yesterday, still buzzing.", "Sure, saved."),
           ("Just got to the end of The Overstory, what an ending.", "Got it, I'll remember that."),
           ("Did my first judo class this morning.", "Okay, noted."),
           ("Read Circe on the train this week, couldn't put it down.", "Sure, saved.")],
    "zh": [("昨晚读完了《活着》。", "好的，记下了。"),
           ("昨天去了五月天的演唱会，现在还很兴奋。", "收到，我记住了。"),
           ("终于把《围城》看完了，结尾太震撼了。", "好的，已经记录。"),
           ("今天上午上了第一节柔道课。", "好的，记下了。"),
           ("这周在地铁上读了《白夜行》，根本停不下来。", "收到，我记住了。")],
}
QUESTIONS = {"en": "Which books have I read?", "zh": "我读过哪些书？"}
BOOKS = {"en": ["s-0/t0", "s-2/t0", "s-4/t0"], "zh": ["s-0/t0", "s-2/t0", "s-4/t0"]}


@pytest.fixture
def ingested(services):
    pipeline = IngestionPipeline(services)
    for tenant, pairs in PAIRS.items():
        pipeline.ingest_turns([
            TurnRecord(session_id=f"s-{i}", turn_id=f"t{j}", speaker=speaker, text=text, tenant=tenant,
                       timestamp=f"2024/0{i + 1}/02 (Tue) 19:0{j}")
            for i, pair in enumerate(pairs) for j, (speaker, text) in enumerate(zip(("user", "assistant"), pair))])
    return services


def _run(services, tenant: str, config, budget: int):
    with RetrievalPipeline(services, config) as pipe:
        return pipe.run(QUESTIONS[tenant], tenant=tenant, budget=budget, debug=True)


@pytest.mark.parametrize("tenant", ["en", "zh"])
def test_the_assistants_acknowledgements_rank_below_every_statement_of_the_user(ingested, tenant):
    served = {row["source_id"]: row["rerank"] for row in _run(ingested, tenant, load_preset("default"), 400).fused}
    read_after = {row["source_id"]: row["rerank"]
                  for row in _run(ingested, tenant, load_preset("default", context_read_alone=[]), 400).fused}
    books, acks = BOOKS[tenant], [b.replace("/t0", "/t1") for b in BOOKS[tenant]]
    assert max(served[a] for a in acks) < min(served[b] for b in books), served
    # Read after the best book, its acknowledgement rode on that book's similarity and score; read alone it does not.
    best = max(books, key=served.get)
    assert served[best.replace("/t0", "/t1")] < read_after[best.replace("/t0", "/t1")] - 1.0, (served, read_after)


@pytest.mark.parametrize("tenant", ["en", "zh"])
def test_a_small_prompt_holds_every_book(ingested, tenant):
    cited = cited_ids(_run(ingested, tenant, load_preset("default"), 260).prompt)
    assert set(BOOKS[tenant]) <= set(cited), cited
