"""Who may write a source ID, and which stored sources a forget names (the removal itself: ``removal.py``).

A file owns the source IDs it holds, through its manifest in the catalog (key ``FILE_KEY`` + the
file's ID: its hash and its sources); a direct caller (API JSON documents, ``Memory.add``) owns what
it writes as ``DIRECT_OWNER``; a live session owns the turns archived from it (``SESSION_OWNER`` + its
ID, ``<session id>/m<seq>``). A record whose ID another owner holds is refused, never overwritten. A
stored turn with no owner recorded (written by ``Memory.add_turns``, or archived before sessions claimed
theirs) is held all the same: no document, record or live session's turn replaces it (``holders``).
"""

from __future__ import annotations

import difflib
import logging
import os
import posixpath
import shlex
from contextlib import ExitStack, contextmanager
from typing import Iterable, Iterator

from agent_memory.conversation.archived_turns import turn_seq
from agent_memory.core.errors import IngestError
from agent_memory.core.records import SearchFilter
from agent_memory.ingest.sources import Transcript
from agent_memory.stores.catalog import SourceEntry

log = logging.getLogger(__name__)

# Catalog key of a file's manifest (its hash and the sources it held). A plain text file is
# also a source under its own path, so the manifest needs a key of its own.
FILE_KEY = "file:"
# The owner of source IDs written directly (API JSON documents, Memory.add): not a file.
DIRECT_OWNER = "api:"
# The owner of a session's archived turns: this + the session ID.
SESSION_OWNER = "session:"
# Who holds a stored turn no one claimed (``holders``): this + its session ID. Never a writer's name.
UNCLAIMED_TURN = "turn:"


def describe_owner(owner: str) -> str:
    """An owner as a person reads it: 'the file ...', 'session ...', 'a document written directly'."""
    if owner.startswith(FILE_KEY):
        return f"the file {owner[len(FILE_KEY):]!r}"
    if owner.startswith(SESSION_OWNER):
        return f"session {owner[len(SESSION_OWNER):]!r} (one of its archived turns)"
    if owner == DIRECT_OWNER:
        return "a document written directly (the API, Memory.add)"
    if owner.startswith(UNCLAIMED_TURN):
        return (f"a turn of session {owner[len(UNCLAIMED_TURN):]!r} stored without an owner (by Memory.add_turns, "
                "or archived before sessions claimed their turns)")
    return repr(owner)


def holders(catalog, tenant: str, source_ids: list[str], writer: str | None) -> dict[str, str]:
    """{source ID: its owner} for those of ``source_ids`` that ``writer`` may not write: owned by another;
    or a stored turn that no one claimed (one of ``Memory.add_turns``, or a session's archived before
    sessions claimed theirs), held as ``UNCLAIMED_TURN`` + its session ID against every writer: a document,
    a file's record and a live session's archive alike. ``writer`` None (``Memory.add_turns``, which claims
    nothing, so adding a transcript again is a no-op): explicit owners only."""
    owners = catalog.owners(tenant, source_ids)
    found = {sid: who for sid, who in owners.items() if who != writer}
    if writer is None:
        return found
    unclaimed = [sid for sid in source_ids if sid not in owners]
    for sid, entry in catalog.get_many(tenant, unclaimed).items():
        if entry.kind == "turn":
            found[sid] = UNCLAIMED_TURN + (entry.session_id or "")
    return found


def refuse_held(catalog, tenant: str, source_ids: list[str], writer: str | None, what: str, fix: str) -> None:
    """IngestError naming the first of ``source_ids`` (a ``what``: "source", "turn") that ``writer`` may not
    write (``holders``), its owner and ``fix``; nothing when every one is free. Raised before anything is written."""
    taken = holders(catalog, tenant, source_ids, writer)
    if taken:
        sid, who = next(iter(taken.items()))
        raise IngestError(f"{what} {sid!r} belongs to {describe_owner(who)}: forget it first, or {fix}")


def release_unwritten(catalog, tenant: str, source_ids: list[str]) -> None:
    """Drop the claims a write that failed made on ``source_ids`` where it wrote no catalog entry: the ID is free
    again, not held for text that was never stored. Best effort: the write's own error is what is said."""
    try:
        written = catalog.get_many(tenant, source_ids)
        for sid in source_ids:
            if sid not in written:
                catalog.delete(tenant, sid)  # no entry: only its claim goes
    except Exception as exc:  # noqa: BLE001
        log.warning("could not release the claims of a write that failed: %s", exc)


def lock_keys(catalog, tenant: str, source_ids: list[str]) -> dict[str, str]:
    """{source ID: the key of the lock its writer holds} (``stores/source_locks.SourceLocks``): the file's ID for a
    source a file claimed, the source's own ID otherwise (a posted document, a session's archived turn, an
    imported one). A writer claims its IDs before it writes, so a repair that reads the owners of what it saw
    stored finds the key the writer holds (ingest/consistency.py)."""
    owners = catalog.owners(tenant, source_ids)
    return {sid: owners[sid][len(FILE_KEY):] if owners.get(sid, "").startswith(FILE_KEY) else sid
            for sid in source_ids}


@contextmanager
def writing(services, by_tenant: dict[str, Iterable[str]]) -> Iterator[None]:
    """Hold, until the block ends, the locks a repair looks for before it touches these sources
    ({tenant: source IDs}, claimed already: :func:`lock_keys`): each writer of the stores holds them from before
    its first write to its catalog entry, so a repair in another process never reads a half-written source as
    one to remove or adopt; and each tenant's key in shared mode before them, so a removal of the tenant
    (:func:`removing_tenant`) waits for the write, and a write that comes during a removal waits for it. Taken
    after the write lock of this process, tenants in sorted order. Without PostgreSQL only this process's lock:
    no other process writes these stores (the owners are not read)."""
    locks = services.source_locks
    with ExitStack() as stack:
        for tenant in sorted(by_tenant):
            ids = list(dict.fromkeys(by_tenant[tenant]))
            keys = set(lock_keys(services.catalog, tenant, ids).values()) if locks.shared and ids else set()
            stack.enter_context(locks.hold_many(tenant, keys))
        yield


def removing_tenant(services, tenant: str):
    """Hold, until the block ends, the lock of the whole tenant (``stores/source_locks.TENANT_KEY``) exclusively,
    as its removal does (``bulk_forget.forget_tenant``): it empties each store of the tenant in one round, with no
    batches whose sources could be locked one by one. Every writer of the tenant holds this key in shared mode for
    as long as it holds its sources' (:func:`writing`, ``stores/source_locks.SourceLocks.hold_many``): the removal
    waits for the writers running in any process, and a writer that comes meanwhile waits for the removal, then writes whole. A repair
    of the tenant (ingest/consistency.py) takes this key in shared mode first, without waiting, and holds it to its
    end: beside writers it mends as ever; while the tenant is being removed it changes nothing and reports every
    source it would have mended as ``held``; a removal that comes during a repair waits for it. After the write
    lock, as :func:`writing`; without PostgreSQL only this process's lock."""
    return services.source_locks.hold_tenant(tenant)


def unit_source_ids(unit) -> list[str]:
    if isinstance(unit, Transcript):
        return [t.source_id for t in unit.turns]
    return [unit.source_id]


def still_owned(catalog, tenant: str, owner: str, manifest: SourceEntry) -> bool:
    """The manifest's sources are all in the catalog and all still belong to it."""
    children = list(manifest.item_ids)
    if not children:
        return True
    present = catalog.get_many(tenant, children)
    owners = catalog.owners(tenant, children)
    return all(c in present and owners.get(c) == owner for c in children)


def own_units(catalog, tenant: str, owner: str, units: list, *, paths_here: bool = False) -> tuple[list, list[str]]:
    """The units this file may write, its source IDs claimed; and why the others were refused.

    A source ID owned by another file or API document is refused; so is an ID repeated
    inside the file (the second record would silently replace the first). ``paths_here``: the files' recorded
    paths are this machine's (not a server's upload), so a refusal says when the owning file is gone from disk."""
    wanted: dict[str, None] = {}
    for unit in units:
        for sid in unit_source_ids(unit):
            wanted.setdefault(sid, None)
    held = holders(catalog, tenant, list(wanted), owner)
    freed_by = {who: _how_to_free(catalog, tenant, who, paths_here) for who in set(held.values())}
    told: set[str] = set()

    def belongs(sid: str, otherwise: str = "") -> str:
        """Its owner, and what frees its IDs (``otherwise``: the other way out) said once: a file of many records
        held is one fix, not one each."""
        who = held[sid]
        if who in told:
            return f"{describe_owner(who)} too"
        told.add(who)
        return f"{describe_owner(who)}; {freed_by[who]}{otherwise}"

    refused: list[str] = []
    seen: set[str] = set()
    kept = []
    for unit in units:
        if isinstance(unit, Transcript):
            turns = []
            for turn in unit.turns:
                sid = turn.source_id
                if sid in held:
                    refused.append(f"turn {sid!r} refused: that source ID belongs to {belongs(sid)}")
                elif sid not in seen:
                    seen.add(sid)
                    turns.append(turn)
            if turns:
                kept.append(Transcript(unit.source_id, turns))
            continue
        sid = unit.source_id
        if sid in held:
            refused.append(f"record {sid!r} refused: that source ID belongs to "
                           f"{belongs(sid, ', or give the record another id')}")
        elif sid in seen:
            refused.append(f"record {sid!r} refused: the ID is repeated in the same file")
        else:
            seen.add(sid)
            kept.append(unit)
    catalog.claim(tenant, owner, [sid for unit in kept for sid in unit_source_ids(unit)])
    return kept, refused


def _how_to_free(catalog, tenant: str, owner: str, paths_here: bool) -> str:
    """What frees the IDs ``owner`` holds, as a refusal says it: forgetting it; for a file, the command that does.
    A file read on this machine (``paths_here``) that is gone from disk is said to be (a folder renamed or moved
    under another ID keeps its old files' IDs held until they are forgotten: a walk of the new folder never
    reaches them), and where its folder is gone too, the forget of everything stored under that folder's IDs."""
    if not owner.startswith(FILE_KEY):
        return "forget it first"
    file_id = owner[len(FILE_KEY):]
    forget = f"`agent-memory forget {shlex.quote(file_id)}`"
    manifest = catalog.get(tenant, owner) if paths_here else None
    recorded = manifest.path if manifest is not None else ""
    if not os.path.isabs(recorded) or os.path.lexists(recorded):  # older manifests' relative paths: not compared
        return f"forget it first ({forget})"
    fix = f"that file is gone from disk (it was read at {recorded!r}): {forget} frees its IDs"
    folder = posixpath.dirname(file_id)
    if folder and not os.path.lexists(os.path.dirname(recorded)):
        fix += (f" (its folder is gone too: `agent-memory forget --prefix {shlex.quote(folder + '/')}` forgets "
                f"everything stored under {folder + '/'!r})")
    return fix


def match_sources(catalog, tenant: str, given: str) -> list[str]:
    """The stored source IDs that ``given`` names, as ``forget`` takes it: an ID as stored; the
    same written as a path (``./notes/x.md``, ``notes//x.md``); or the path of an ingested file
    (absolute, or ``./``/``../``-relative from here), matched through the file's manifest, which
    records where the file was read. Nothing is matched by a bare suffix alone: ``a/README.md``
    never forgets another ``README.md``."""
    if not given:
        return []
    for sid in source_spellings(given):
        if catalog.get(tenant, FILE_KEY + sid) is not None or catalog.get(tenant, sid) is not None:
            return [sid]
    if not (os.path.isabs(given) or given.startswith(("./", "../", "." + os.sep, ".." + os.sep))):
        return []
    where = os.path.abspath(given)
    parts = where.strip(os.sep).split(os.sep)
    suffixes = ["/".join(parts[i:]) for i in range(len(parts))] + [where]
    manifests = catalog.get_many(tenant, [FILE_KEY + s for s in suffixes])
    return [key[len(FILE_KEY):] for key, entry in manifests.items()
            if entry.path and os.path.abspath(entry.path) == where]


def source_spellings(given: str) -> list[str]:
    """A source ID as given, and written as a normalized path (``./notes/x.md``, ``notes//x.md``)."""
    written = [given]
    normal = posixpath.normpath(given.replace(os.sep, "/"))
    if not normal.startswith("../") and normal != "..":
        written.append(normal)
    return list(dict.fromkeys(written))


def match_stored(services, tenant: str, given: str) -> list[str]:
    """:func:`match_sources`; else ``given`` (or its path spelling) when the vectors or the graph hold a source
    under it that the catalog does not know (a catalog lost or restored older: ``agent-memory check``). Such a
    source is forgotten all the same: nothing else could remove it, and it may be what a user asked to delete."""
    matched = match_sources(services.catalog, tenant, given)
    if matched or not given:
        return matched
    for sid in source_spellings(given):
        if (services.vectors.count(SearchFilter(tenant=tenant, source_ids=[sid]))
                or services.graph.source_subjects(tenant, sid)):
            return [sid]
    return []


def uncatalogued_turns(services, tenant: str, session_id: str) -> list[str]:
    """The session's archived turns (``<session id>/m<n>``, turns of that session) that the vectors hold and
    the catalog does not know: deleting the session with its archive forgets them too."""
    flt = SearchFilter(tenant=tenant, kinds=["turn"], metadata={"session_id": session_id})
    held = sorted({sid for sid, _ in services.vectors.source_points(flt) if turn_seq(session_id, sid) is not None})
    known = services.catalog.get_many(tenant, held) if held else {}
    return [sid for sid in held if sid not in known]


def near_sources(services, tenant: str, given: str, limit: int = 3) -> list[str]:
    """Stored source IDs that look like ``given`` (a hint after a forget that matched nothing)."""
    known = {item.source_id for item in services.vectors.scroll(SearchFilter(tenant=tenant))}
    name = given.replace(os.sep, "/").rstrip("/")
    by_name = sorted(k for k in known if posixpath.basename(k) == posixpath.basename(name))
    close = difflib.get_close_matches(name, sorted(known), n=limit, cutoff=0.5)
    return list(dict.fromkeys(by_name + close))[:limit]
