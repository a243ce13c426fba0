"""The rule extractors' facts keep no side that is only a number, and a Chinese preposition's object is no subject
(index/triples/base.py ``only_a_number``, index/triples/chinese.py ``_governed``), read as ingestion reads a turn
(``graph_writes.extract_triples``), with the real spaCy model and jieba."""

from __future__ import annotations

import pytest

from agent_memory.core.records import MemoryItem
from agent_memory.index.triples import RuleBasedExtractor
from agent_memory.index.triples.base import only_a_number
from agent_memory.ingest.graph_writes import extract_triples
from agent_memory.ingest.items import SourceItems


@pytest.fixture(scope="module")
def rules() -> RuleBasedExtractor:
    return RuleBasedExtractor()


def facts_of(rules, text: str, **metadata) -> list[tuple[str, str, str]]:
    unit = SourceItems("acme", "run/m7", "turn", "h")
    unit.items = [MemoryItem(id="i7", tenant="acme", source_id="run/m7", kind="turn", text=text,
                             metadata={"speaker": "assistant", **metadata})]
    triples, _, warnings = extract_triples(rules, [unit])
    assert not warnings
    return [(t.subject, t.relation, t.object) for t in triples]


@pytest.mark.parametrize("name, type_, number", [
    ("12", "NUMBER", True), ("1.", "entity", True), ("(2)", "NUMBER", True), ("3)", "entity", True),
    ("8,211", "NUMBER", True), ("7.9", "NUMBER", True), ("9th", "NUMBER", True), ("fifth", "ORG", True),
    ("第9", "NUMBER", True), ("12", "DATE", True),  # spaCy types "Item 3 is 12" a date: no year, still a number
    ("2007", "DATE", False),  # a year read as a date: "founded in 2007"
    ("3 kids", "entity", False), ("45 seconds", "DATE", False), ("85%", "NUMBER", False),
    ("4.23.5", "entity", False), ("17:15", "DATE", False), ("模块12", "entity", False), ("X-200", "PRODUCT", False),
    ("Step", "entity", False), ("someone", "entity", False),
])
def test_a_side_is_only_a_number_when_nothing_but_the_number_names_it(name, type_, number):
    assert only_a_number(name, type_) is number


@pytest.mark.parametrize("text", [
    "任务1：继续重构支付服务；计划的第1步是模块12。",  # the coding trajectory's task: "1 — is_a → 12"
    "1. Install the package.\n2. Run the tests.\n3. Check 12 files.",
    "Melanie turned 40 in May.",  # spaCy pairs "40" with "May": a co-occurrence of a bare number
])
def test_a_turn_gives_no_fact_about_a_number_nor_a_co_occurrence_with_one(rules, text):
    for subject, relation, obj in facts_of(rules, text):
        assert not only_a_number(subject, ""), (subject, relation, obj)
        assert relation != "related_to" or not only_a_number(obj, ""), (subject, relation, obj)


@pytest.mark.parametrize("text, fact", [
    ("Caroline is 25.", ("Caroline", "is_a", "25")),
    ("Melanie turned 40 in May.", ("Melanie", "turn", "40")),
    ("Wytheville's population was 8,211 at the 2010 census.", ("Wytheville's population", "is_a", "8,211")),
])
def test_a_number_a_relation_gives_a_named_subject_stays(rules, text, fact):
    assert fact in facts_of(rules, text)


@pytest.mark.parametrize("text, fact", [
    ("Melanie has 3 kids.", ("Melanie", "have", "3 kids")),  # a count with its noun is a side
    ("Founded in Providence in 2007, the station grew.", ("station", "found in", "2007")),  # a year
    ("The build took 45 seconds.", ("build", "take", "45 seconds")),
])
def test_a_number_with_its_noun_or_a_year_is_still_a_side(rules, text, fact):
    assert fact in facts_of(rules, text)


# The Chinese coding trajectory's step, archived with its call (benchmarks/wm_trajectories.py).
STEP = ('[assistant] 第3步：我将对src/pay/mod_3.py运行list_dir，检查计划的下一部分。\n'
        '[tool_use:list_dir] {"path": "src/pay/mod_3.py"}')


def test_the_object_of_a_chinese_preposition_is_not_the_verbs_subject(rules):
    facts = facts_of(rules, STEP, tools=["list_dir"])
    assert not [f for f in facts if f[1] == "运行"]  # was "src/pay/mod_3.py — 运行 → list_dir": 我 runs it
    assert ("张三", "学习", "计算机") in facts_of(rules, "张三在北京大学学习计算机。")  # not 北京大学
    assert ("张三", "说", "话") in facts_of(rules, "张三对李四说了一句话。")  # not 李四


def test_the_agent_of_a_chinese_passive_or_by_phrase_and_a_companion_are_still_read(rules):
    assert ("该游戏", "developed_by", "腾讯") in facts_of(rules, "该游戏由腾讯开发。")
    # CMRC: 家康 crossed 伊贺 too; no phrase further back (本能寺) takes the verb past a preposition's phrase
    facts = facts_of(rules, "后来得到家康的允许而复归，在天正10年（1582年）的本能寺之变发生后与家康一同穿越伊贺。")
    assert [f for f in facts if f[1] == "穿越"] == [("家康", "穿越", "伊贺")]
