"""The retrieval pipeline on real stores: the sample corpus ingested once, then questions → prompts."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil

import pytest

from agent_memory.core.errors import BudgetError
from agent_memory.core.records import Document
from agent_memory.core.text import split_sentences
from agent_memory.ingest.file_ingestion import ingest_paths
from agent_memory.ingest.pipeline import IngestionPipeline, file_source_id
from agent_memory.retrieval.compress import GAP
from agent_memory.retrieval.pipeline import RetrievalPipeline
from agent_memory.retrieval.render import display_text
from tests.helpers import SAMPLES

TAG = re.compile(r"\[S:([^\]]*)\]")
TURNS = {f"demo-session/{n}" for n in range(1, 5)}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    target = tmp_path_factory.mktemp("retrieval") / "corpus"
    shutil.copytree(SAMPLES, target)
    return target


@pytest.fixture(scope="module")
def services(corpus):
    from agent_memory.core.config import load_settings
    from agent_memory.services import build_services

    settings = load_settings(data_dir=corpus.parent / "data", triple_extractor="rules", qdrant_url=None,
                             neo4j_uri=None)
    with build_services(settings) as svc:
        ingestion = IngestionPipeline(svc)
        report = ingest_paths(ingestion, [corpus], recursive=True)
        assert report.ok and report.files_ingested == 5, report.render()
        # Another tenant with its own note about the same product: it must never leak into default.
        ingestion.ingest_documents([Document(source_id="other-lab-note", tenant="other",
                                             text="In the other lab the X-300 sensor draws 11 mA of power.")])
        yield svc


@pytest.fixture(scope="module")
def pipeline(services):
    pipe = RetrievalPipeline.from_services(services)
    yield pipe
    pipe.close()


@pytest.fixture(scope="module")
def ids(corpus):
    docs = corpus / "docs"
    return {"chinese": file_source_id(docs / "chinese-notes.txt", corpus.parent),
            "stores": file_source_id(docs / "embedded-stores.md", corpus.parent),
            "retention": file_source_id(docs / "retention.html", corpus.parent)}


def cited(result) -> set[str]:
    """Source IDs tagged in the prompt (the instructions mention "[S:id]" literally)."""
    return set(TAG.findall(result.prompt.replace("[S:id]", "")))


def check_budget(services, result, budget: int) -> None:
    assert services.counter.count(result.prompt) == result.total_tokens <= budget


# ---- routes ---------------------------------------------------------------------------------------------


def test_every_route_returns_candidates_with_source_ids(services):
    # Stored summaries are off by default (they took the room of what they summarize); on here.
    with RetrievalPipeline.from_services(services, overrides={"stored_summaries": True}) as pipeline:
        result = pipeline.run("Which sensor did we choose for the greenhouse?", tenant="default",
                              session_id="demo-session", budget=1500, debug=True)
    for route in ("dense", "keyword", "summaries", "recent"):
        rows = result.routes[route]
        assert rows, f"route {route} returned nothing"
        assert all(row["source_id"] and row["id"] and row["rank"] == n for n, row in enumerate(rows, start=1))
    assert {row["source_id"] for row in result.routes["recent"]} == TURNS
    assert {row["kind"] for row in result.routes["summaries"]} == {"summary"}
    assert "demo-session#summary" in {row["source_id"] for row in result.routes["summaries"]}
    # Its four turns are in the prompt, so the session's summary gives way: nothing twice.
    assert "[S:demo-session#summary]" not in result.prompt
    assert any(d.target.startswith("demo-session") is False and "demo-session is among" in d.reason
               for d in result.decisions)
    # The session's turns that recall ranked are placed once each, never again from the recent view.
    for turn in TURNS:
        assert result.prompt.count(f"[S:{turn}]") == 1
    for section in result.prompt.split("\n## ")[1:]:  # one header per section: the session and its day
        assert section.count("### demo-session, 2 Nov 2026") <= 1
    assert "### demo-session, 2 Nov 2026" in result.prompt
    check_budget(services, result, 1500)


def test_graph_route_answers_an_entity_question(pipeline, services):
    result = pipeline.run("Who founded Acme Corporation?", tenant="default", budget=1500, debug=True)
    graph = result.routes["graph"]
    assert graph and graph[0]["source_id"] == "acme"
    facts = result.routes["graph_facts"]
    assert any("Acme Corporation" in (f["subject"], f["object"]) and f["source_id"] == "acme" for f in facts)
    # The Acme page is placed whole, so its own facts give their room to it (nothing twice).
    assert "[S:acme]" in result.prompt
    facts_section = result.prompt.split("## Known facts")[1].split("\n\n")[0] if "## Known facts" in result.prompt else ""
    assert "[S:acme]" not in facts_section
    assert any("stated by a placed passage" in d.reason for d in result.decisions)
    # Dense and graph agree on the Acme page: it is the top fused candidate and the first passage cited.
    assert result.fused[0]["source_id"] == "acme" and set(result.fused[0]["routes"]) >= {"dense", "graph"}
    assert [p.source_id for p in result.passages if p.kind == "chunk"][0] == "acme"


def test_no_session_means_no_recent_turns(pipeline):
    result = pipeline.run("Which sensor did we choose?", tenant="default", budget=800, debug=True)
    assert result.routes["recent"] == [] and "recent" not in result.sections


# ---- the right passage ----------------------------------------------------------------------------------


@pytest.mark.parametrize("question, expected", [
    ("What is the power draw of the X-300?", "product-x300"),
    ("图数据库保存什么？", "chinese"),
    ("Which vector store does agent-memory embed, and why?", "stores"),
    ("Which retention class survives compaction the longest?", "retention"),
])
def test_the_right_passage_is_cited(pipeline, services, ids, question, expected):
    source = ids.get(expected, expected)
    result = pipeline.run(question, tenant="default", budget=600, debug=True)
    assert f"[S:{source}]" in result.prompt
    assert source in result.used_source_ids[:3], result.used_source_ids
    assert source in [row["source_id"] for row in result.fused[:3]]
    check_budget(services, result, 600)


def test_chinese_question_finds_the_chinese_note_by_keyword(pipeline, ids):
    result = pipeline.run("图数据库保存什么？", tenant="default", budget=600, debug=True)
    assert result.routes["keyword"][0]["source_id"] == ids["chinese"]
    assert result.fused[0]["source_id"] == ids["chinese"]


# ---- filters --------------------------------------------------------------------------------------------


def test_source_id_filter_limits_every_route(pipeline):
    allowed = {"product-x300", "acme"}
    result = pipeline.run("Who makes the X-300 and how much power does it draw?", tenant="default", budget=1500,
                          debug=True, source_ids=sorted(allowed))
    rows = [row for rows in result.routes.values() for row in rows]
    assert rows and {row["source_id"] for row in rows} <= allowed
    assert set(result.used_source_ids) <= allowed and cited(result) <= allowed
    assert "product-x300" in result.used_source_ids


def test_kind_filter_limits_the_passages(pipeline):
    result = pipeline.run("Which sensor did we order?", tenant="default", budget=1500, debug=True, kinds=["turn"])
    content = [row for name in ("dense", "keyword", "graph", "summaries") for row in result.routes[name]]
    assert content and {row["kind"] for row in content} == {"turn"}
    assert result.used_source_ids and set(result.used_source_ids) <= TURNS


def test_kind_filter_keeps_other_kinds_out_of_the_known_facts(pipeline):
    # Facts are cited with their source's tag: under kinds=["turn"], no chunk source may be cited.
    result = pipeline.run("Who founded Acme Corporation?", tenant="default", budget=1500, debug=True,
                          kinds=["turn"])
    assert cited(result) <= TURNS, f"non-turn sources cited: {sorted(cited(result) - TURNS)}"


def test_source_id_filter_holds_for_neighbour_turns(pipeline):
    result = pipeline.run("What did the assistant say about the X-300?", tenant="default", budget=1500,
                          debug=True, source_ids=["demo-session/2"])
    assert result.used_source_ids == ["demo-session/2"]
    assert cited(result) == {"demo-session/2"}


def test_time_filter_excludes_every_item(pipeline):
    result = pipeline.run("Who founded Acme Corporation?", tenant="default", budget=1500, debug=True,
                          created_after=4102444800.0)  # 2100-01-01: nothing was stored after it
    assert all(rows == [] for name, rows in result.routes.items() if name != "graph_facts")
    assert result.used_source_ids == []


def test_time_filter_keeps_graph_facts_out(pipeline):
    result = pipeline.run("Who founded Acme Corporation?", tenant="default", budget=1500, debug=True,
                          created_after=4102444800.0)
    assert not cited(result) and "## Known facts" not in result.prompt


def test_tenants_are_isolated(pipeline, services):
    question = "How much power does the X-300 sensor draw?"
    mine = pipeline.run(question, tenant="default", budget=1500, debug=True, session_id="demo-session")
    assert "other-lab-note" not in cited(mine) and "11 mA" not in mine.prompt
    theirs = pipeline.run(question, tenant="other", budget=1500, debug=True, session_id="demo-session")
    rows = [row for rows in theirs.routes.values() for row in rows]
    assert rows and {row.get("source_id") for row in rows} == {"other-lab-note"}
    assert theirs.used_source_ids == ["other-lab-note"] and cited(theirs) == {"other-lab-note"}
    nobody = pipeline.run(question, tenant="nobody", budget=1500, debug=True, session_id="demo-session")
    assert all(rows == [] for rows in nobody.routes.values())
    assert nobody.used_source_ids == [] and not cited(nobody) and set(nobody.sections) == {"instructions", "question"}


# ---- the budget -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("budget", [40, 120, 300, 700, 4000])
def test_budget_is_respected(pipeline, services, budget):
    result = pipeline.run("What did we decide about the X-300 and who makes it?", tenant="default",
                          session_id="demo-session", budget=budget, debug=True)
    check_budget(services, result, budget)
    assert result.budget == budget and result.tokenizer == services.counter.name
    assert all(0 < tokens <= result.total_tokens for tokens in result.sections.values())
    if budget >= 4000:
        # The whole corpus fits: nothing was dropped for want of room.
        assert not [d for d in result.assembly_drops if "budget" in d.reason or "trimmed" in d.reason]


def test_more_budget_never_means_fewer_sources(pipeline):
    question = "What did we decide about the X-300 and who makes it?"
    used = [len(pipeline.run(question, tenant="default", budget=b).used_source_ids) for b in (150, 400, 1200, 4000)]
    assert used == sorted(used) and used[-1] > used[0]


def test_budget_smaller_than_the_question_raises(pipeline):
    with pytest.raises(BudgetError, match="budget of 5 tokens"):
        pipeline.run("What is the power draw of the X-300 sensor made by Acme Corporation in Lyon, France?",
                     tenant="default", budget=5)


def test_debug_dict_has_every_stage(pipeline):
    result = pipeline.run("Who founded Acme Corporation?", tenant="default", budget=800, debug=True)
    dump = result.debug_dict()
    for key in ("routes", "fused", "decisions", "assembly_drops", "sections", "timings_ms", "prompt", "used_source_ids"):
        assert key in dump
    assert {"dense", "keyword", "graph", "summaries", "recent"} <= set(dump["routes"])
    assert {"encode", "routes", "fusion", "rerank", "dedup", "assemble", "total"} <= set(dump["timings_ms"])
    assert all(row["routes"] for row in dump["fused"])
    assert json.loads(json.dumps(dump, ensure_ascii=False))["prompt"] == result.prompt
    assert dump == dataclasses.asdict(result)  # built field by field, the same as the deep copy


def test_without_debug_the_routes_are_not_dumped(pipeline):
    result = pipeline.run("Who founded Acme Corporation?", tenant="default", budget=800)
    assert result.routes == {} and result.fused == [] and result.prompt and result.timings_ms["total"] >= 0


def test_tiny_budget_compresses_a_long_passage_instead_of_truncating(pipeline, services, ids):
    source = ids["stores"]
    result = pipeline.run("Which vector store does agent-memory embed, and why?", tenant="default", budget=150,
                          debug=True, source_ids=[source])
    check_budget(services, result, 150)
    [decision] = [d for d in result.decisions if d.action == "compressed"]
    assert decision.target == source and decision.stage == "compact"
    assert decision.tokens_before > decision.tokens_after > 0
    [passage] = [p for p in result.passages if p.source_id == source]
    assert passage.compressed and passage.tokens < passage.original_tokens
    # Whole sentences of the original, with gap markers where sentences were left out.
    [original] = services.vectors.get(passage.item_ids)
    sentences = split_sentences(display_text(original.text))
    assert GAP.strip() in passage.text
    body = passage.text.removeprefix(GAP.strip() + " ").removesuffix(" " + GAP.strip())
    for segment in body.split(GAP):
        assert all(s in sentences for s in split_sentences(segment)), segment
    assert passage.text in result.prompt
