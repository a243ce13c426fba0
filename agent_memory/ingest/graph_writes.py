"""A batch's triples: read from its chunks and turns, dated, merged into the graph.

Extraction touches no store, so the job runs it in a thread while the embedder encodes the same
batch (agent_memory/ingest/pipeline.py ``_write``); the merge comes after, once the items are stored. Extraction
is best effort: a text the extractor cannot read loses its own triples, never the batch's.
"""

from __future__ import annotations

from collections import defaultdict

from agent_memory.core.updates import said_at, supersede
from agent_memory.ingest.items import SourceItems
from agent_memory.ingest.report import IngestReport


def extract_triples(extractor, units: list[SourceItems]) -> tuple[list, dict[str, int], list[str]]:
    """Triples of the units' chunks and turns, dated; per-source counts; warnings. No store is touched."""
    counts: dict[str, int] = {u.source_id: 0 for u in units}
    by_tenant: dict[str, list] = defaultdict(list)
    for unit in units:
        by_tenant[unit.tenant] += [item for item in unit.items if item.kind != "summary"]
    triples, warnings = [], []
    for tenant, items in by_tenant.items():
        try:
            found = _extract_items(extractor, items, tenant)
        except Exception:  # noqa: BLE001 - extraction is best effort; the chunks are stored
            # One text the extractor cannot read must not cost the batch its triples: item by
            # item, only the items that fail lose theirs (each text is read on its own anyway).
            found = []
            for item in items:
                try:
                    found += _extract_items(extractor, [item], tenant)
                except Exception as exc:  # noqa: BLE001
                    warnings.append(f"triple extraction failed for {item.source_id} (item {item.id}): {exc}")
                    found.append([])
        for item, item_triples in zip(items, found):
            counts[item.source_id] += len(item_triples)
            when = said_at(item.metadata, item.created_at)  # the turn's or document's date
            for triple in item_triples:
                triple.valid_from = triple.valid_from or when
            triples += item_triples
    return triples, counts, warnings


def _extract_items(extractor, items: list, tenant: str) -> list:
    return extractor.extract_many([i.text for i in items], tenant=tenant,
                                  source_ids=[i.source_id for i in items], item_ids=[i.id for i in items])


def merge_triples(services, triples: list, report: IngestReport) -> None:
    """Write ``triples`` to the graph; a newer fact of a functional relation supersedes the older one
    (agent_memory/core/updates.py); other relations are judged by the LLM when one is configured (best
    effort: a failure is a warning)."""
    if not triples:
        return
    services.graph.merge_triples(triples)
    report.triples += len(triples)
    settings = services.settings
    supersede(services.graph, triples, settings.functional_relations, llm=services.llm,
              max_pairs=settings.contradiction_max_pairs, warn=report.warnings.append)


def delete_source_facts(services, tenant: str, source_ids) -> tuple[int, set[str]]:
    """Delete the sources' relations; returns how many and the subjects they were about, whose
    intervals ``rederive`` must compute again once the graph holds what it will hold."""
    removed, subjects = 0, set()
    for sid in source_ids:
        subjects.update(services.graph.source_subjects(tenant, sid))
        removed += services.graph.delete_by_source(tenant, sid)
    return removed, subjects


def rederive(services, tenant: str, subjects) -> int:
    """The subjects' intervals from the facts still stored: a fact that a forgotten or rewritten one had
    superseded is current again (agent_memory/core/updates.py ``validity_changes``)."""
    if not subjects:
        return 0
    return services.graph.update_validity(tenant, sorted(subjects), services.settings.functional_relations)
