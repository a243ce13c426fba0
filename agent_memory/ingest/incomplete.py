"""What a write that never completed left in the stores, taken out once its job is given up.

A background job interrupted too often (each run ended by a stop, or its process or worker killed) is not
run again (``stores/job_spool.py``, ``stores/postgres_jobs.py``). Its runs stored part of what they read:
the sources they finished (items, facts, catalog entries), the items of the one they were in, the source
IDs a file claims before it writes, but never a file's manifest, written when a run completes. Left there,
they answered questions for a file that ``GET /v1/sources`` called missing. Here the stores are brought back
to what the catalog says was stored whole:

- a file never stored whole before (no manifest): every source it claimed is forgotten;
- a file whose earlier version is stored (its manifest): the sources the new version added are forgotten,
  each source of the earlier version keeps the items its catalog entry lists, and the manifest's hash is one
  that never matches, so the next upload of the file is read whole (a source the runs had rewritten to
  its end holds the new version's text until then);
- a posted document: the items its catalog entry does not list go, and so does its claim when it has no entry.

Each returns a sentence for the job's record. Runs under the source's lock and the write lock.
"""

from __future__ import annotations

from dataclasses import replace

from agent_memory.ingest.file_ingestion import PARTIAL
from agent_memory.ingest.ownership import DIRECT_OWNER, FILE_KEY, release_unwritten
from agent_memory.ingest.removal import forget, forget_sources


def undo_file(services, tenant: str, file_id: str) -> str:
    """Take out what the unfinished runs of the file ``file_id``'s ingestion stored."""
    catalog = services.catalog
    owner = FILE_KEY + file_id
    manifest = catalog.get(tenant, owner)
    if manifest is None:
        removed = forget(services, tenant, file_id)["items"] if catalog.owned_by(tenant, owner) else 0
        return f"what its runs had stored was removed ({_items(removed)})"
    held = set(manifest.item_ids)
    added = [sid for sid in catalog.owned_by(tenant, owner) if sid not in held]
    removed = forget_sources(services, tenant, added, None)["items"] + _unlisted_items(services, tenant, list(held))
    if not manifest.content_hash.startswith(PARTIAL):
        catalog.put_many([replace(manifest, content_hash=PARTIAL + manifest.content_hash)])
    return (f"what its runs had stored of the new version was removed ({_items(removed)}); the version stored "
            "before is kept where those runs had not replaced it already")


def undo_document(services, tenant: str, source_id: str) -> str:
    """Take out what the unfinished runs of a posted document's ingestion stored under ``source_id``."""
    owner = services.catalog.owners(tenant, [source_id]).get(source_id)
    if owner not in (None, DIRECT_OWNER):  # a file holds it: its runs were refused before they wrote anything
        return "it stored nothing"
    items = _unlisted_items(services, tenant, [source_id])
    release_unwritten(services.catalog, tenant, [source_id])
    return f"what its runs had stored was removed ({_items(items)})"


def _unlisted_items(services, tenant: str, source_ids: list[str]) -> int:
    """Delete the items of ``source_ids`` that their catalog entries do not list (all of them, for a source
    without one). An entry missing some of its own items (a run cut between deleting the earlier version's
    stale items and writing the entry) gets a hash that never matches: the next write rewrites the source."""
    entries = services.catalog.get_many(tenant, source_ids)
    unlisted: list[str] = []
    damaged = []
    for sid in source_ids:
        present = set(services.vectors.ids_for_source(tenant, sid))
        entry = entries.get(sid)
        listed = set(entry.item_ids) if entry is not None else set()
        unlisted += sorted(present - listed)
        if entry is not None and not listed <= present and not entry.content_hash.startswith(PARTIAL):
            damaged.append(replace(entry, content_hash=PARTIAL + entry.content_hash))
    if unlisted:
        services.vectors.delete_ids(unlisted)
    if damaged:
        services.catalog.put_many(damaged)
    return len(unlisted)


def _items(count: int) -> str:
    return f"{count} item{'' if count == 1 else 's'}"
