"""`eval --mixed`: several sets in one tenant, each scored against the mixed memory beside its own."""

from __future__ import annotations

import json

from agent_memory.core.records import SearchFilter
from agent_memory.evaluation.cli import DEFAULT_BUDGETS
from agent_memory.evaluation.mixed import MIXED_TENANT, MixedConfig, evaluate_mixed, markdown
from agent_memory.evaluation.runner import settings_for
from agent_memory.services import build_services

HOTPOT = [
    {"question_id": "h1", "question_text": "Which river flows through the city where the Zentrum Museum stands?",
     "answers_objects": [{"spans": ["Isar"]}],
     "contexts": [
         {"title": "Zentrum Museum", "is_supporting": True,
          "paragraph_text": "The Zentrum Museum is an art museum in Munich, opened in 1911."},
         {"title": "Munich", "is_supporting": True,
          "paragraph_text": "Munich is the capital of Bavaria. The river Isar flows through the city."},
         {"title": "Lake Garda", "is_supporting": False,
          "paragraph_text": "Lake Garda is the largest lake in Italy, popular with windsurfers."}]},
    {"question_id": "h2", "question_text": "Which sport is popular on the largest lake in Italy?",
     "answers_objects": [{"spans": ["windsurfing"]}],
     "contexts": [
         {"title": "Lake Garda", "is_supporting": True,
          "paragraph_text": "Lake Garda is the largest lake in Italy, popular with windsurfers."}]},
]
CMRC = {"version": "v1", "data": [{"title": "长江", "paragraphs": [
    {"id": "p1", "context": "长江是中国最长的河流，全长约6300公里，流经十一个省级行政区。",
     "qas": [{"id": "c1", "question": "中国最长的河流有多长？", "answers": [{"text": "6300公里"}]}]},
    {"id": "p2", "context": "黄河是中国第二长河，被称为中华民族的母亲河。",
     "qas": [{"id": "c2", "question": "哪条河被称为母亲河？", "answers": [{"text": "黄河"}]}]}]}]}


def test_every_set_is_scored_against_its_own_tenant_and_the_mixed_one(tmp_path):
    hotpot = tmp_path / "hotpot.jsonl"
    hotpot.write_text("\n".join(json.dumps(r) for r in HOTPOT), encoding="utf-8")
    cmrc = tmp_path / "cmrc.json"
    cmrc.write_text(json.dumps(CMRC, ensure_ascii=False), encoding="utf-8")
    config = MixedConfig(datasets=[hotpot, cmrc], budgets=dict(DEFAULT_BUDGETS), data_dir=tmp_path / "data",
                         out_dir=tmp_path / "out", progress=False)
    report = evaluate_mixed(config)
    by_set = {row["set"]: row for row in report["sets"]}
    assert set(by_set) == {"hotpotqa", "cmrc"}
    assert by_set["hotpotqa"]["questions"] == 2 and by_set["cmrc"]["questions"] == 2
    for row in by_set.values():  # tiny sets: everything fits, alone and mixed
        assert row["single"]["soft"] == 1.0 and row["mixed"]["soft"] == 1.0
    with build_services(settings_for(tmp_path / "data")) as services:
        mixed = {i.source_id for i in services.vectors.scroll(SearchFilter(tenant=MIXED_TENANT))}
    assert {"p1", "p2"} <= mixed and any("Munich" in s for s in mixed)  # both sets in one tenant
    lines = (tmp_path / "out" / "mixed.jsonl").read_text(encoding="utf-8").splitlines()
    assert {(json.loads(x)["set"], json.loads(x)["where"]) for x in lines} == {
        (s, w) for s in ("hotpotqa", "cmrc") for w in ("single", "mixed")}
    assert "| cmrc (1000) | 2 |" in markdown(report)
