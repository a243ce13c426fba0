"""A question is embedded only into the spaces that hold its tenant's items, and a space another
process filled is seen once the occupancy read ages out."""

from __future__ import annotations

import pytest

from agent_memory.core.config import load_settings
from agent_memory.core.records import Document
from agent_memory.ingest.pipeline import IngestionPipeline
from agent_memory.retrieval.pipeline import RetrievalPipeline
from agent_memory.services import build_services
from agent_memory.stores.spaced import SpacedVectorStore


@pytest.fixture
def services(tmp_path):
    with build_services(load_settings(data_dir=tmp_path, triple_extractor="none", qdrant_url=None,
                                      neo4j_uri=None, postgres_url=None)) as svc:
        yield svc


def _ingest(services, tenant: str, source_id: str, text: str) -> None:
    IngestionPipeline(services, summaries=False).ingest_documents([Document(source_id=source_id, text=text,
                                                                            tenant=tenant)])


def test_each_tenant_is_asked_in_its_own_spaces(services, monkeypatch):
    minilm, e5 = services.embedder.default, services.embedder.multilingual
    _ingest(services, "en", "doc/ferry", "The ferry to the island leaves at dawn.")
    _ingest(services, "zh", "doc/bridge", "港珠澳大桥全长五十五公里，连接香港、珠海和澳门。")
    assert services.vectors.occupied_spaces("en") == [minilm]
    assert services.vectors.occupied_spaces("zh") == [e5]
    assert services.vectors.occupied_spaces() == [minilm, e5]

    asked: list[list[str]] = []
    embed_query = services.embedder.embed_query
    monkeypatch.setattr(services.embedder, "embed_query",
                        lambda text, spaces=None: asked.append(list(spaces or [])) or embed_query(text, spaces))
    with RetrievalPipeline.from_services(services) as pipeline:
        english = pipeline.run("When does the ferry leave?", tenant="en", budget=300, debug=True)
        assert asked == [[minilm]] and "[S:doc/ferry]" in english.prompt
        asked.clear()
        chinese = pipeline.run("How long is the bridge to Macau?", tenant="zh", budget=300, debug=True)
        assert asked == [[e5]] and "[S:doc/bridge]" in chinese.prompt  # cross-lingual, e5 alone


def test_a_space_another_process_filled_is_seen_when_the_read_ages_out(services, monkeypatch):
    minilm, e5 = services.embedder.default, services.embedder.multilingual
    clock = [1000.0]
    monkeypatch.setattr("agent_memory.stores.spaced.time.monotonic", lambda: clock[0])
    _ingest(services, "t", "doc/ferry", "The ferry to the island leaves at dawn.")
    # A second process over the same collections (an API replica), and the one that writes.
    replica = SpacedVectorStore(services.vectors.stores, minilm, services.vectors.calibrate, occupancy_ttl_s=10.0)
    assert replica.occupied_spaces("t") == [minilm]
    assert services.vectors.occupied_spaces("t") == [minilm]
    _ingest(services, "t", "doc/bridge", "港珠澳大桥全长五十五公里。")
    assert services.vectors.occupied_spaces("t") == [minilm, e5]  # the writer knows at once
    assert replica.occupied_spaces("t") == [minilm]  # the replica trusts its read for a while
    clock[0] += 10.5
    assert replica.occupied_spaces("t") == [minilm, e5]


def test_a_tenant_with_nothing_stored_is_asked_in_the_default_space(services):
    assert services.vectors.occupied_spaces("nobody") == [services.embedder.default]
