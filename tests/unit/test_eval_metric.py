"""The eval metric: citation parsing, the 80% rule, fragments, Chinese, answer checks; baseline helpers."""

from __future__ import annotations

import pytest

from agent_memory.core.records import MemoryItem
from agent_memory.evaluation.baselines import parse_when, render_source, rrf
from agent_memory.evaluation.datasets import Evidence, Question
from agent_memory.evaluation.metric import (
    answer_in_context,
    cited_ids,
    parse_citations,
    prompt_context,
    score_question,
    word_coverage,
)

EVIDENCE = "Andrew Jaspan is the co-founder of The Conversation, a not-for-profit media outlet in Melbourne."


def _question(*evidence: Evidence, answers=(), text="Who founded it?") -> Question:
    return Question(qid="q1", text=text, tenant="t", category="all", evidence=list(evidence), answers=list(answers))


def test_parse_citations_multiline_sections_and_repeats():
    prompt = "\n".join([
        "## Context",
        "[S:doc:a] first line of a",
        "second line of a",
        "[S:conv-1:session_2/D2:7] a turn with: colons",
        "## Facts",
        "not part of any passage",
        "[S:doc:a] a cited again",
    ])
    cited = parse_citations(prompt)
    assert set(cited) == {"doc:a", "conv-1:session_2/D2:7"}
    assert cited["doc:a"] == "first line of a\nsecond line of a\na cited again"
    assert cited["conv-1:session_2/D2:7"] == "a turn with: colons"
    assert "not part" not in " ".join(cited.values())
    assert cited_ids(prompt) == ["doc:a", "conv-1:session_2/D2:7"]


def test_tag_must_start_the_line():
    cited = parse_citations("see [S:x] inline mention\n[S:y] real")
    assert set(cited) == {"y"}


def test_whole_passage_is_present_under_its_id():
    q = _question(Evidence("p1", EVIDENCE))
    score = score_question("locomo", q, f"[S:p1] {EVIDENCE}")
    assert score.soft == 1.0 and score.strict is True


def test_right_text_under_wrong_id_is_absent():
    q = _question(Evidence("p1", EVIDENCE))
    score = score_question("locomo", q, f"[S:p2] {EVIDENCE}")
    assert score.soft == 0.0 and score.strict is False


def test_eighty_percent_rule_boundary():
    ten = "alpha beta gamma delta epsilon zeta eta theta iota kappa"
    q = _question(Evidence("p1", ten))
    eight = "alpha beta gamma delta epsilon zeta eta theta"
    seven = "alpha beta gamma delta epsilon zeta eta"
    assert word_coverage(ten, eight) == pytest.approx(0.8)
    assert score_question("locomo", q, f"[S:p1] {eight}").strict is True
    assert score_question("locomo", q, f"[S:p1] {seven}").strict is False


def test_fragment_citation_does_not_count_even_with_repeated_common_words():
    # Multiset matching: one "the" in the passage does not cover three in the evidence.
    evidence = "the cat sat on the mat near the door of the house"
    q = _question(Evidence("p1", evidence))
    fragment = "the cat sat"
    assert word_coverage(evidence, fragment) < 0.8
    assert score_question("locomo", q, f"[S:p1] {fragment}").soft == 0.0


def test_compression_dropping_filler_still_counts():
    evidence = "Um, I finally adopted a rescue dog named Max last weekend."
    compressed = "I finally adopted a rescue dog named Max last weekend"
    assert word_coverage(evidence, compressed) >= 0.8


def test_concatenated_citations_cover_a_split_item():
    q = _question(Evidence("p1", EVIDENCE))
    half = len(EVIDENCE) // 2
    prompt = f"[S:p1] {EVIDENCE[:half]}\n[S:other] unrelated\n[S:p1] {EVIDENCE[half:]}"
    assert score_question("hotpotqa", q, prompt).strict is True


def test_soft_and_strict_with_two_items():
    q = _question(Evidence("a", "one two three four five"), Evidence("b", "six seven eight nine ten"))
    score = score_question("locomo", q, "[S:a] one two three four five")
    assert score.soft == 0.5 and score.strict is False and score.present == [True, False]


def test_chinese_words_use_jieba():
    evidence = "北京大学是中国著名的综合性大学，位于北京市海淀区。"
    q = _question(Evidence("zh", evidence))
    assert score_question("locomo", q, f"[S:zh] {evidence}").strict is True
    assert score_question("locomo", q, "[S:zh] 北京大学是中国著名的").strict is False


def test_cmrc_hit_excludes_the_question_section():
    q = _question(Evidence("TRIAL_1", "踢爆"), answers=["踢爆"], text="生命数耗完即算为什么？踢爆")
    prompt_only_question = "## Question\n生命数耗完即算为什么？踢爆\n## Context\n[S:TRIAL_1] 无关的内容"
    assert score_question("cmrc", q, prompt_only_question).strict is False
    prompt_with_answer = prompt_only_question + "\n[S:TRIAL_2] 生命数耗完即算踢爆。"
    score = score_question("cmrc", q, prompt_with_answer)
    assert score.strict is True and score.soft == 1.0


def test_context_text_drops_question_section_until_next_header():
    prompt = "## Question\nWho won?\nmore question\n## Passages\n[S:a] text"
    assert prompt_context(prompt, "Who won?") == "## Passages\n[S:a] text"


def test_hotpot_answer_is_whole_word_and_case_insensitive():
    assert answer_in_context(["The Conversation"], "[S:a] co-founder of the conversation website")
    assert not answer_in_context(["no"], "[S:a] it is well known")
    assert answer_in_context(["no"], "[S:a] the answer is no.")


def test_render_source_stitches_overlapping_chunks_and_formats_turns():
    source = "one two three four five six seven"
    a = MemoryItem(id="1", tenant="t", source_id="s", kind="turn", text=source[:18], start=0, end=18,
                   metadata={"speaker": "Ann", "timestamp": "8 May 2023"})
    b = MemoryItem(id="2", tenant="t", source_id="s", kind="turn", text=source[10:], chunk_index=1, start=10,
                   end=len(source), metadata={"speaker": "Ann", "timestamp": "8 May 2023"})
    assert render_source([b, a]) == f"[8 May 2023] Ann: {source}"
    chunk = MemoryItem(id="3", tenant="t", source_id="d", kind="chunk", text="plain paragraph")
    assert render_source([chunk]) == "plain paragraph"


def test_rrf_prefers_items_ranked_by_both_lists():
    assert rrf([["a", "b", "c"], ["d", "b", "e"]])[0] == "b"


def test_parse_when_reads_both_conversation_date_formats():
    locomo = parse_when("1:56 pm on 8 May, 2023")
    lme = parse_when("2023/05/20 (Sat) 02:21")
    assert locomo is not None and lme is not None and locomo < lme
    assert parse_when("") is None
