"""Every format through the ingestion job into the real stores: PDF, DOCX, source code, Markdown with
front matter (a title, filterable metadata, no front matter in chunks or triples), HTML without its
boilerplate; retrieval finds each."""

from __future__ import annotations

from agent_memory.core.records import SearchFilter
from agent_memory.ingest.file_ingestion import ingest_paths
from agent_memory.ingest.pipeline import IngestionPipeline
from agent_memory.retrieval.pipeline import RetrievalPipeline
from tests.documents import FRONT, write_docx, write_pdf

PAGE = """<html><head><title>Hall Nordwerk</title></head><body>
<nav>Home Products Careers Investor relations</nav>
<main><p>Hall Nordwerk stores the spare Quovadis scanners on shelf 12.</p></main>
<footer>Copyright Acme. Cookie settings.</footer></body></html>"""
CODE = '''"""Billing helpers."""


def invoice_total(lines):
    """The Zephyr invoice total: the sum of line amounts, in cents."""
    return sum(line.amount for line in lines)
'''


def texts(services, source_id: str) -> list[str]:
    return [i.text for i in services.vectors.scroll(SearchFilter(tenant="default", source_ids=[source_id]))]


def test_every_format_is_ingested_and_found(services, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    write_pdf(corpus / "manual.pdf", [["The Kestrel pump P-7 moves 40 litres a minute."]], title="Pump manual")
    write_docx(corpus / "handbook.docx", "Ops handbook", "Night shift",
               ["Orla Vance runs the night shift at the Brightwater depot."], [["depot", "shift"], ["Brightwater", "night"]])
    (corpus / "plan.md").write_text(FRONT)
    (corpus / "page.html").write_text(PAGE)
    (corpus / "billing.py").write_text(CODE)
    report = ingest_paths(IngestionPipeline(services), [corpus])
    assert report.ok and report.files_ingested == 5 and not report.files_skipped, report.render()

    assert any("40 litres" in t for t in texts(services, "corpus/manual.pdf"))
    assert any("Brightwater depot" in t for t in texts(services, "corpus/handbook.docx"))
    page = texts(services, "corpus/page.html")
    assert any("shelf 12" in t for t in page) and not any("Careers" in t or "Cookie" in t for t in page)
    [code] = [i for i in services.vectors.scroll(SearchFilter(tenant="default", source_ids=["corpus/billing.py"]))
              if i.kind == "chunk"]
    assert code.metadata["language"] == "python" and "def invoice_total" in code.text

    # Front matter: the title in the catalog, metadata on the items, nothing of it in text or triples.
    assert services.catalog.get("default", "corpus/plan.md").title == "Orion launch plan"
    plan = list(services.vectors.scroll(SearchFilter(tenant="default", source_ids=["corpus/plan.md"])))
    assert plan and all(i.metadata["status"] == "draft" and i.metadata["version"] == 3 for i in plan)
    assert not any("status:" in i.text or "2025-05" in i.text for i in plan)
    assert not [name for name in services.graph.entity_names("default") if "2025" in name or "draft" in name]

    with RetrievalPipeline.from_services(services) as retrieval:
        def found(question, metadata=None):
            result = retrieval.run(question, tenant="default", budget=600, metadata=metadata)
            return {p.source_id for p in result.passages}

        assert "corpus/manual.pdf" in found("How many litres a minute does the Kestrel pump move?")
        assert "corpus/handbook.docx" in found("Who runs the night shift at the Brightwater depot?")
        assert "corpus/billing.py" in found("How is the Zephyr invoice total computed?")
        assert found("When does the Orion launch move?", {"status": "draft"}) == {"corpus/plan.md"}
        assert found("When does the Orion launch move?", {"published": {"gte": "2025-04-01", "lte": "2025-05-31"}}) \
            == {"corpus/plan.md"}
        assert found("When does the Orion launch move?", {"status": "final"}) == set()
