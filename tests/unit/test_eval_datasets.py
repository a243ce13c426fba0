"""Benchmark formats recognized by content, with evidence mapped to the product's source IDs."""

from __future__ import annotations

import json

import pytest

from agent_memory.core.errors import ConfigError
from agent_memory.evaluation.cli import parse_budgets
from agent_memory.evaluation.datasets import detect_format, load_dataset, parse_dataset
from agent_memory.ingest.paragraph_ids import paragraph_source_id
from agent_memory.ingest.transcripts import locomo_turns

LOCOMO = [{
    "sample_id": "conv-9",
    "conversation": {
        "speaker_a": "Ann", "speaker_b": "Bo",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "I went to a support group yesterday."},
            {"speaker": "Bo", "dia_id": "D1:2", "text": "Look at this!", "blip_caption": "a photo of a sunrise"},
        ],
        "session_2_date_time": "2:00 pm on 9 May, 2023",
        "session_2": [{"speaker": "Ann", "dia_id": "D2:1", "text": "I painted it too."}],
    },
    "qa": [
        {"question": "When did Ann go?", "answer": "7 May 2023", "evidence": ["D1:1"], "category": 2},
        {"question": "What did they share?", "answer": "sunrise", "evidence": ["D1:2; D2:1", "D9:9"], "category": 1},
        {"question": "Adversarial?", "adversarial_answer": "x", "evidence": ["D1:1"], "category": 5},
        {"question": "Only bad ids", "answer": "x", "evidence": ["D7:7"], "category": 4},
    ],
}]

LONGMEMEVAL = [{
    "question_id": "q_abc", "question_type": "temporal-reasoning", "question": "When did I buy the bike?",
    "question_date": "2023/06/01 (Thu) 03:56", "answer": "In May", "answer_session_ids": ["s2"],
    "haystack_dates": ["2023/05/01 (Mon) 10:00", "2023/05/20 (Sat) 02:21"],
    "haystack_session_ids": ["s1", "s2"],
    "haystack_sessions": [
        [{"role": "user", "content": "Hello there"}, {"role": "assistant", "content": "Hi!"}],
        [{"role": "user", "content": "I bought a bike today.", "has_answer": True},
         {"role": "assistant", "content": "Nice bike."}],
    ],
}]

SHARED = {"id": "1", "title": "Shared Page", "paragraph_text": "A paragraph two questions share.", "is_supporting": True}
HOTPOT = [
    {"question_id": "h1", "question_text": "Who?", "answers_objects": [{"spans": ["Ann"]}],
     "contexts": [SHARED, {"id": "2", "title": "Other", "paragraph_text": "Distractor text.", "is_supporting": False}]},
    {"question_id": "h2", "question_text": "What?", "answers_objects": [{"spans": ["bike"]}],
     "contexts": [SHARED, {"id": "3", "title": "Bike", "paragraph_text": "Bikes have wheels.", "is_supporting": True}]},
]

CMRC = {"version": "v1", "data": [{"title": "游戏", "paragraphs": [
    {"id": "TRIAL_1", "context": "生命数耗完即算踢爆。", "qas": [
        {"id": "TRIAL_1_QUERY_0", "question": "生命数耗完即算为什么？", "answers": [
            {"text": "踢爆", "answer_start": 7}, {"text": "踢爆", "answer_start": 7}]}]},
    {"id": "TRIAL_2", "context": "另一个段落。", "qas": []},
]}]}


def test_locomo_detection_evidence_and_categories():
    es = parse_dataset(LOCOMO)
    assert (es.name, es.kind) == ("locomo", "conversation")
    # Category 5 left out; the question whose only evidence id is unknown has nothing to measure.
    assert [q.category for q in es.questions] == ["temporal", "multi-hop"]
    first, second = es.questions
    assert first.tenant == "locomo-conv-9" and first.question_date is None
    # Source IDs are whatever the product's transcript reader gives these turns.
    sid = {t.turn_id: t.source_id for t in locomo_turns(LOCOMO[0], first.tenant)}
    assert sid["D1:1"] == "conv-9/D1:1"
    assert [e.source_id for e in first.evidence] == [sid["D1:1"]]
    # "D1:2; D2:1" split, unknown "D9:9" skipped; the turn text is what the product stores (with the caption).
    assert [e.source_id for e in second.evidence] == [sid["D1:2"], sid["D2:1"]]
    assert "sunrise" in second.evidence[0].text
    material = es.material(first.tenant)
    assert len(material.turns) == 3 and not material.documents
    assert {t.source_id for t in material.turns} >= {e.source_id for e in second.evidence}


def test_longmemeval_one_tenant_per_question_with_has_answer_turns():
    es = parse_dataset(LONGMEMEVAL)
    assert es.name == "longmemeval"
    (q,) = es.questions
    assert q.tenant == "lme-q_abc" and q.category == "temporal-reasoning"
    assert q.question_date == "2023/06/01 (Thu) 03:56"
    assert [(e.source_id, e.text) for e in q.evidence] == [("s2/t0", "I bought a bike today.")]
    assert len(es.material(q.tenant).turns) == 4


def test_hotpotqa_jsonl_one_tenant_deduplicated(tmp_path):
    path = tmp_path / "not_named_hotpot.data"
    path.write_text("\n".join(json.dumps(r) for r in HOTPOT) + "\n", encoding="utf-8")
    es = load_dataset(path)
    assert (es.name, es.kind) == ("hotpotqa", "documents")
    assert {q.tenant for q in es.questions} == {"hotpotqa"}
    docs = es.material("hotpotqa").documents
    assert len(docs) == 3  # the shared paragraph is stored once
    shared_id = paragraph_source_id("Shared Page", SHARED["paragraph_text"])
    assert [e.source_id for e in es.questions[0].evidence] == [shared_id]
    assert es.questions[1].answers == ["bike"]


def test_hotpotqa_evidence_is_the_paragraph_given_not_another_of_its_title(tmp_path):
    """Two questions whose pages share a title but not a paragraph (MuSiQue's pool: 85 titles, 18
    gold paragraphs once stored under another paragraph's ID and never ingested): both paragraphs are
    stored, and each question's evidence is its own paragraph's ID."""
    one = {"title": "Publix", "paragraph_text": "Publix employs about 193,000 people.", "is_supporting": False}
    two = {"title": "Publix", "paragraph_text": "Publix is headquartered in Lakeland.", "is_supporting": True}
    records = [{"question_id": "a", "question_text": "How many work at Publix?", "contexts": [one, SHARED]},
               {"question_id": "b", "question_text": "Where is Publix based?", "contexts": [two]}]
    path = tmp_path / "pool.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    es = load_dataset(path)
    docs = {d.source_id: d.text for d in es.material("hotpotqa").documents}
    assert docs["Publix"] == one["paragraph_text"] and docs["Publix #2"] == two["paragraph_text"]
    assert [(e.source_id, e.text) for e in es.questions[1].evidence] == [("Publix #2", two["paragraph_text"])]
    assert [e.source_id for e in es.questions[0].evidence] == ["Shared Page"]


def test_cmrc_squad_format(tmp_path):
    path = tmp_path / "whatever.json"
    path.write_text(json.dumps(CMRC, ensure_ascii=False), encoding="utf-8")
    es = load_dataset(path)
    assert es.name == "cmrc"
    (q,) = es.questions
    assert q.answers == ["踢爆"] and q.evidence[0].source_id == "TRIAL_1"
    assert [d.source_id for d in es.material("cmrc2018").documents] == ["TRIAL_1", "TRIAL_2"]


def test_detection_is_by_content():
    assert detect_format(LOCOMO) == "locomo"
    assert detect_format(LONGMEMEVAL) == "longmemeval"
    assert detect_format(HOTPOT) == "hotpotqa"
    assert detect_format(CMRC) == "cmrc"
    with pytest.raises(ConfigError, match="unrecognized benchmark format"):
        detect_format([{"question": "no material"}])
    with pytest.raises(ConfigError, match="unrecognized"):
        detect_format({"data": "not a list"})


def test_limit_selects_first_questions_and_their_tenants():
    es = parse_dataset(LOCOMO + [{**LOCOMO[0], "sample_id": "conv-10"}])
    picked = es.select(1)
    assert len(picked) == 1 and es.tenants_for(picked) == ["locomo-conv-9"]


def test_budget_parsing_defaults_and_lists():
    assert parse_budgets(None, "locomo") == [1800]
    assert parse_budgets(None, "longmemeval") == [2000]
    assert parse_budgets(None, "cmrc") == [1000]
    assert parse_budgets(700, "hotpotqa") == [700]
    assert parse_budgets("500,1000,1800", "hotpotqa") == [500, 1000, 1800]
    with pytest.raises(ConfigError, match="abc"):
        parse_budgets("abc", "hotpotqa")
    with pytest.raises(ConfigError):
        parse_budgets("0", "hotpotqa")


def test_locomo_record_may_pool_documents_with_its_turns():
    pooled = [{**LOCOMO[0], "documents": [{"id": "N1", "text": "小林的生日是3月5日。"},
                                          {"id": "N2", "title": "Page", "text": "A titled page."}],
               "qa": [{"question": "小林的生日是哪天？", "answer": "3月5日", "evidence": ["N1", "D2:1"], "category": 4}]}]
    es = parse_dataset(pooled)
    (q,) = es.questions
    material = es.material(q.tenant)
    assert len(material.turns) == 3 and [d.tenant for d in material.documents] == [q.tenant] * 2
    note = material.documents[0]
    assert note.source_id == paragraph_source_id("", "小林的生日是3月5日。")
    assert material.documents[1].source_id == "Page"
    assert [(e.source_id, e.text) for e in q.evidence] == [(note.source_id, note.text),
                                                         ("conv-9/D2:1", "I painted it too.")]
