"""The relevance gate of the session-aware prompt's recent section (agent_memory/retrieval/recent.py)."""

from __future__ import annotations

from agent_memory.core.records import MemoryItem
from agent_memory.retrieval.config import RetrievalConfig, load_preset
from agent_memory.retrieval.config_parts import RecentView
from agent_memory.retrieval.recent import gate_recent
from agent_memory.retrieval.types import Candidate, Decision


def turn(seq: int, text: str, session: str = "chat") -> MemoryItem:
    return MemoryItem(id=f"wm:{session}/{seq}", tenant="t", source_id=f"{session}/m{seq}", kind="turn", text=text,
                      metadata={"session_id": session, "seq": seq})


VIEW = [turn(1, "My sister adopted a grey cat named Pixel last spring."),
        turn(2, "The weather in Oslo was rainy all week."),
        turn(3, "I cooked lasagna for the neighbours yesterday."),
        turn(4, "Anyway, shall we plan the hiking trip?")]


def test_the_served_default_places_only_what_the_question_reaches():
    placed = gate_recent(VIEW, [], "What is the name of the sister's cat?", 1800, RetrievalConfig().recent_view, [])
    assert [t.source_id for t in placed] == ["chat/m1"]  # the unrelated newest turn is not placed either


def test_the_newest_turn_is_placed_and_an_unrelated_older_turn_is_not():
    decisions: list[Decision] = []
    placed = gate_recent(VIEW, [], "What is the name of the sister's cat?", 1800, RecentView(always=1), decisions)
    assert [t.source_id for t in placed] == ["chat/m1", "chat/m4"]  # m1 holds the question's words; m4 is newest
    dropped = {d.target for d in decisions if d.action == "dropped"}
    assert dropped == {"chat/m2", "chat/m3"}


def test_an_older_turn_that_recall_ranks_is_placed_in_thread_order():
    ranked = [Candidate(item=turn(7, "elsewhere", session="old")), Candidate(item=turn(3, VIEW[2].text))]
    placed = gate_recent(VIEW, ranked, "What did I make for dinner?", 1800,
                         RecentView(always=1, min_terms=1.0, rank_tokens=60), [])
    assert [t.source_id for t in placed] == ["chat/m3", "chat/m4"]


def test_by_default_a_ranked_older_turn_is_left_to_the_passages():
    ranked = [Candidate(item=turn(3, VIEW[2].text))]
    decisions: list[Decision] = []
    placed = gate_recent(VIEW, ranked, "What did I make for dinner?", 1800, RecentView(always=1), decisions,
                         seen={"chat/m3"})
    assert [t.source_id for t in placed] == ["chat/m4"]
    assert any(d.target == "chat/m3" and "placed among the passages" in d.reason for d in decisions)


def test_ranking_counts_only_within_what_the_budget_holds():
    ranked = [Candidate(item=turn(100 + i, f"filler {i}", session="old")) for i in range(40)]
    ranked.append(Candidate(item=turn(3, VIEW[2].text)))  # rank 41: beyond 1,800 / 60 = 30
    placed = gate_recent(VIEW, ranked, "What did I make for dinner?", 1800,
                         RecentView(always=1, min_terms=1.0, rank_tokens=60), [])
    assert [t.source_id for t in placed] == ["chat/m4"]


def test_always_keeps_the_last_exchange_and_zero_keeps_only_what_the_question_reaches():
    placed = gate_recent(VIEW, [], "Where is the cat?", 1800, RecentView(always=2), [])
    assert [t.source_id for t in placed] == ["chat/m1", "chat/m3", "chat/m4"]
    assert gate_recent(VIEW, [], "Unrelated words entirely?", 1800, RecentView(always=0), []) == []


def test_the_gate_is_in_the_strict_retrieval_config():
    config = load_preset("default", {"recent_view": {"always": 2, "min_terms": 0.75}})
    assert config.recent_view.always == 2 and config.recent_view.rank_tokens == RetrievalConfig().recent_view.rank_tokens
    for field in RecentView.model_fields.values():
        assert field.description


def test_a_turn_recall_saw_but_ranked_low_is_not_placed_for_its_words():
    # m1 holds the question's words, but recall found its archived copy and ranked it beyond what fits.
    ranked = [Candidate(item=turn(100 + i, f"filler {i}", session="old")) for i in range(40)] + [Candidate(item=VIEW[0])]
    decisions: list[Decision] = []
    placed = gate_recent(VIEW, ranked, "What is the name of the sister's cat?", 1800, RecentView(always=1, rank_tokens=60), decisions,
                         seen={c.item.source_id for c in ranked})
    assert [t.source_id for t in placed] == ["chat/m4"]
    assert any(d.target == "chat/m1" and "recalled, but not among the best 30" in d.reason for d in decisions)
