"""An item lives in exactly one embedding space, and keeping it so costs the ingestion nothing on
the common path: only the items of a source being re-written are looked for in the other spaces."""

from __future__ import annotations

import pytest

from agent_memory.core.config import load_settings
from agent_memory.core.records import Document
from agent_memory.ingest.pipeline import IngestionPipeline
from agent_memory.services import build_services

FIGURES = "2019 2020 2021 2022 2023: 41, 43, 47, 52, 58 (+7%, +9%, +11%)."  # no language of its own


@pytest.fixture
def services(tmp_path):
    with build_services(load_settings(data_dir=tmp_path, triple_extractor="none", qdrant_url=None,
                                      neo4j_uri=None, postgres_url=None)) as svc:
        yield svc


def _scroll(store, tenant):
    from agent_memory.core.records import SearchFilter

    return list(store.scroll(SearchFilter(tenant=tenant)))


def _lookups(services, monkeypatch) -> list[int]:
    """Existence queries the spaces answer, one entry (the number of IDs) per query."""
    calls: list[int] = []
    for store in services.vectors.stores.values():
        inner = store.existing_ids
        monkeypatch.setattr(store, "existing_ids", lambda ids, inner=inner: calls.append(len(ids)) or inner(ids))
    return calls


def test_new_sources_are_written_without_asking_the_other_spaces(services, monkeypatch):
    assert len(services.vectors.stores) == 2
    calls = _lookups(services, monkeypatch)
    pipeline = IngestionPipeline(services, summaries=False)
    pipeline.ingest_documents([Document(source_id=f"doc/{i}", text=f"The ferry number {i} leaves at dawn.")
                               for i in range(5)] + [Document(source_id="zh/1", text="港珠澳大桥全长五十五公里。")])
    assert calls == []
    pipeline.ingest_documents([Document(source_id="doc/0", text="The ferry number 0 now leaves at noon.")])
    assert calls and max(calls) <= 1  # a re-written source: only its own items are looked for


def test_a_document_re_ingested_in_another_language_leaves_no_vector_in_the_old_space(services):
    minilm, e5 = services.embedder.default, services.embedder.multilingual
    pipeline = IngestionPipeline(services, summaries=False)
    # The text changes language: new item IDs, the old ones are stale and deleted.
    pipeline.ingest_documents([Document(source_id="doc/a", text="The bridge is fifty-five kilometres long.")])
    pipeline.ingest_documents([Document(source_id="doc/a", text="港珠澳大桥全长五十五公里，连接香港、珠海和澳门。")])
    # Only the title changes language: the chunk keeps its ID (it hashes the text) and moves.
    pipeline.ingest_documents([Document(source_id="doc/b", title="Yearly ridership", text=FIGURES)])
    [chunk_id] = services.catalog.get("default", "doc/b").item_ids[:1]
    assert chunk_id in {i.id for i in _scroll(services.vectors.stores[minilm], "default")}
    pipeline.ingest_documents([Document(source_id="doc/b", title="港珠澳大桥年度客流量统计", text=FIGURES)])
    assert services.catalog.get("default", "doc/b").item_ids[:1] == [chunk_id]
    held = {name: {(i.source_id, i.id) for i in _scroll(store, "default")}
            for name, store in services.vectors.stores.items()}
    assert {sid for sid, _ in held[minilm]} == set()
    assert {sid for sid, _ in held[e5]} == {"doc/a", "doc/b"}
    assert services.vectors.count() == len(held[e5])  # each item once
