"""The compaction design: a pure view, levels by utilization, drops reached, validation that acts."""

from __future__ import annotations

import itertools
import sqlite3
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_conversation_properties import expand, op, words  # the same random sessions

from agent_memory.conversation import (
    CompactionConfig,
    SessionManager,
    StructuralSummarizer,
)
from agent_memory.conversation import messages as msgs
from agent_memory.conversation.light import condense_text, is_condensed
from agent_memory.conversation.significance import RuleDetector, numbers
from agent_memory.conversation.summarize import validate
from agent_memory.core.errors import BudgetError
from agent_memory.core.tokens import TiktokenCounter

COUNTER = TiktokenCounter("cl100k_base")
LONG = ("We compared three suppliers for the pumps. The first one was slow to answer. Acme quoted 4,200 EUR "
        "for 12 units on 2024-05-01. Nobody liked the colour. The delivery takes 6 weeks. Shipping is free. "
        "We decided to go with Acme. The weather was nice that day. Lunch was pasta.")


@pytest.fixture(scope="module")
def manager(tmp_path_factory):
    mgr = SessionManager(tmp_path_factory.mktemp("sched"), COUNTER, synchronous="OFF")
    yield mgr
    mgr.close()


def stored(manager, key):
    db = sqlite3.connect(str(manager.store.path))
    try:
        return (db.execute("SELECT seq, status FROM messages WHERE session_id=? AND agent_id=? ORDER BY seq",
                           key).fetchall(),
                db.execute("SELECT first_seq, last_seq, text FROM summaries WHERE session_id=? ORDER BY id",
                           key[:1]).fetchall(),
                db.execute("SELECT state FROM session_state WHERE session_id=?", key[:1]).fetchall())
    finally:
        db.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(ops=st.lists(op, min_size=1, max_size=20), last=words,
       window=st.one_of(st.none(), st.integers(200, 3000)),
       budgets=st.lists(st.integers(1, 4000), min_size=1, max_size=8))
def test_views_are_pure_reads(manager, ops, last, window, budgets):
    session = manager.session(uuid.uuid4().hex, config=CompactionConfig(window_tokens=window))
    for message, klass in expand(ops, itertools.count()) + [({"role": "user", "content": last}, "strict")]:
        session.append(message, retention=klass)
    before = (stored(manager, session.key), session.stats(), session.summaries(), session.messages())
    first = None
    for budget in budgets:
        try:
            view = session.view(budget)
        except BudgetError:
            continue
        assert session.count_view(view) <= budget
        first = first or (budget, view)
    assert (stored(manager, session.key), session.stats(), session.summaries(), session.messages()) == before
    if first is not None:  # the same budget gives the same view, whatever was viewed in between
        assert session.view(first[0]) == first[1]


def test_small_view_does_not_compact_the_session(manager):
    session = manager.session("small-view")  # default window 8192: nothing here needs compaction
    for i in range(10):
        session.append({"role": "user", "content": f"Step {i}: pump P-{i} reads {i * 7} litres."})
        session.append({"role": "assistant", "content": f"Logged step {i}."})
    session.view(40)
    full = session.view(2000)
    assert [m for m in full if not m["content"].startswith("[Key entities]")] == session.messages()
    assert session.stats()["compactions"] == 0 and not session.summaries()


def test_levels_follow_the_configured_thresholds(tmp_path):
    mgr = SessionManager(tmp_path, COUNTER, synchronous="OFF")
    session = mgr.session("levels", config=CompactionConfig(window_tokens=1000))
    for _ in range(4):
        session.append({"role": "user", "content": LONG}, retention="fuzzy")
        session.append({"role": "assistant", "content": "Noted."}, retention="fuzzy")
    assert session.stats()["compactions"] == 0  # under 60%: nothing happens
    session.configure(target=0.25, light=0.3, structural=0.9, llm=0.95, emergency=0.99, light_min_tokens=50)
    stats = session.stats()
    assert stats["tiers"] == {"1": 1} and stats["condensed_messages"] >= 1 and not session.summaries()
    shown = [m["content"] for m in session.view(1000) if m["role"] == "user"]
    assert is_condensed(shown[0]) and "4,200 EUR" in shown[0] and "pasta" not in shown[0]
    assert session.messages()[0]["content"] == LONG  # the raw history is untouched
    mgr.close()
    # The session's own thresholds and the condensed text survive a restart.
    again = SessionManager(tmp_path, COUNTER, synchronous="OFF").session("levels")
    assert again.config.light == 0.3 and again.config.target == 0.25
    assert [m["content"] for m in again.view(1000) if m["role"] == "user"] == shown
    with pytest.raises(ValueError, match="light"):
        again.configure(light=0.99)
    with pytest.raises(ValueError, match="unknown"):
        again.configure(colour="red")
    with pytest.raises(ValueError, match=r"\['light'\] cannot be None"):
        again.configure(light=None)
    assert again.configure(window_tokens=None).window_tokens is None  # the window alone may be None
    again.store.close()


def test_top_level_drops_forgettable_then_fuzzy(tmp_path):
    mgr = SessionManager(tmp_path, COUNTER, synchronous="OFF")
    session = mgr.session("top", config=CompactionConfig(window_tokens=1000))
    for i in range(6):
        session.append({"role": "user", "content": f"Tool chatter {i}: retrying the fetch of page {i}."},
                       retention="forgettable")
        session.append({"role": "user", "content": f"Draft note {i}: maybe paint the shed blue {i}."},
                       retention="fuzzy")
    assert session.stats()["compactions"] == 0
    # One large strict message takes the session past 88%: forgettable goes first, then fuzzy.
    session.append({"role": "user", "content": "Contract clause: " + "the supplier delivers on time. " * 110},
                   retention="strict")
    rows, _, _ = stored(mgr, session.key)
    status = {seq: s for seq, s in rows}
    assert all(status[seq] == "dropped" for seq in range(0, 12, 2)), status  # forgettable
    assert any(status[seq] == "dropped" for seq in range(1, 12, 2)), status  # fuzzy reached its drop
    assert status[12] == "active"  # the newest strict unit stays
    assert session.stats()["tiers"].get("3") or session.stats()["tiers"].get("4")
    mgr.close()


def test_numbers_after_chinese_characters():
    text = "服务部署在端口8004。营收为1.2亿元，同比增长15%。"
    assert {"8004", "1.2", "15%"} <= numbers(text)
    assert RuleDetector().judge("user", "服务端口8004").significant
    summary = StructuralSummarizer().summarize([{"role": "user", "content": text}], max_tokens=200)
    assert "8004" in summary and "15%" in summary
    check = validate(text, "营收1.2亿元", 40, 10, "structural")
    assert check.numbers_kept == pytest.approx(1 / 3, abs=0.01) and "8004" in check.lost
    assert check.compression_ratio == 4.0  # original / summary


def test_structural_summary_keeps_the_assistants_open_question():
    span = [{"role": "user", "content": "Book me a flight to Oslo on 2024-06-03."},
            {"role": "assistant", "content": "Found two. Do you want the 09:10 or the 14:40 departure?"}]
    text = StructuralSummarizer().summarize(span, max_tokens=200)
    assert "Open questions" in text and "09:10 or the 14:40" in text
    answered = span + [{"role": "user", "content": "The 09:10 one."}]
    assert "Open questions" not in StructuralSummarizer().summarize(answered, max_tokens=200)


def test_light_condensing_keeps_key_sentences():
    out = condense_text(LONG)
    assert out.startswith("[condensed: kept 3 of 9 sentences]")
    assert "4,200 EUR" in out and "decided" in out and "Lunch" not in out
    assert condense_text(out) is None and condense_text("One. Two.") is None


class KeepsNumbers:
    """A stand-in for the LLM level: lists every number of the span."""

    name = "llm"

    def __init__(self):
        self.calls = 0

    def summarize(self, span, *, max_tokens):
        self.calls += 1
        found = sorted({n for m in span for n in numbers(msgs.text_of(m))}, key=lambda n: (len(n), n))
        return "Readings (litres at pumps P-): " + ", ".join(found)


def test_a_summary_losing_numbers_is_redone_by_the_next_level(tmp_path):
    llm = KeepsNumbers()
    mgr = SessionManager(tmp_path, COUNTER, summarizer=llm, synchronous="OFF")
    session = mgr.session("redo", config=CompactionConfig(window_tokens=600, light_min_tokens=10_000))
    for i in range(30):
        session.append({"role": "user", "content": f"Pump number {i} measured {100 + i * 7} litres."}, retention="fuzzy")
    stats = session.stats()
    assert stats["summaries_redone"] >= 1 and llm.calls >= 1
    for summary in session.summaries():
        check = summary["validation"]
        assert check["numbers_kept"] >= 0.5 and check["compression_ratio"] > 1, summary
    mgr.close()


def test_without_an_llm_a_failing_summary_is_split_or_kept(tmp_path):
    mgr = SessionManager(tmp_path, COUNTER, synchronous="OFF")
    session = mgr.session("split", config=CompactionConfig(window_tokens=600, light_min_tokens=10_000))
    for i in range(30):
        session.append({"role": "user", "content": f"Pump number {i} measured {100 + i * 7} litres."}, retention="fuzzy")
    stats = session.stats()
    assert stats["summaries_redone"] >= 1
    assert all(s["validation"]["numbers_kept"] >= 0.5 for s in session.summaries())
    mgr.close()
