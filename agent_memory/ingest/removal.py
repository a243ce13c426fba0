"""Removing sources from every store: the one path every forget takes.

``forget`` of one ID, ``forget --prefix`` (``bulk_forget.py``), deleting a session with its archive, a file
emptied or rewritten, a repair, an unfinished run undone: each names its sources and :func:`remove_sources`
removes them ``BATCH_SOURCES`` at a time, in one round of each store per batch. The same sources therefore
give the same end state and the same counts whichever way they were named.

Per batch the graph goes first (its facts, then the intervals of their subjects re-derived: a fact a forgotten
one had superseded is current again), then the vectors, then the catalog. A graph that refuses (Neo4j away:
503) stops the removal before anything else of that batch went; the catalog, written last, never says a
source is gone while its items or facts remain, so forgetting it again finishes the work.

A source counts as removed when the catalog had its entry, or when its items or facts went (a source the
catalog lost: a lost or older restored catalog, ``agent-memory check``). An ID with only a claim and nothing
stored counts none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator

from agent_memory.core.records import ITEM_KINDS, SearchFilter
from agent_memory.ingest.graph_writes import rederive
from agent_memory.ingest.ownership import FILE_KEY, writing
from agent_memory.ingest.report import IngestReport

# Sources per round of each store: bounds the filter sent to the vectors, the graph's IN list and the
# catalog's transaction, whatever the number of sources named.
BATCH_SOURCES = 256


def batches(ids: list[str], size: int = BATCH_SOURCES) -> Iterator[list[str]]:
    """``ids`` in slices of ``size``, in order."""
    for start in range(0, len(ids), size):
        yield ids[start:start + size]


@dataclass
class Removed:
    """What a removal took out of every store."""

    sources: int = 0
    items: int = 0
    triples: int = 0
    items_per_kind: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ITEM_KINDS, 0))
    files: int = 0  # file manifests removed
    claims_released: int = 0  # source IDs a file's unfinished job had claimed and never wrote

    def counts(self) -> dict[str, int]:
        """The answer of ``forget`` of one ID: sources, items, triples (and claims_released when there were)."""
        out = {"sources": self.sources, "items": self.items, "triples": self.triples}
        if self.claims_released:
            out["claims_released"] = self.claims_released
        return out

    def totals(self) -> dict:
        """The answer of ``forget --prefix`` and ``forget --all``: sources, items, items_per_kind, triples, files."""
        return {"sources": self.sources, "items": self.items, "triples": self.triples,
                "items_per_kind": dict(self.items_per_kind), "files": self.files}


def remove_sources(services, tenant: str, source_ids: Iterable[str], report: IngestReport | None = None,
                   into: Removed | None = None) -> Removed:
    """Remove exactly ``source_ids`` from the graph, the vectors and the catalog (their entries, titles and
    claims), in batches; file manifests are not touched (:func:`forget_names` does that). Adds to ``into``
    when given, and to ``report``'s sources_removed and items_deleted."""
    removed = into if into is not None else Removed()
    for batch in batches(list(dict.fromkeys(source_ids))):
        _remove_batch(services, tenant, batch, removed, report)
    return removed


def _remove_batch(services, tenant: str, batch: list[str], removed: Removed, report: IngestReport | None) -> None:
    catalog, vectors, graph = services.catalog, services.vectors, services.graph
    where = SearchFilter(tenant=tenant, source_ids=batch)
    unknown = set(batch) - set(catalog.get_many(tenant, batch))
    with_items = {sid for sid, _ in vectors.source_points(SearchFilter(tenant=tenant, source_ids=sorted(unknown)))} \
        if unknown else set()
    subjects = graph.sources_subjects(tenant, batch)
    lost = len(with_items) + _with_facts_only(graph, tenant, sorted(unknown - with_items), bool(subjects))
    per_kind = {kind: vectors.count(SearchFilter(tenant=tenant, source_ids=batch, kinds=[kind]))
                for kind in ITEM_KINDS}
    triples = graph.delete_by_sources(tenant, batch)
    # Per batch, right after its facts went: a refusal in a later batch must not leave these intervals stale.
    rederive(services, tenant, subjects)
    items = vectors.delete_where(where)
    entries = catalog.delete_many(tenant, batch)
    removed.sources += entries + lost
    removed.items += items
    removed.triples += triples
    for kind, n in per_kind.items():
        removed.items_per_kind[kind] = removed.items_per_kind.get(kind, 0) + n
    if report is not None:
        report.sources_removed += entries + lost
        report.items_deleted += items


def _with_facts_only(graph, tenant: str, candidates: list[str], batch_has_facts: bool) -> int:
    """How many of ``candidates`` (unknown to the catalog, no items) the graph holds facts of: asked one by one,
    and only when the batch has facts at all (such a source is rare: a catalog lost and its items gone)."""
    if not candidates or not batch_has_facts:
        return 0
    return sum(1 for sid in candidates if graph.source_subjects(tenant, sid))


def forget_names(services, tenant: str, names: Iterable[str], report: IngestReport | None = None) -> Removed:
    """Forget ``names``: source IDs, and files as ``FILE_KEY + <file ID>`` (every source the file's manifest
    holds; a file whose job died before its manifest was written, every source it claimed, released). A
    source of a file takes that file's manifest with it, so the next ingestion reads the file again instead
    of calling it unchanged; the manifests go after the sources.

    Each batch of removal holds its writers' locks (``ownership.writing``: the file's ID for a source a file
    claimed, the source's own ID otherwise; the file's ID for its manifest), so a repair in another process
    leaves a source being removed alone (``held``) instead of marking it to be written again, extracting its
    facts again or counting it half removed; a writer of it waits. :func:`remove_sources` takes no lock: the
    repair calls it under its own."""
    catalog = services.catalog
    names = list(dict.fromkeys(names))
    manifest_keys = [n for n in names if n.startswith(FILE_KEY)]
    manifests = catalog.get_many(tenant, manifest_keys) if manifest_keys else {}
    targets = dict.fromkeys(n for n in names if not n.startswith(FILE_KEY))
    claims_released = 0
    for key in manifest_keys:
        if key in manifests:
            targets.update(dict.fromkeys(manifests[key].item_ids))
        else:
            held = catalog.owned_by(tenant, key)
            claims_released += len(held)
            targets.update(dict.fromkeys(held))
    ids = list(targets)
    files = set(manifest_keys)
    for batch in batches(ids):
        files.update(owner for owner in catalog.owners(tenant, batch).values() if owner.startswith(FILE_KEY))
    removed = Removed()
    for batch in batches(ids):
        with writing(services, {tenant: batch}):
            remove_sources(services, tenant, batch, report, into=removed)
    for batch in batches(sorted(files)):
        with writing(services, {tenant: [key[len(FILE_KEY):] for key in batch]}):
            removed.files += catalog.delete_many(tenant, batch)
    removed.claims_released = claims_released
    return removed


def files_or_sources(catalog, tenant: str, source_ids: list[str]) -> list[str]:
    """The names ``forget`` of each of ``source_ids`` takes: the file (``FILE_KEY`` + it) when a manifest or the
    claims of an unfinished job of a file stand under that ID, else the source ID itself."""
    names: list[str] = []
    for batch in batches(source_ids):
        manifests = catalog.get_many(tenant, [FILE_KEY + sid for sid in batch])
        names += [FILE_KEY + sid if FILE_KEY + sid in manifests or catalog.owned_by(tenant, FILE_KEY + sid) else sid
                  for sid in batch]
    return names


def forget_ids(services, tenant: str, source_ids: Iterable[str], report: IngestReport | None = None) -> Removed:
    """``forget`` of each of ``source_ids`` (each a file's ID or a source ID), in one batched removal."""
    return forget_names(services, tenant, files_or_sources(services.catalog, tenant, list(source_ids)), report)


def forget(services, tenant: str, source_id: str, report: IngestReport | None = None) -> dict[str, int]:
    """Remove one source everywhere; given a file's ID, every source that file held and its manifest.
    Forgetting one source of a file also drops that file's manifest: manifest and sources go together,
    so the next run reads the file again instead of calling it unchanged. Returns :meth:`Removed.counts`."""
    return forget_ids(services, tenant, [source_id], report).counts()


def forget_sources(services, tenant: str, source_ids: Iterable[str], report: IngestReport | None) -> dict[str, int]:
    """Remove exactly ``source_ids`` (no file manifest is touched); returns :meth:`Removed.counts`."""
    return remove_sources(services, tenant, source_ids, report).counts()
