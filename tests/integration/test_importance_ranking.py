"""Importance per item: set at ingestion, a reranker bonus by its configured weight, shown in the debug dump."""

from __future__ import annotations

from agent_memory.core.records import Document, MemoryItem
from agent_memory.index.importance import importance_of
from agent_memory.ingest.pipeline import IngestionPipeline
from agent_memory.retrieval.config import RetrievalConfig
from agent_memory.retrieval.debug import render_dump
from agent_memory.retrieval.pipeline import RetrievalPipeline

QUESTION = "Which door code opens the Nordwerk storage room?"


def ranked(services, weight: float) -> list[str]:
    config = RetrievalConfig().model_copy(update={"importance_signal": weight})
    with RetrievalPipeline(services, config) as pipeline:
        result = pipeline.run(QUESTION, tenant="default", budget=800, debug=True)
    assert "importance" in render_dump(result)
    return [row["source_id"] for row in result.fused]


def test_importance_changes_the_ranking_as_configured(services):
    IngestionPipeline(services, summaries=False).ingest_documents([
        Document(source_id="codes/old-note", text="The door code of the Nordwerk storage room is 4471.",
                 metadata={"importance": 1.0}),
        Document(source_id="codes/official", text="Door code for the Nordwerk storage room: 9902.",
                 metadata={"importance": 0.0}),
    ])
    neutral, strong = ranked(services, 0.0), ranked(services, 50.0)
    assert neutral[0] == "codes/official"  # without the signal, the wording decides
    assert strong[0] == "codes/old-note"  # a heavy importance weight lifts the important note
    assert ranked(services, 50.0) == strong


def test_importance_at_ingestion():
    def item(**metadata):
        return MemoryItem(id="i", tenant="t", source_id="s", kind="turn", text="x", metadata=metadata)

    assert importance_of(item()) == 0.5  # what benchmarks and plain documents get: the ranking among them stays
    assert importance_of(item(promoted=True, reasons=["decision", "fact"], retention="strict")) == 0.9
    assert importance_of(item(promoted=True, reasons=[], retention="forgettable")) == 0.2
    assert importance_of(item(importance="high")) == 0.5 and importance_of(item(importance=7)) == 1.0
