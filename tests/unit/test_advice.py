"""Which questions ask for advice (agent_memory/retrieval/advice.py): a request for a recommendation, a suggestion or
a plan, in English or Chinese, made by the asker now; never a question about advice someone gave."""

from __future__ import annotations

import pytest

from agent_memory.core.errors import ConfigError
from agent_memory.retrieval.advice import asks_for_advice
from agent_memory.retrieval.config import load_preset


@pytest.mark.parametrize("question", [
    "Can you suggest a recipe for dinner tonight?",
    "What should I wear to the interview?",
    "Any tips for a long drive with kids?",
    "Got any podcast picks for my run?",
    "Could you plan a weekend in Porto for us?",
    "When's a good time to call the bank?",
    "What's the best way to get to the airport from my place?",
    "I've been feeling like my bread needs something extra. Any advice?",
    "今晚吃点什么好？",
    "帮我安排一下周日的行程吧。",
    "周末去哪儿玩比较合适？",
    "你推荐我看哪部电影？",
    "有没有适合雨天做的事？",
    "你说我周末该去哪儿玩？",
    "出发之前帮我安排一下行程吧。",
])
def test_a_request_for_advice_is_read_as_one(question):
    assert asks_for_advice(question)


@pytest.mark.parametrize("question", [
    # About advice given: answered by the turn that gave it, not by what the user is like.
    "What book did Caroline recommend to Melanie?",
    "What advice does Gina give to Jon about running a business?",
    "Where did Maria get the idea for the shadow box?",
    "What did you recommend for my trip to Lisbon?",
    "Which lunch spot did you pick for my parents' visit?",
    "你上次推荐的书叫什么？",
    "朋友来家里看电影，你推荐的是哪一部？",
    "邻居乔迁请客那次，你说我拿什么去好？",
    # Plain memory questions.
    "Where did I go last weekend?",
    "我现在住在哪里？",
    "为什么这种药不适合用于人体？",
])
def test_any_other_question_is_not(question):
    assert not asks_for_advice(question)


def test_its_settings_are_strict_and_described():
    config = load_preset("default", {"advice": {"signal": 2.0, "examples": ["I never fly."]}})
    assert config.advice.signal == 2.0 and config.advice.examples == ["I never fly."]
    with pytest.raises(ConfigError, match="signl"):
        load_preset("default", {"advice": {"signl": 2.0}})
    with pytest.raises(ConfigError):
        load_preset("default", {"advice": {"examples": []}})  # an empty bank would rank every turn alike
    fields = type(config.advice).model_fields
    assert all(field.description for field in fields.values())
