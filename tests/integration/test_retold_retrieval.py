"""A request for advice follows the user's best-ranked statement to its later telling, on real stores and embeddings
through the served default (agent_memory/retrieval/retold.py): "I've been vegan for a few months now" is placed right
after "I went vegetarian last spring"; any other question ranks as before."""

from __future__ import annotations

import pytest

from agent_memory.retrieval.config import load_preset
from agent_memory.retrieval.pipeline import RetrievalPipeline
from tests.helpers import DINNER_REQUESTS, MEAL_DAYS, ingest_user_statements

ASKED = "2024/09/07 (Sat) 10:00"
# Per tenant, a month apart: the user's statement, days out that name meals, and the statement told again last.
EARLIER = {"en": "I went vegetarian last spring, by the way, and I'm sticking with it.", "zh": "我从去年春天起改吃素食了，一直坚持着。"}
LATER = {"en": "Oh, I've been vegan for a few months now, feeling great on it.", "zh": "顺便说下，我吃纯素快一年了，感觉身体轻松不少。"}
TOLD = {lang: [EARLIER[lang]] + MEAL_DAYS[lang] + [LATER[lang]] for lang in EARLIER}


@pytest.fixture
def ingested(services):
    ingest_user_statements(services, TOLD)
    return services


def _order(services, question: str, tenant: str, **overrides) -> tuple[list[str], list]:
    with RetrievalPipeline(services, load_preset("default", overrides)) as pipe:
        result = pipe.run(question, tenant=tenant, budget=400, debug=True, question_date=ASKED)
    return [row["source_id"] for row in result.fused], result.decisions


@pytest.mark.parametrize("tenant", ["en", "zh"])
def test_a_request_for_advice_brings_the_later_telling_beside_the_earlier(ingested, tenant):
    served, decisions = _order(ingested, DINNER_REQUESTS[tenant], tenant)
    plain, _ = _order(ingested, DINNER_REQUESTS[tenant], tenant, retold={"anchors": 0})
    # Without it the later telling ranks below a meal; with it, right after the statement it tells again.
    assert plain.index("s-6/t0") > plain.index("s-0/t0") + 1, plain
    assert served.index("s-6/t0") == served.index("s-0/t0") + 1, served
    assert any(d.stage == "retold" and d.reason.startswith("s-6/t0") for d in decisions)


def test_any_other_question_ranks_as_before(ingested):
    question = "Where did I have the seafood platter?"
    served, decisions = _order(ingested, question, "en")
    assert served == _order(ingested, question, "en", retold={"anchors": 0})[0]
    assert not any(d.stage == "retold" for d in decisions)
