"""Whether a data dir's three stores agree, and the repair when they do not (``agent-memory check``).

The catalog records each source (its content hash, its item IDs, how many facts it gave the graph); the
vectors hold the items; the graph holds the facts, each naming its source. A lost or partial file, or a
backup restored over a newer data dir, leaves them disagreeing, and nothing else notices: items the catalog
lost can no longer be forgotten through it, and a source whose items the vectors lost is called unchanged
by the next ingestion, so it never comes back. :func:`check` compares them per tenant, reading the catalog's
entries, every point's source ID (a page at a time, no vector, no text) and every fact's source ID:

- **uncatalogued**: sources the vectors or the graph hold and the catalog does not know;
- **items_missing**: catalog sources whose items the vectors lack (all or some);
- **facts_missing**: catalog sources that gave the graph facts it no longer holds;
- **problems**: a store empty of the tenant's data beside a catalog that records it (or the reverse).

:func:`repair` mends what it can. Uncatalogued sources are removed from the vectors and the graph: nothing
the user can see or forget names them, and the catalog may have lost them in a forget (a backup of the vectors
restored over newer ones): the user asked for them gone. A tenant whose catalog holds nothing at all while the
stores hold its data is refused: the catalog was lost or replaced, and removing what it does not know would
remove all of the tenant's memory; restore the data dir from a backup, or ``adopt``: record every uncatalogued
source in the catalog as the vectors hold it (forget, stats and sessions work again; an ingestion of its file
writes it afresh). Sources with missing items are marked so the next ingestion of their file (or a post of the
same document) writes them again, and are listed. Missing facts are extracted again from the stored text.

A repair holds this process's write lock, so no write of its own lands between the check and the repair. A write
in another process (an ``agent-memory worker``'s job, another API replica, ``agent-memory ingest`` or an import on
shared stores, a session's archive there) stores its items and facts before it records its sources in the
catalog, so while it runs they read as uncatalogued (or, rewritten, as lacking items). Each source is therefore
mended under the lock its writer holds (``ownership.lock_keys``: a file's ID for the sources the file claimed, the
source's own otherwise; ``stores/source_locks.SourceLocks``), taken without waiting, and read again there: a
source being written is left for the next check (``held``), and one recorded meanwhile is left alone. A removal
holds the same locks (a forget, ``forget --prefix``, gc's expiry, an import forgetting a session's turns: per
batch), so a source being removed is left alone too, never marked to be written again or counted half removed. A
whole tenant's removal holds the tenant's lock exclusively, once every writer of the tenant (each holds it
shared) has ended; a repair of that tenant takes it first, shared as writers do, so it runs beside them and mends
nothing while the tenant is being removed.
"""

from __future__ import annotations

from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Iterable, Iterator

from agent_memory.conversation.archived_turns import session_key, turn_source_id
from agent_memory.core.records import MemoryItem, SearchFilter
from agent_memory.ingest.graph_writes import extract_triples, merge_triples, speaker_relations
from agent_memory.ingest.items import SourceItems
from agent_memory.ingest.ownership import FILE_KEY, SESSION_OWNER, lock_keys
from agent_memory.ingest.removal import batches, forget_sources
from agent_memory.ingest.report import IngestReport
from agent_memory.ingest.stored_readings import mend
from agent_memory.stores.catalog import SourceEntry
from agent_memory.stores.index_format import outdated_facts, read_index_format

# Sources read from the vectors at a time (a repair's adoption and fact rebuild).
SOURCE_BATCH = 128
# What marks a catalog entry "not unchanged": no content hash matches it, so the next ingestion writes it.
NO_HASH = ""


@dataclass
class TenantCheck:
    """One tenant's disagreements (empty lists: its stores agree)."""

    tenant: str
    catalog_sources: int = 0
    vector_items: int = 0
    graph_triples: int = 0
    # source ID -> {"items": held in the vectors, "triples": held in the graph}
    uncatalogued: dict[str, dict[str, int]] = field(default_factory=dict)
    # source ID -> {"items": the catalog records, "missing": of those, not in the vectors}
    items_missing: dict[str, dict[str, int]] = field(default_factory=dict)
    # source ID -> the facts the catalog records it gave (none in the graph)
    facts_missing: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    entries: dict[str, SourceEntry] = field(default_factory=dict, repr=False)

    @property
    def ok(self) -> bool:
        return not (self.uncatalogued or self.items_missing or self.facts_missing or self.problems)

    def to_dict(self) -> dict:
        return {"ok": self.ok, "catalog_sources": self.catalog_sources, "vector_items": self.vector_items,
                "graph_triples": self.graph_triples, "problems": list(self.problems),
                "uncatalogued": [{"source_id": s, **n} for s, n in self.uncatalogued.items()],
                "items_missing": [{"source_id": s, **n} for s, n in self.items_missing.items()],
                "facts_missing": [{"source_id": s, "triples": n} for s, n in self.facts_missing.items()]}


def tenants_held(services) -> list[str]:
    """Every tenant any of the three stores holds data of, by name."""
    return sorted(set(services.catalog.tenants()) | services.vectors.tenants() | set(services.graph.fact_sources()))


def check(services, tenants: Iterable[str] | None = None) -> list[TenantCheck]:
    """Each tenant's disagreements (``tenants`` None: every tenant any store holds). Reads only."""
    names = tenants_held(services) if tenants is None else list(tenants)
    return [check_tenant(services, name) for name in names]


def check_tenant(services, tenant: str) -> TenantCheck:
    found = TenantCheck(tenant)
    found.entries = {e.source_id: e for e in services.catalog.entries(tenant) if not e.source_id.startswith(FILE_KEY)}
    held: dict[str, set[str]] = defaultdict(set)
    for source_id, point in services.vectors.source_points(SearchFilter(tenant=tenant)):
        held[source_id].add(point)
    facts = services.graph.fact_sources(tenant).get(tenant, {})
    found.catalog_sources = len(found.entries)
    found.vector_items = sum(len(points) for points in held.values())
    found.graph_triples = sum(facts.values())
    for source_id in sorted(set(held) | set(facts)):
        if source_id not in found.entries:
            found.uncatalogued[source_id] = {"items": len(held.get(source_id, ())), "triples": facts.get(source_id, 0)}
    for source_id, entry in found.entries.items():
        wanted = set(entry.item_ids)
        lacking = wanted - held.get(source_id, set())
        if lacking:
            found.items_missing[source_id] = {"items": len(wanted), "missing": len(lacking)}
        if entry.n_triples and not facts.get(source_id):
            found.facts_missing[source_id] = entry.n_triples
    found.problems = _problems(found, recorded_facts=sum(e.n_triples for e in found.entries.values()))
    return found


def _problems(found: TenantCheck, recorded_facts: int) -> list[str]:
    """A whole store empty of the tenant beside another that holds it: a lost or replaced file, said as such."""
    out = []
    recorded_items = sum(len(e.item_ids) for e in found.entries.values())
    if not found.entries and (found.vector_items or found.graph_triples):
        out.append(f"the catalog records none of the tenant's sources, while the vectors hold {found.vector_items} "
                   f"items and the graph {found.graph_triples} facts: the catalog was lost or replaced (restore the "
                   "data dir from a backup, or run `agent-memory check --repair --adopt` to record them in the catalog)")
    if recorded_items and not found.vector_items:
        out.append(f"the vectors hold none of the tenant's items, while the catalog records {recorded_items}: the "
                   "vector collection was lost or replaced (restore the data dir from a backup, or run "
                   "`agent-memory check --repair` and ingest again what it lists)")
    if recorded_facts and not found.graph_triples:
        out.append(f"the graph holds none of the tenant's facts, while the catalog records {recorded_facts}: the "
                   "graph was lost or replaced (`agent-memory check --repair` extracts them again from the stored text)")
    return out


# ---- repair ------------------------------------------------------------------------------------------------

@dataclass
class TenantRepair:
    removed: dict[str, int] = field(default_factory=lambda: {"sources": 0, "items": 0, "triples": 0})
    adopted: int = 0
    # Marked to be written again by the next ingestion: the files to ingest again, and the other sources
    # (posted documents, turns) that only their writer can send again.
    ingest_again_files: list[str] = field(default_factory=list)
    ingest_again_sources: list[str] = field(default_factory=list)
    facts_rebuilt: dict[str, int] = field(default_factory=lambda: {"sources": 0, "triples": 0})
    refused: str | None = None
    left: list[str] = field(default_factory=list)
    # Sources a running write or removal (in another process) holds: not touched, left for the next check.
    held: list[str] = field(default_factory=list)

    @property
    def done(self) -> bool:
        """Nothing is left to do by hand."""
        return not self.left

    def to_dict(self) -> dict:
        return {"removed": dict(self.removed), "adopted": self.adopted,
                "ingest_again": {"files": list(self.ingest_again_files), "sources": list(self.ingest_again_sources)},
                "facts_rebuilt": dict(self.facts_rebuilt), "refused": self.refused, "left": list(self.left),
                "held": list(self.held)}


def repair(services, pipeline, found: TenantCheck, *, adopt: bool = False) -> TenantRepair:
    """Mend what ``found`` (this tenant's :func:`check_tenant`) names; the caller holds the write lock, so no
    ingestion of this process writes between the check and the repair; a source another process is writing is
    left alone (``held``: :func:`_unwritten`). ``pipeline``: the ingestion pipeline (its extractor).

    The whole tenant's lock (``ownership.removing_tenant``) is taken first in shared mode, as writers take it,
    without waiting, and held to the end: writers go on beside the repair; while another process removes the
    tenant nothing is mended (every source the check named is ``held``), and a removal of the tenant that comes
    meanwhile waits for the repair."""
    out = TenantRepair()
    with services.source_locks.try_hold_tenant(found.tenant) as free:
        if not free:
            out.held = sorted(set(found.uncatalogued) | set(found.items_missing) | set(found.facts_missing))
            out.left.append(f"tenant {found.tenant!r} is being removed by another process: nothing was repaired "
                            "(the sources the check named are listed under held); run the check again once that "
                            "removal has ended")
            return out
        _mend(services, pipeline, found, adopt, out)
    if out.held:
        out.held = sorted(set(out.held))
        out.left.append(f"{len(out.held)} sources are being written or removed by another process "
                        "(listed under held): left for the next check; run it again once that has ended")
    return out


def _mend(services, pipeline, found: TenantCheck, adopt: bool, out: TenantRepair) -> None:
    tenant = found.tenant
    if found.uncatalogued:
        with_items = [s for s, n in found.uncatalogued.items() if n["items"]]
        if adopt:
            out.adopted = _adopt(services, tenant, with_items, found, out)
            facts_only = [s for s, n in found.uncatalogued.items() if not n["items"]]
            _remove(services, tenant, facts_only, out)
        elif not found.entries:
            out.refused = (f"nothing removed: the catalog of tenant {tenant!r} records none of its sources while the "
                           f"vectors and the graph hold {len(found.uncatalogued)}: removing what it does not know "
                           "would remove all of the tenant's memory. Restore the data dir from a backup (the whole "
                           "folder, copied while nothing ran), or run `agent-memory check --repair --adopt` to "
                           "record them in the catalog")
            out.left.append(out.refused)
        else:
            _remove(services, tenant, list(found.uncatalogued), out)
    if found.items_missing:
        marked = _mark_to_ingest(services, tenant, list(found.items_missing), out)
        if marked:
            out.left.append(f"{marked} sources lack items in the vectors: marked to be written again; ingest again "
                            "the files listed under ingest_again (and post again the other sources)")
    rebuild = [s for s in found.facts_missing if s not in found.items_missing]
    if rebuild:
        if services.settings.triple_extractor == "none" or pipeline.extractor is None:
            out.left.append(f"{len(rebuild)} sources lack their facts in the graph, and no triple extractor is "
                            "configured (AGENT_MEMORY_TRIPLE_EXTRACTOR) to extract them again")
        else:
            _rebuild_facts(services, pipeline, tenant, rebuild, out)


@contextmanager
def _unwritten(services, tenant: str, source_ids: list[str], out: TenantRepair) -> Iterator[list[str]]:
    """Of ``source_ids``, those no running write holds, held against writes until the block ends (a write that
    comes then waits); the others go to ``out.held``. A write holds the lock of what it was asked to write: the
    file's ID for the sources a file claimed, the source's own ID otherwise (a posted document)."""
    key = lock_keys(services.catalog, tenant, source_ids)
    with services.source_locks.try_hold(tenant, sorted(set(key.values()))) as free:
        out.held.extend(sid for sid in source_ids if key[sid] not in free)
        yield [sid for sid in source_ids if key[sid] in free]


def _remove(services, tenant: str, source_ids: list[str], out: TenantRepair) -> None:
    for batch in batches(source_ids):
        with _unwritten(services, tenant, batch, out) as free:
            known = services.catalog.get_many(tenant, free) if free else {}  # a write that ended since the check
            for key, value in forget_sources(services, tenant, [s for s in free if s not in known], None).items():
                out.removed[key] = out.removed.get(key, 0) + value


def _items_by_source(services, tenant: str, source_ids: list[str]) -> Iterable[tuple[list[str], dict[str, list[MemoryItem]]]]:
    """The stored items of ``source_ids``, ``SOURCE_BATCH`` sources at a time, in their order within each source."""
    for batch in batches(source_ids, SOURCE_BATCH):
        found: dict[str, list[MemoryItem]] = defaultdict(list)
        for item in services.vectors.scroll(SearchFilter(tenant=tenant, source_ids=batch)):
            found[item.source_id].append(item)
        for items in found.values():
            items.sort(key=lambda i: (i.kind == "summary", i.chunk_index, i.start, i.id))
        yield batch, found


def _adopt(services, tenant: str, source_ids: list[str], found: TenantCheck, out: TenantRepair) -> int:
    """Record each source in the catalog as the vectors hold it, with no content hash: nothing calls it
    unchanged, so an ingestion of its file writes it afresh (and the file owns it again). A live session's archived
    turn (``<session id>/m<seq>``) is claimed for its session, as the archive claims it: an export leaves it to the
    session's messages, which rebuild it, instead of writing it a second time as a source of no one's."""
    adopted = 0
    live = _live_sessions(services, tenant)
    for held_batch in batches(source_ids, SOURCE_BATCH):
        with _unwritten(services, tenant, held_batch, out) as free:
            known = services.catalog.get_many(tenant, free) if free else {}
            for batch, items in _items_by_source(services, tenant, [s for s in free if s not in known]):
                entries = [_entry_of(tenant, sid, items[sid], found.uncatalogued[sid]["triples"])
                           for sid in batch if items.get(sid)]
                services.catalog.put_many(entries)
                claims: dict[str, list[str]] = defaultdict(list)
                for entry in entries:
                    if (entry.kind == "turn" and entry.session_id in live
                            and entry.source_id == turn_source_id(entry.session_id, entry.seq)):
                        claims[SESSION_OWNER + entry.session_id].append(entry.source_id)
                for owner, sids in claims.items():
                    services.catalog.claim(tenant, owner, sids)
                adopted += len(entries)
    return adopted


def _live_sessions(services, tenant: str) -> set[str]:
    """The IDs of the tenant's working-memory sessions (those whose messages an export writes)."""
    prefix = session_key(tenant, "")
    return {row["session_id"][len(prefix):] for row in services.sessions.store.session_rows(prefix)}


def _entry_of(tenant: str, source_id: str, items: list[MemoryItem], triples: int) -> SourceEntry:
    """A catalog entry rebuilt from a source's stored items: a turn keeps its session and position, a
    document its title, a session summary its kind."""
    first = items[0]
    meta = first.metadata
    ids = [i.id for i in items]
    if any(i.kind == "turn" for i in items):
        seq = meta.get("seq")
        return SourceEntry(tenant, source_id, "turn", NO_HASH, session_id=meta.get("session_id"),
                           seq=seq if isinstance(seq, int) else None, timestamp=str(meta.get("timestamp") or ""),
                           item_ids=ids, n_triples=triples)
    if meta.get("scope") == "session":
        return SourceEntry(tenant, source_id, "session", NO_HASH, timestamp=str(meta.get("timestamp") or ""),
                           item_ids=ids)
    return SourceEntry(tenant, source_id, "document", NO_HASH, title=str(meta.get("title") or ""), item_ids=ids,
                       n_triples=triples)


def _mark_to_ingest(services, tenant: str, source_ids: list[str], out: TenantRepair) -> int:
    """Each source's entry, and the manifest of the file that holds it, without its content hash: the next
    ingestion of the file (or a post of the same document) writes it again instead of calling it unchanged.
    Read again under the writers' locks: a source rewritten since the check lacks nothing now, and its new
    entry is not replaced by the one the check read. Returns how many were marked."""
    catalog = services.catalog
    files: set[str] = set(out.ingest_again_files)
    others: set[str] = set(out.ingest_again_sources)
    marked = 0
    for batch in batches(source_ids, SOURCE_BATCH):
        with _unwritten(services, tenant, batch, out) as free:
            current = catalog.get_many(tenant, free) if free else {}
            held: dict[str, set[str]] = defaultdict(set)
            if current:
                for sid, point in services.vectors.source_points(SearchFilter(tenant=tenant, source_ids=list(current))):
                    held[sid].add(point)
            entries = [e for e in current.values() if set(e.item_ids) - held[e.source_id]]
            if not entries:
                continue
            owners = catalog.owners(tenant, [e.source_id for e in entries])
            manifests = catalog.get_many(tenant, sorted({o for o in owners.values() if o.startswith(FILE_KEY)}))
            catalog.put_many([replace(e, content_hash=NO_HASH) for e in entries]
                             + [replace(m, content_hash=NO_HASH) for m in manifests.values()])
            files.update(m.path or m.source_id[len(FILE_KEY):] for m in manifests.values())
            others.update(e.source_id for e in entries if owners.get(e.source_id) not in manifests)
            marked += len(entries)
    out.ingest_again_files, out.ingest_again_sources = sorted(files), sorted(others)
    return marked


def _rebuild_facts(services, pipeline, tenant: str, source_ids: list[str], out: TenantRepair) -> None:
    """The sources' facts extracted again from their stored text and merged into the graph, as ingestion
    does; then each entry's count of facts set to what the graph now holds. Both under the writers' locks,
    on the entries as they are then: a source rewritten since the check keeps the entry its write recorded."""
    report = IngestReport()
    rebuilt: list[str] = []
    for held_batch in batches(source_ids, SOURCE_BATCH):
        with _unwritten(services, tenant, held_batch, out) as free:
            by_id = services.catalog.get_many(tenant, free) if free else {}
            for batch, items in _items_by_source(services, tenant, list(by_id)):
                units = [SourceItems(tenant, sid, by_id[sid].kind, by_id[sid].content_hash, items=items[sid])
                         for sid in batch if items.get(sid)]
                triples, _, _ = extract_triples(pipeline.extractor, units,
                                                speaker_relations=speaker_relations(services.settings))
                merge_triples(services, triples, report)
            rebuilt += list(by_id)
    stored = services.graph.fact_sources(tenant).get(tenant, {})  # once: it reads every fact of the tenant
    counted: list[str] = []
    for batch in batches(rebuilt, SOURCE_BATCH):
        with _unwritten(services, tenant, batch, out) as free:
            current = services.catalog.get_many(tenant, free) if free else {}
            services.catalog.put_many([replace(e, n_triples=stored.get(sid, 0)) for sid, e in current.items()])
            counted += list(current)
    out.facts_rebuilt = {"sources": sum(1 for sid in counted if stored.get(sid)),
                         "triples": sum(stored.get(sid, 0) for sid in counted)}


def check_and_repair(services, pipeline, tenants: Iterable[str] | None = None, *, repair_them: bool = False,
                     adopt: bool = False) -> dict:
    """``agent-memory check``'s report (the CLI's and the API's): each tenant's disagreements, and with
    ``repair_them`` what the repair did. ``ok``: the stores agree (with a repair: nothing is left to do by hand).
    ``data_dir``: a graph read by an earlier version (``index_format.outdated_facts``), not a disagreement:
    ``notes`` say so, and a repair of every tenant reads those turns again (``tool_turn_facts``, ``told_of``: the
    counts)."""
    tenants_out: dict[str, dict] = {}
    data_dir: dict = {"notes": []}
    outdated = outdated_facts(read_index_format(services.data_dir))
    if outdated and repair_them and tenants is None:
        data_dir.update(mend(services, pipeline.extractor, outdated))
    elif outdated:
        data_dir["notes"] = [f"data dir: {said}; `agent-memory check --repair` (every tenant: no --tenant) does "
                             "it too" for said in outdated.values()]
    ok = True
    for found in check(services, tenants):
        row = found.to_dict()
        if repair_them and not found.ok:
            done = repair(services, pipeline, found, adopt=adopt)
            row["repair"] = done.to_dict()
            ok = ok and done.done
        else:
            ok = ok and found.ok
        tenants_out[found.tenant] = row
    return {"ok": ok, "tenants": tenants_out, "data_dir": data_dir}
