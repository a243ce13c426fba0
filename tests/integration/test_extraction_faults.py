"""A text the triple extractor cannot read costs only its own triples, never its batch's."""

from __future__ import annotations

from agent_memory.core.config import load_settings
from agent_memory.core.records import Document
from agent_memory.ingest.pipeline import IngestionPipeline
from agent_memory.ingest.report import IngestReport
from agent_memory.services import build_services

DOCS = [
    Document(source_id="notes/velmora.md", text="Velmora Harbour Company was founded by Mara Quist in 1801."),
    Document(source_id="notes/poison.md", text="Ardent Salt Works was founded by Oskar Pell in 1802. POISON"),
    Document(source_id="notes/keswick.md", text="Keswick Timber Company was founded by Lunden Rhyl in 1803."),
]


def test_one_unreadable_text_loses_only_its_own_triples(tmp_path):
    settings = load_settings(data_dir=tmp_path / "data", triple_extractor="rules", qdrant_url=None,
                             neo4j_uri=None, postgres_url=None)
    with build_services(settings) as services:
        pipeline = IngestionPipeline(services)
        real = pipeline.extractor.extract_many

        def extract_many(texts, **kwargs):
            # An extractor bug on one text (as spaCy raised on "I do-"): the whole call fails.
            if any("POISON" in t for t in texts):
                raise ValueError("[E031] Invalid token: empty string")
            return real(texts, **kwargs)

        pipeline.extractor.extract_many = extract_many
        report = IngestReport()
        pipeline.ingest_documents(DOCS, report)

        assert report.sources_written == 3  # every document is stored, the unreadable one too
        assert len(report.warnings) == 1 and "notes/poison.md" in report.warnings[0]
        names = set(services.graph.entity_names("default"))
        assert {"Mara Quist", "Lunden Rhyl"} <= names and "Oskar Pell" not in names
        entries = services.catalog.get_many("default", [d.source_id for d in DOCS])
        assert entries["notes/velmora.md"].n_triples > 0 and entries["notes/keswick.md"].n_triples > 0
        assert entries["notes/poison.md"].n_triples == 0
