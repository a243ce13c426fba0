"""A request for advice ranks the user's standing statement above chatter nearer the request in meaning, on real stores
and embeddings through the served default (agent_memory/retrieval/advice.py); any other question ranks as before."""

from __future__ import annotations

import pytest

from agent_memory.retrieval.config import load_preset
from agent_memory.retrieval.pipeline import RetrievalPipeline
from tests.helpers import ingest_user_statements

ASKED = "2024/09/07 (Sat) 10:00"
# Per tenant: the user's standing statement first, then days out that name meals, nearer the request in meaning.
TOLD = {
    "en": ["Since the spring I don't touch meat or fish at all, and I feel better for it.",
           "Had a lovely lunch at the harbour with Priya, we shared a big seafood platter.",
           "Cooked a roast chicken for my parents on Sunday, they loved it.",
           "Tried the new burger place on Elm Street with Marco after work.",
           "Grabbed a quick steak sandwich before the match on Saturday.",
           "Baked a lasagne for the office party, it went in minutes."],
    "zh": ["我从春天起就不吃肉也不吃鱼了，感觉身体好多了。",
           "周日和小周在海边吃了一大盘海鲜，特别过瘾。",
           "给爸妈炖了一锅排骨汤，他们喝得很开心。",
           "下班和同事去新开的烤肉店吃了一顿。",
           "周六看球前随便吃了个牛肉汉堡。",
           "给公司聚会做了一盘红烧肉，一会儿就抢光了。"],
}
REQUESTS = {"en": "Can you suggest something for me to cook for dinner tonight?", "zh": "今晚做点什么菜好？"}


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
    served, decisions = _ranked(ingested, REQUESTS[tenant], tenant)
    plain, _ = _ranked(ingested, REQUESTS[tenant], tenant, advice={"signal": 0.0})

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
    served, _ = _ranked(ingested, REQUESTS["en"], "en", advice={"signal": 6.0, "examples": [TOLD["en"][4]]})
    assert max(served, key=served.get) == "s-4/t0", served
