"""A request for advice ranks the user's standing statement above chatter nearer the request in meaning, on real stores
and embeddings through the served default (agent_memory/retrieval/advice.py); any other question ranks as before."""

from __future__ import annotations

import pytest

from agent_memory.retrieval.config import load_preset
from agent_memory.retrieval.pipeline import RetrievalPipeline
from tests.helpers import DINNER_REQUESTS, MEAL_DAYS, ingest_user_statements

ASKED = "2024/09/07 (Sat) 10:00"
# Per tenant: the user's standing statement first, then days out that name meals, nearer the request in meaning.
STATEMENTS = {"en": "Since the spring I don't touch meat or fish at all, and I feel better for it.",
              "zh": "我从春天起就不吃肉也不吃鱼了，感觉身体好多了。"}
TOLD = {lang: [statement] + MEAL_DAYS[lang] for lang, statement in STATEMENTS.items()}


@pytest.fixture
def ingested(services):
    ingest_user_statements(services, TOLD)
    return services


def _ranked(services, question: str, tenant: str, **overrides) -> tuple[dict[str, float], list]:
    with RetrievalPipeline(services, load_preset("default", overrides)) as pipe:
        result = pipe.run(question, tenant=tenant, budget=400, debug=True, question_date=ASKED)
    return {row["source_id"]: row["rerank"] for row in result.fused}, result.decisions


@pytest.mark.parametrize("tenant", ["en", "zh"])
def test_a_request_for_advice_ranks_the_standing_statement_up(ingested, tenant):
    served, decisions = _ranked(ingested, DINNER_REQUESTS[tenant], tenant)
    plain, _ = _ranked(ingested, DINNER_REQUESTS[tenant], tenant, advice={"signal": 0.0})

    def rank(scores: dict[str, float]) -> int:
        return sorted(scores, key=lambda source_id: -scores[source_id]).index("s-0/t0")

    # Below meals that name what dinner is made of without the signal; past them with it.
    assert rank(plain) >= 2 and rank(served) < rank(plain), (plain, served)
    assert any(d.stage == "advice" for d in decisions)


def test_any_other_question_ranks_as_before(ingested):
    question = "Where did I have the seafood platter?"
    served, decisions = _ranked(ingested, question, "en")
    assert served == _ranked(ingested, question, "en", advice={"signal": 0.0})[0]
    assert not any(d.stage == "advice" for d in decisions)


def test_a_deployment_brings_its_own_examples(ingested):
    # Examples that read like the chatter raise the chatter instead: the signal reads the examples given.
    served, _ = _ranked(ingested, DINNER_REQUESTS["en"], "en", advice={"signal": 6.0, "examples": [TOLD["en"][4]]})
    assert max(served, key=served.get) == "s-4/t0", served
