"""Session behaviour: retention classes, tiers, forced compaction, summaries and their fallback."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ holds fake_openai.py

from fake_openai import FakeOpenAI  # noqa: E402

from agent_memory.conversation import (  # noqa: E402
    CompactionConfig,
    LLMSummarizer,
    Retention,
    SessionManager,
    StructuralSummarizer,
)
from agent_memory.conversation import messages as msgs  # noqa: E402
from agent_memory.core.errors import BudgetError  # noqa: E402
from agent_memory.core.llm import LLMClient  # noqa: E402
from agent_memory.core.tokens import TiktokenCounter  # noqa: E402

COUNTER = TiktokenCounter("cl100k_base")
SYSTEM = {"role": "system", "content": "You are a travel assistant."}


def fill(session, turns: int, retention=None, start: int = 0):
    for i in range(start, start + turns):
        session.append({"role": "user", "content": f"Book hotel H-{i} in Lisbon for {i + 2} nights, please."},
                       retention=retention)
        session.append({"role": "assistant", "content": f"Hotel H-{i} costs {100 + i} EUR per night; booked."},
                       retention=retention)


@pytest.fixture()
def manager(tmp_path):
    mgr = SessionManager(tmp_path, COUNTER, synchronous="OFF")
    yield mgr
    mgr.close()


def test_unclassified_defaults_to_fuzzy_and_is_counted(manager):
    session = manager.session("s")
    session.append({"role": "user", "content": "hi"})
    session.append({"role": "assistant", "content": "hello"}, retention=Retention.STRICT)
    session.append({"role": "user", "content": "ok"}, retention="forgettable")
    stats = session.stats()
    assert stats["unclassified_appends"] == 1
    assert stats["by_retention"] == {"forgettable": 1, "fuzzy": 1, "strict": 1}
    with pytest.raises(ValueError, match="'sticky'"):
        session.append({"role": "user", "content": "x"}, retention="sticky")
    with pytest.raises(ValueError, match="role"):
        session.append({"role": "robot", "content": "x"})


def test_structural_level_summarizes_fuzzy_but_keeps_strict_verbatim(manager):
    session = manager.session("s", config=CompactionConfig(window_tokens=600))
    session.append(SYSTEM)
    session.append({"role": "user", "content": "My passport number is P-7781 and I never fly Ryanair."},
                   retention="strict")
    fill(session, 12, retention="fuzzy")
    session.append({"role": "user", "content": "What is the total?"})
    stats = session.stats()
    assert stats["compactions"] >= 1 and stats["tiers"].get("2")
    view = session.view(600)
    texts = [msgs.text_of(m) for m in view]
    assert any("P-7781" in t for t in texts), "strict message survives tier 1"
    assert texts[0] == SYSTEM["content"]
    assert texts[1].startswith("[Context Compressed]")
    assert texts[-1] == "What is the total?"
    assert len(session.messages()) == 2 + 24 + 1  # history itself is intact
    summary = manager.summaries("s")[0]
    assert summary["method"] == "structural" and "H-0" in summary["text"]
    assert summary["validation"]["compression_ratio"] > 1  # original/summary
    assert stats["mean_numbers_kept"] is not None


def test_llm_level_summarizes_strict_and_spares_system_and_pending(manager):
    config = CompactionConfig(window_tokens=400, summary_max_tokens=40)
    session = manager.session("s", config=config)
    session.append(SYSTEM)
    for i in range(7):
        session.append({"role": "user", "content": f"Rule {i}: always cc finance@acme.example on invoices. " * 3},
                       retention="strict")
    session.append({"role": "user", "content": "Go on."})
    view = session.view(400)
    assert session.count_view(view) <= 400
    strict_left = [m for m in view if msgs.text_of(m).startswith("Rule")]
    assert len(strict_left) < 7
    assert view[0] == SYSTEM and view[-1]["content"] == "Go on."
    assert session.stats()["tiers"].get("3")  # strict material waits for the llm level (88%)


def test_forced_compaction_shape(manager):
    session = manager.session("s")
    session.append(SYSTEM)
    fill(session, 5)
    session.append({"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "fx", "arguments": "{}"}}]})
    session.append({"role": "tool", "tool_call_id": "c1", "content": "EUR/USD 1.0842"})
    session.append({"role": "user", "content": "Convert it to dollars."})
    session.compact(force=True)
    view = session.view(2000)
    assert [m["role"] for m in view] == ["system", "system", "user"]
    assert view[1]["content"].startswith("[Context Compressed]")
    assert "1.0842" in view[1]["content"]  # tool result with a number kept by the structural summary
    assert view[2]["content"] == "Convert it to dollars."
    assert session.stats()["forced_compactions"] == 1


def test_budget_smaller_than_must_keep_raises(manager):
    session = manager.session("s")
    session.append({"role": "system", "content": "rules " * 200})
    session.append({"role": "user", "content": "hi"})
    with pytest.raises(BudgetError, match="budget 50"):
        session.view(50)


def test_sub_agents_have_their_own_history(manager):
    main, helper = manager.session("s"), manager.session("s", agent_id="researcher")
    main.append({"role": "user", "content": "main question"})
    helper.append({"role": "user", "content": "helper task"})
    assert [m["content"] for m in main.view(500)] == ["main question"]
    assert [m["content"] for m in helper.view(500)] == ["helper task"]
    assert manager.recent_turns("s", 5) == [{"role": "user", "content": "main question"}]
    assert manager.recent_turns("s", 5, agent_id="researcher") == [{"role": "user", "content": "helper task"}]


def test_significant_turns_are_promoted_and_entities_survive(manager):
    seen = []
    manager.on_significant = seen.append
    session = manager.session("s", config=CompactionConfig(window_tokens=500))
    session.append({"role": "user", "content": "I prefer aisle seats and my budget is 900 EUR."})
    session.append({"role": "assistant", "content": "Sure."})
    session.append({"role": "user", "content": "We decided to fly with Lufthansa to Tokyo."})
    assert [r.seq for r in seen] == [0, 2]
    assert "preference" in seen[0].reasons and "decision" in seen[1].reasons
    assert "Lufthansa" in seen[1].entities
    fill(session, 30)
    session.append({"role": "user", "content": "Anything else?"})
    view = session.view(500)
    header = next(m["content"] for m in view if "[Key entities]" in str(m.get("content")))
    assert "Lisbon" in header  # the most mentioned entity stays on top after every tier


def test_hook_failure_does_not_lose_the_message(manager, caplog):
    def broken(record):
        raise RuntimeError("pipeline down")

    manager.on_significant = broken
    session = manager.session("s")
    with caplog.at_level(logging.WARNING):
        session.append({"role": "user", "content": "I always pay with the Visa card ending 4242."})
    assert session.messages()[-1]["content"].endswith("4242.")
    assert session.stats()["hook_failures"] == 1
    assert "pipeline down" in caplog.text


class Raising:
    name = "broken"

    def summarize(self, span, *, max_tokens):
        raise TimeoutError("summarizer timed out")


def test_failing_summarizer_keeps_history_and_logs(tmp_path, caplog):
    mgr = SessionManager(tmp_path, COUNTER, summarizer=Raising(), synchronous="OFF")
    session = mgr.session("s", config=CompactionConfig(window_tokens=500))
    session.append(SYSTEM)
    appended = [SYSTEM]
    with caplog.at_level(logging.WARNING):
        for i in range(40):
            message = {"role": "user", "content": f"Order O-{i} has {i * 7} items."}
            session.append(message)
            appended.append(message)
    assert "summarizer broken failed" in caplog.text and "timed out" in caplog.text
    assert session.messages() == appended
    assert all("timed out" not in s["text"] for s in mgr.summaries("s"))
    assert all(s["method"] == "structural" for s in mgr.summaries("s"))
    assert session.stats()["summary_fallbacks"] >= 1
    mgr.close()


@pytest.mark.parametrize("reply", ["", "x" * 20000, "Bananas grow on trees in Ecuador."])
def test_llm_garbage_is_never_stored(tmp_path, caplog, reply):
    with FakeOpenAI(default_text=reply) as fake:
        client = LLMClient("fake-model", base_url=fake.base_url, max_retries=0)
        mgr = SessionManager(tmp_path, COUNTER, summarizer=LLMSummarizer(client), synchronous="OFF")
        session = mgr.session("s")
        fill(session, 4)
        session.append({"role": "user", "content": "Summarize?"})
        with caplog.at_level(logging.WARNING):
            session.compact(force=True)
        assert fake.requests, "the LLM was asked"
    summaries = mgr.summaries("s")
    assert len(summaries) == 1 and summaries[0]["method"] == "structural"
    assert reply[:50] not in summaries[0]["text"] or not reply
    assert "summarizer llm failed" in caplog.text
    mgr.close()


def test_llm_summary_used_when_good(tmp_path):
    good = "User booked hotels H-0 to H-3 in Lisbon; prices 100-103 EUR per night."
    with FakeOpenAI(default_text=good) as fake:
        client = LLMClient("fake-model", base_url=fake.base_url, max_retries=0)
        mgr = SessionManager(tmp_path, COUNTER, summarizer=LLMSummarizer(client), synchronous="OFF")
        session = mgr.session("s")
        fill(session, 4)
        session.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": "c9", "type": "function", "function": {"name": "price", "arguments": '{"hotel": "H-3"}'}}]})
        session.append({"role": "tool", "tool_call_id": "c9", "content": "103 EUR"})
        session.append({"role": "user", "content": "Total?"})
        session.compact(force=True)
        prompt = fake.requests[0]["messages"]
    assert "[tool_use:price]" in prompt[1]["content"] and "[tool_result:price] 103 EUR" in prompt[1]["content"]
    assert "[user] Book hotel H-0" in prompt[1]["content"]
    assert "language" in prompt[0]["content"]
    assert mgr.summaries("s")[0]["text"] == good and mgr.summaries("s")[0]["method"] == "llm"
    assert client.usage.calls == 1
    mgr.close()


def test_structural_summary_in_chinese():
    span = [{"role": "user", "content": "我想预订北京的酒店，预算是800元。"},
            {"role": "assistant", "content": "我们决定选择王府井的酒店，价格760元。"}]
    text = StructuralSummarizer().summarize(span, max_tokens=200)
    assert "用户目标" in text and "800" in text and "760" in text


def test_llm_significance_judgement_with_rule_fallback(caplog):
    from agent_memory.conversation import LLMDetector

    with FakeOpenAI() as fake:
        fake.enqueue('{"significant": true, "reasons": ["fact"], "entities": ["Kyoto"]}')
        fake.enqueue("not json at all")
        detector = LLMDetector(LLMClient("fake-model", base_url=fake.base_url, max_retries=0))
        judged = detector.judge("user", "My sister lives in Kyoto.")
        with caplog.at_level(logging.WARNING):
            fallback = detector.judge("user", "I prefer trains.")
    assert judged.significant and judged.reasons == ["fact"] and "Kyoto" in judged.entities
    assert fallback.significant and fallback.reasons == ["preference"]  # the rules answered
    assert "using rules" in caplog.text
    assert fake.requests[0]["response_format"] == {"type": "json_object"}


def test_llm_summary_timeout_keeps_history(tmp_path, caplog):
    with FakeOpenAI() as fake:
        fake.enqueue("too late", delay=1.0)
        client = LLMClient("fake-model", base_url=fake.base_url, timeout=0.2, max_retries=0)
        mgr = SessionManager(tmp_path, COUNTER, summarizer=LLMSummarizer(client), synchronous="OFF")
        session = mgr.session("s")
        fill(session, 3)
        session.append({"role": "user", "content": "Next?"})
        before = session.messages()
        with caplog.at_level(logging.WARNING):
            session.compact(force=True)
    assert "timed out" in caplog.text
    assert session.messages() == before
    assert [s["method"] for s in mgr.summaries("s")] == ["structural"]
    assert "too late" not in mgr.summaries("s")[0]["text"]
    mgr.close()
