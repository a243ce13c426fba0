"""Benchmark gold labels stay in the harness: LongMemEval's `has_answer` is evidence for scoring,
never a field of a stored item, whether the file is ingested by the product or by the harness."""

from __future__ import annotations

import json

from agent_memory.core.config import load_settings
from agent_memory.core.records import SearchFilter
from agent_memory.evaluation.datasets import load_dataset
from agent_memory.evaluation.runner import ingest_material
from agent_memory.ingest.file_ingestion import ingest_paths
from agent_memory.ingest.pipeline import IngestionPipeline
from agent_memory.services import build_services

RECORD = {
    "question_id": "q-gold", "question_type": "single-session-user", "question": "Where did I park?",
    "answer": "level 3", "question_date": "2023/05/30 (Tue) 10:00",
    "haystack_session_ids": ["s1", "s2"], "haystack_dates": ["2023/05/20 (Sat) 09:00", "2023/05/21 (Sun) 09:00"],
    "haystack_sessions": [
        [{"role": "user", "content": "I parked on level 3 of the airport garage.", "has_answer": True},
         {"role": "assistant", "content": "Noted: level 3."}],
        [{"role": "user", "content": "Any tips for packing light?"},
         {"role": "assistant", "content": "Roll your clothes."}]],
    "answer_session_ids": ["s1"],
}


def _payload_keys(services, tenant: str) -> set[str]:
    keys: set[str] = set()
    for item in services.vectors.scroll(SearchFilter(tenant=tenant)):
        keys |= set(item.payload()) | set(item.metadata)
    return keys


def test_has_answer_never_reaches_a_stored_item(tmp_path):
    path = tmp_path / "lme.json"
    path.write_text(json.dumps([RECORD]), encoding="utf-8")
    evalset = load_dataset(path)
    [question] = evalset.questions
    assert [e.source_id for e in question.evidence] == ["s1/t0"]  # the harness still knows the evidence
    settings = load_settings(data_dir=tmp_path / "data", triple_extractor="none")
    with build_services(settings) as services:
        ingest_material(services, evalset.material(question.tenant), progress=False)
        report = ingest_paths(IngestionPipeline(services), [path], tenant="product")
        assert report.turns >= 4
        for tenant in (question.tenant, "product"):
            assert services.vectors.count(SearchFilter(tenant=tenant)) >= 4
            keys = _payload_keys(services, tenant)
            assert "has_answer" not in keys and "is_supporting" not in keys
