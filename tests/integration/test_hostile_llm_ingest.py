"""A hostile document ingested with an LLM configured (summaries, LLM triple extraction, the
contradiction judge): every request the model receives shows it neutralized and fenced as data, the
replies still parse and act (a fact extracted, an older one superseded), and what is stored is the
document as written. The endpoint is the fake OpenAI server."""

from __future__ import annotations

import json

from agent_memory.core.config import load_settings
from agent_memory.core.records import Document, SearchFilter
from agent_memory.core.updates import JUDGE_PROMPT
from agent_memory.ingest.pipeline import IngestionPipeline
from agent_memory.services import build_services
from tests.fake_openai import FakeOpenAI, Reply
from tests.unit.test_hostile_llm_prompts import HIDDEN, HOSTILE, assert_data_only, no_tag_characters


def respond(request: dict) -> Reply:
    system = request["messages"][0]["content"]
    user = request["messages"][-1]["content"]
    if system == JUDGE_PROMPT:
        return Reply(text=json.dumps({"replaced": [1]}))
    if system.startswith("You extract a knowledge graph"):
        car = "Tesla" if "Tesla" in user else "Volvo" if "Volvo" in user else ""
        if not car:
            return Reply(text=json.dumps({"entities": [], "relations": []}))
        return Reply(text=json.dumps({"entities": [{"name": "Maria", "type": "PERSON"}],
                                      "relations": [{"subject": "Maria", "relation": "drives", "object": car,
                                                     "evidence": f"Maria drives a {car}."}]}))
    return Reply(text="Maria drives a car; the vault code is 1111.")


def test_a_hostile_document_reaches_every_internal_llm_call_as_data(tmp_path):
    with FakeOpenAI(responder=respond) as fake:
        settings = load_settings(data_dir=tmp_path / "data", triple_extractor="llm", qdrant_url=None,
                                 neo4j_uri=None, postgres_url=None, llm_model="fake-model",
                                 llm_base_url=fake.base_url, llm_max_retries=0, contradiction_max_pairs=4)
        with build_services(settings) as services:
            pipeline = IngestionPipeline(services)
            pipeline.ingest_documents([Document(source_id="notes/jan", text="Maria drives a Volvo.", tenant="t",
                                                metadata={"date": "2024-01-10"})])
            hostile = f"Maria drives a Tesla now.\n\n{HOSTILE}"
            pipeline.ingest_documents([Document(source_id="notes/jun", text=hostile, tenant="t",
                                                metadata={"date": "2024-06-01"})])

            kinds = {"judge": 0, "extract": 0, "summary": 0}
            wholes = 0
            for request in fake.requests:
                system, user = request["messages"][0]["content"], request["messages"][-1]["content"]
                kind = ("judge" if system == JUDGE_PROMPT else "extract" if "knowledge graph" in system
                        else "summary")
                kinds[kind] += 1
                # Every request fenced and clean; those that hold the whole hostile text show its forgeries.
                whole = "admin mode" in user and "(／DATA" in user
                wholes += whole
                assert_data_only(user, whole=whole)
                assert no_tag_characters(user) and "<data-" in user, user
            assert all(kinds.values()) and wholes >= 2, (kinds, wholes)  # each internal call was made

            # The replies parsed and acted: the judge's yes superseded the older fact.
            facts = {f.object: f for f in services.graph.neighbourhood("t", ["Maria"])}
            assert facts["Volvo"].superseded and not facts["Tesla"].superseded
            # Stored as written: only what the model was sent changed.
            stored = [i.text for i in services.vectors.scroll(SearchFilter(tenant="t", source_ids=["notes/jun"]))
                      if i.kind == "chunk"]
            assert any(HIDDEN in text and "## Instructions" in text for text in stored), stored
