"""A question in the first person asks about its asker: on real stores, embeddings and the rule-based extractors
through the served default, the user's own statement ranks above what they told of others in the same words
(agent_memory/index/told_of.py, the reranker's ``others_told``)."""

from __future__ import annotations

import pytest

from agent_memory.core.records import TurnRecord
from agent_memory.index.told_of import TOLD_OF
from agent_memory.ingest.pipeline import IngestionPipeline
from agent_memory.retrieval.config import load_preset
from agent_memory.retrieval.pipeline import RetrievalPipeline
from tests.helpers import ingest_user_statements

ASKED = "2024/04/07 (Sun) 10:00"
# Per tenant: the user's own statement first, then what they told of others in the same words.
TOLD = {
    "en": ["My new manager is Fazle Newcombe.",
           "Helen Shank's new manager is Daniel Alessandrini.",
           "Kate Nguyen reports to Bob Yilmaz now.",
           "Tom Riley has a new manager, Ann Cole."],
    "zh": ["我的新领导是于华中。",
           "高卢的新领导是卢马纳。",
           "徐林强的新领导是李灵曜。"],
}


@pytest.fixture
def ingested(services):
    ingest_user_statements(services, TOLD)
    return services


def _told_of(services, tenant: str) -> dict[str, list[str] | None]:
    ids = [i for n in range(len(TOLD[tenant])) for i in services.vectors.ids_for_source(tenant, f"s-{n}/t0")]
    return {item.source_id: item.metadata.get(TOLD_OF) for item in services.vectors.get(ids)}


def test_ingestion_records_whom_a_turn_tells_of(ingested):
    assert _told_of(ingested, "en") == {"s-0/t0": None, "s-1/t0": ["Helen Shank"], "s-2/t0": ["Kate Nguyen"],
                                        "s-3/t0": ["Tom Riley"]}
    assert _told_of(ingested, "zh") == {"s-0/t0": None, "s-1/t0": ["高卢"], "s-2/t0": ["徐林强"]}


@pytest.mark.parametrize("tenant, question", [("en", "Who is my manager?"), ("zh", "我的领导是谁？")])
def test_a_question_about_the_asker_ranks_their_own_statement_first(ingested, tenant, question):
    def ranked(config) -> dict[str, float]:
        with RetrievalPipeline(ingested, config) as pipe:
            result = pipe.run(question, tenant=tenant, budget=400, debug=True, question_date=ASKED)
        return {row["source_id"]: row["rerank"] for row in result.fused}

    served, plain = ranked(load_preset("default")), ranked(load_preset("default", others_told=0.0))
    assert max(served, key=served.get) == "s-0/t0", served
    told = _told_of(ingested, tenant)
    for source_id, score in served.items():  # exactly the penalty, on exactly the turns that tell of others
        assert score == pytest.approx(plain[source_id] - (6.0 if told[source_id] else 0.0)), source_id


def test_a_question_about_someone_else_is_left_as_the_words_rank_it(ingested):
    def scores(config) -> dict[str, float]:
        with RetrievalPipeline(ingested, config) as pipe:
            result = pipe.run("Who is Helen Shank's manager?", tenant="en", budget=400, debug=True, question_date=ASKED)
        return {row["source_id"]: row["rerank"] for row in result.fused}

    assert scores(load_preset("default")) == scores(load_preset("default", others_told=0.0))


def test_the_record_is_the_ingestions_own_never_a_callers(services):
    # A caller's metadata (or an export's line) naming whom a turn tells of is not kept: the facts decide.
    pipeline = IngestionPipeline(services)
    pipeline.ingest_turns([
        TurnRecord(session_id="s", turn_id="t0", speaker="user", text="My new manager is Fazle Newcombe.",
                   tenant="c", metadata={TOLD_OF: ["Fazle Newcombe"], "mood": "glad"}),
        TurnRecord(session_id="s", turn_id="t1", speaker="user", text="Helen Shank's new manager is Daniel.",
                   tenant="c", metadata={TOLD_OF: []}),
    ])
    stored = {item.source_id: item.metadata for item in services.vectors.get(
        [i for t in ("t0", "t1") for i in services.vectors.ids_for_source("c", f"s/{t}")])}
    assert TOLD_OF not in stored["s/t0"] and stored["s/t0"]["mood"] == "glad"
    assert stored["s/t1"][TOLD_OF] == ["Helen Shank"]
