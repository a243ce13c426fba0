"""Forgetting many sources at once: every source whose ID starts with a prefix, or a whole tenant.

``forget`` (ingest/ownership.py) pays one round of every store per source: the vectors' delete, the graph's
scan of its relations, the catalog's transaction, the re-derived intervals. These remove a batch of
``BATCH_SOURCES`` sources in one round of each store, and re-derive the facts' intervals once at the end.
What a prefix names is what ``forget`` of each ID would remove: a file's ID (its manifest ``file:<id>``) takes
every source the file held, and forgetting a source of a file drops that file's manifest, so the next
ingestion reads the file again.
"""

from __future__ import annotations

from agent_memory.core.records import ITEM_KINDS, SearchFilter
from agent_memory.ingest.graph_writes import rederive
from agent_memory.ingest.ownership import FILE_KEY

BATCH_SOURCES = 256


def sources_with_prefix(services, tenant: str, prefix: str) -> list[str]:
    """The stored source IDs starting with ``prefix``, and the files (as ``file:<id>``) whose ID does: from the
    catalog (entries, claims, manifests) and from the vectors, so a source whose catalog entry was lost is
    found too. Sorted; an empty prefix is every source of the tenant."""
    found = set(services.catalog.source_ids(tenant, prefix))
    found.update(services.catalog.source_ids(tenant, FILE_KEY + prefix))
    found.update(item.source_id for item in services.vectors.scroll(SearchFilter(tenant=tenant))
                 if item.source_id.startswith(prefix))
    return sorted(found)


def forget_many(services, tenant: str, names: list[str]) -> dict:
    """Forget ``names`` (source IDs, and files as ``file:<id>``) in batches. Returns what was removed: sources,
    items (and ``items_per_kind``), triples, and ``files``, the file manifests removed."""
    catalog = services.catalog
    manifest_keys = [n for n in names if n.startswith(FILE_KEY)]
    manifests = catalog.get_many(tenant, manifest_keys) if manifest_keys else {}
    targets = dict.fromkeys(n for n in names if not n.startswith(FILE_KEY))
    for key in manifest_keys:
        # A file whose job died before its manifest was written still owns what it claimed.
        held = manifests[key].item_ids if key in manifests else catalog.owned_by(tenant, key)
        targets.update(dict.fromkeys(held))
    ids = list(targets)
    files = set(manifest_keys)
    for start in range(0, len(ids), BATCH_SOURCES):  # a source of a file takes that file's manifest with it
        owners = catalog.owners(tenant, ids[start:start + BATCH_SOURCES])
        files.update(owner for owner in owners.values() if owner.startswith(FILE_KEY))
    removed = _remove(services, tenant, ids)
    removed["files"] = catalog.delete_many(tenant, sorted(files))
    return removed


def _remove(services, tenant: str, source_ids: list[str]) -> dict:
    removed = {"sources": 0, "items": 0, "triples": 0, "items_per_kind": dict.fromkeys(ITEM_KINDS, 0)}
    subjects: set[str] = set()
    for start in range(0, len(source_ids), BATCH_SOURCES):
        batch = source_ids[start:start + BATCH_SOURCES]
        # A source counts once whether the catalog still knew it or only its items were left (a lost catalog).
        unknown = set(batch) - set(services.catalog.get_many(tenant, batch))
        removed["sources"] += sum(services.vectors.count(SearchFilter(tenant=tenant, source_ids=[sid])) > 0
                                  for sid in sorted(unknown))
        _count_kinds(services, SearchFilter(tenant=tenant, source_ids=batch), removed)
        removed["items"] += services.vectors.delete_where(SearchFilter(tenant=tenant, source_ids=batch))
        subjects.update(services.graph.sources_subjects(tenant, batch))
        removed["triples"] += services.graph.delete_by_sources(tenant, batch)
        removed["sources"] += services.catalog.delete_many(tenant, batch)
    # A fact a forgotten one had superseded is current again: once, over every subject the batches touched.
    rederive(services, tenant, subjects)
    return removed


def forget_tenant(services, tenant: str) -> dict:
    """Every source of ``tenant`` out of every store: its vectors, graph and catalog (sessions are working
    memory's: ``Memory.forget_tenant`` deletes them first). Returns the counts removed, as ``forget_many``."""
    removed = {"sources": 0, "items": 0, "triples": 0, "items_per_kind": dict.fromkeys(ITEM_KINDS, 0)}
    _count_kinds(services, SearchFilter(tenant=tenant), removed)
    removed["items"] = services.vectors.delete_where(SearchFilter(tenant=tenant))
    removed["triples"] = services.graph.stats(tenant)["relations"]
    services.graph.delete_tenant(tenant)
    files = len([sid for sid in services.catalog.source_ids(tenant, FILE_KEY)])
    entries = services.catalog.delete_tenant(tenant)
    removed["sources"], removed["files"] = entries - files, files
    return removed


def _count_kinds(services, flt: SearchFilter, removed: dict) -> None:
    for kind in ITEM_KINDS:
        n = services.vectors.count(SearchFilter(tenant=flt.tenant, source_ids=flt.source_ids, kinds=[kind]))
        removed["items_per_kind"][kind] += n
