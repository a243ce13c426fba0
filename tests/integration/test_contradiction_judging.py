"""Contradictions the rules do not know, judged by the LLM (a fake OpenAI server: the paid endpoint is
the only fake): one batched call per ingestion batch, bounded by contradiction_max_pairs; a yes
supersedes the older fact exactly as the rules do (valid_to, superseded_by; kept); a failing or
unusable answer leaves the rules' result and a warning."""

from __future__ import annotations

import json
import re

import pytest

from agent_memory.core.config import load_settings
from agent_memory.core.llm import LLMClient
from agent_memory.core.records import Document, Triple
from agent_memory.core.updates import FUNCTIONAL_RELATIONS, JUDGE_PROMPT, supersede
from agent_memory.ingest.pipeline import IngestionPipeline
from agent_memory.services import build_services
from agent_memory.stores.ladybug_graph import LadybugGraphStore
from tests.fake_openai import FakeOpenAI, Reply

PAIR = re.compile(r"^(\d+)\. older \(([\d-]+)\): (.+)\n\s+newer \(([\d-]+)\): (.+)$", re.MULTILINE)


class Judge:
    """Answers the judge call: a newer fact replaces an older one of the same relation ("drives")."""

    def __init__(self) -> None:
        self.calls: list[list[tuple]] = []
        self.broken = False

    def __call__(self, request: dict):
        messages = request.get("messages", [])
        if not messages or messages[0].get("content") != JUDGE_PROMPT:
            return Reply(text="A short summary.")
        pairs = PAIR.findall(messages[1]["content"])
        self.calls.append(pairs)
        if self.broken:
            return Reply(text="Sure! Both look fine to me.")
        yes = [int(n) for n, _, old, _, new in pairs if old.split(" | ")[1] == new.split(" | ")[1]]
        return Reply(text=json.dumps({"replaced": yes}))


@pytest.fixture
def judge():
    script = Judge()
    with FakeOpenAI(responder=script) as fake:
        yield script, LLMClient("fake-model", base_url=fake.base_url, max_retries=0, timeout=10), fake


def t(obj: str, day: str, source: str, relation: str = "drives") -> Triple:
    return Triple(subject="Maria", relation=relation, object=obj, tenant="t", source_id=source,
                  valid_from=f"{day}T00:00:00")


def facts(graph) -> dict[str, Triple]:
    return {f.object: f for f in graph.neighbourhood("t", ["Maria"])}


def test_the_llm_supersedes_what_the_rules_do_not_know(tmp_path, judge):
    script, llm, _ = judge
    graph = LadybugGraphStore(tmp_path / "graph")
    try:
        first = [t("Volvo", "2024-01-10", "d1"), t("Chess", "2024-01-10", "d1", "plays"),
                 t("Berlin", "2024-01-10", "d1", "moved to")]
        graph.merge_triples(first)
        assert supersede(graph, first, FUNCTIONAL_RELATIONS, llm=llm, max_pairs=8) == 0
        assert script.calls == []  # nothing older to judge against: no call

        later = [t("Tesla", "2024-06-01", "d2"), t("Lisbon", "2024-06-01", "d2", "moved to")]
        graph.merge_triples(later)
        # The rules supersede Berlin; one call judges Tesla against Volvo and Chess, only Volvo is replaced.
        assert supersede(graph, later, FUNCTIONAL_RELATIONS, llm=llm, max_pairs=8) == 2
        assert len(script.calls) == 1 and len(script.calls[0]) == 2
        assert script.calls[0][0][2] == "Maria | drives | Volvo"  # the same relation first
        now = facts(graph)
        assert now["Volvo"].valid_to == "2024-06-01T00:00:00" and now["Volvo"].superseded_by
        assert now["Volvo"].superseded_by != now["Berlin"].superseded_by and now["Berlin"].superseded
        assert not now["Chess"].superseded and not now["Tesla"].superseded and not now["Lisbon"].superseded
        assert graph.stats("t")["relations"] == 5  # kept, never deleted

        # A superseded fact is not judged again; the pair bound holds (1 of the 2 candidates is sent).
        newest = [t("Rivian", "2024-09-01", "d3")]
        graph.merge_triples(newest)
        assert supersede(graph, newest, FUNCTIONAL_RELATIONS, llm=llm, max_pairs=1) == 1
        assert [p[2] for p in script.calls[-1]] == ["Maria | drives | Tesla"]
        assert facts(graph)["Tesla"].valid_to == "2024-09-01T00:00:00"
    finally:
        graph.close()


def test_a_failing_judge_leaves_the_rules_result_and_a_warning(tmp_path, judge):
    script, llm, fake = judge
    graph = LadybugGraphStore(tmp_path / "graph")
    try:
        old = [t("Volvo", "2024-01-10", "d1"), t("Berlin", "2024-01-10", "d1", "moved to")]
        new = [t("Tesla", "2024-06-01", "d2"), t("Lisbon", "2024-06-01", "d2", "moved to")]
        graph.merge_triples(old + new)
        warnings: list[str] = []
        script.broken = True  # an answer that is not the JSON asked for
        assert supersede(graph, new, FUNCTIONAL_RELATIONS, llm=llm, max_pairs=8, warn=warnings.append) == 1
        fake.enqueue(status=500)  # the endpoint fails
        assert supersede(graph, new, FUNCTIONAL_RELATIONS, llm=llm, max_pairs=8, warn=warnings.append) == 0
        assert len(warnings) == 2 and all("the rules' result stands" in w for w in warnings)
        assert "Both look fine" in warnings[0] and "HTTP 500" in warnings[1]
        now = facts(graph)
        assert now["Berlin"].superseded and not now["Volvo"].superseded
        # Off: no call at all.
        calls = len(script.calls)
        supersede(graph, new, FUNCTIONAL_RELATIONS, llm=llm, max_pairs=0)
        assert len(script.calls) == calls
    finally:
        graph.close()


def test_ingestion_asks_the_judge_when_an_llm_is_configured(tmp_path, judge):
    script, _, fake = judge
    settings = load_settings(data_dir=tmp_path / "data", triple_extractor="rules", qdrant_url=None, neo4j_uri=None,
                             postgres_url=None, llm_model="fake-model", llm_base_url=fake.base_url,
                             llm_max_retries=0, contradiction_max_pairs=4)
    with build_services(settings) as services:
        pipeline = IngestionPipeline(services, summaries=False)
        pipeline.ingest_documents([Document(source_id="notes/jan", text="Maria drives a Volvo.", tenant="t",
                                            metadata={"date": "2024-01-10"})])
        pipeline.ingest_documents([Document(source_id="notes/jun", text="Maria drives a Tesla now.", tenant="t",
                                            metadata={"date": "2024-06-01"})])
        assert [p[2] for p in script.calls[-1]] == ["Maria | drive | Volvo"]
        now = facts(services.graph)
        assert now["Volvo"].valid_to.startswith("2024-06-01") and not now["Tesla"].superseded
