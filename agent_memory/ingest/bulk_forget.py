"""Forgetting many sources at once: a list of IDs, every source whose ID starts with a prefix, or a whole tenant.

What a prefix names is what ``forget`` of each ID would remove, through the same batched removal
(``removal.py``: the same end state, the same counts): a file's ID (its manifest ``file:<id>``) takes every
source the file held, and forgetting a source of a file drops that file's manifest, so the next ingestion reads
the file again. A whole tenant goes in one round of each store, whatever it holds.

Each batch of removal holds the locks its writers hold (``removal.forget_names``), a whole tenant's removal the
tenant's, exclusively (``ownership.removing_tenant``: every writer holds it shared): a repair in another process
(``agent-memory check --repair``) leaves what is being removed alone, and a writer of it waits.
"""

from __future__ import annotations

from agent_memory.core.records import ITEM_KINDS, SearchFilter
from agent_memory.ingest.ownership import FILE_KEY, match_stored, removing_tenant
from agent_memory.ingest.removal import Removed, batches, forget_ids, forget_names


def sources_with_prefix(services, tenant: str, prefix: str) -> list[str]:
    """The stored source IDs starting with ``prefix``, and the files (as ``file:<id>``) whose ID does: from the
    catalog (entries, claims, manifests) and from the vectors, so a source whose catalog entry was lost is
    found too. Sorted; an empty prefix is every source of the tenant."""
    found = set(services.catalog.source_ids(tenant, prefix))
    found.update(services.catalog.source_ids(tenant, FILE_KEY + prefix))
    found.update(item.source_id for item in services.vectors.scroll(SearchFilter(tenant=tenant))
                 if item.source_id.startswith(prefix))
    return sorted(found)


def sources_to_forget(services, tenant: str, prefix: str) -> list[str]:
    """:func:`sources_with_prefix`, and the sources under ``prefix`` that only the graph still holds facts of (a
    catalog lost, and their items with it): what a ``forget`` of each such ID reaches too."""
    found = set(sources_with_prefix(services, tenant, prefix))
    found.update(sid for sid in services.graph.fact_sources(tenant).get(tenant, {}) if sid.startswith(prefix))
    return sorted(found)


def forget_many(services, tenant: str, names: list[str]) -> dict:
    """Forget ``names`` (source IDs, and files as ``file:<id>``) in batches (``removal.forget_names``). Returns
    what was removed: sources, items (and ``items_per_kind``), triples, and ``files``, the file manifests
    removed."""
    return forget_names(services, tenant, names).totals()


def forget_each(services, tenant: str, given: list[str]) -> dict:
    """``forget`` of each of ``given`` (source IDs, file IDs, their path spellings: ``ownership.match_stored``)
    in one batched removal: the counts as :func:`forget_many`'s, with ``not_found``, the IDs given that matched
    nothing (in the order given)."""
    matched = {name: match_stored(services, tenant, name) for name in dict.fromkeys(given)}
    names = [sid for name, found in matched.items() for sid in (found or [name])]
    return {**forget_ids(services, tenant, names).totals(), "not_found": [n for n, found in matched.items() if not found]}


def forget_tenant(services, tenant: str) -> dict:
    """Every source of ``tenant`` out of every store: its vectors, graph and catalog (sessions are working
    memory's: ``Memory.forget_tenant`` deletes them first). Returns the counts removed, as ``forget_many``; a
    source the catalog lost whose items are stored counts as a source, as there. Under the tenant's own lock, held
    exclusively (``ownership.removing_tenant``): taken once the tenant's writers in every process have ended (what
    they wrote is removed too), while writers that come meanwhile wait; a repair of the tenant in another process
    meanwhile changes nothing and reports what it would have mended as held."""
    removed = Removed()
    with removing_tenant(services, tenant):
        lost = _uncatalogued(services, tenant)
        for kind in ITEM_KINDS:
            removed.items_per_kind[kind] = services.vectors.count(SearchFilter(tenant=tenant, kinds=[kind]))
        removed.triples = services.graph.stats(tenant)["relations"]
        services.graph.delete_tenant(tenant)
        removed.items = services.vectors.delete_where(SearchFilter(tenant=tenant))
        removed.files = len(services.catalog.source_ids(tenant, FILE_KEY))
        removed.sources = services.catalog.delete_tenant(tenant) - removed.files + lost
    return removed.totals()


def _uncatalogued(services, tenant: str) -> int:
    """How many source IDs the tenant's vectors hold that the catalog has no entry for."""
    held = sorted({sid for sid, _ in services.vectors.source_points(SearchFilter(tenant=tenant))})
    return len(held) - sum(len(services.catalog.get_many(tenant, batch)) for batch in batches(held))
