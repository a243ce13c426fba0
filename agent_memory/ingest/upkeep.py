"""Time to live: items that expire, and the pass that removes them from every store at once.

Rules (settings ``ttl_days``) map a selector to days: ``"turn"`` or ``"kind:turn"`` (a kind),
``"source:tools/"`` (a source ID prefix), ``"tenant:acme"``, ``"retention:forgettable"`` (a
promoted working-memory turn's class). An item matching several rules takes the shortest.
Ingestion stamps ``expires_at`` into the item's metadata; ``expire`` (``agent-memory gc``) computes
each item's expiry again from its created time and the rules in force when it runs (a rule set or
changed after ingestion applies to items already stored; an item no rule matches keeps its stamp),
then forgets every source holding an expired item: its vectors (dense and keyword), its triples and
its catalog entry go together, so no route can return it afterwards. Settings refuse an unknown
selector when they load (``agent_memory/core/settings.py``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from agent_memory.conversation.archived_turns import session_key
from agent_memory.core.limits import INSPECT_TEXT_CHARS, MAX_LIST_LIMIT, check_soon_days, whole_number
from agent_memory.core.metafilter import parse_when
from agent_memory.core.records import MemoryItem, SearchFilter
from agent_memory.core.ttl_selectors import TTL_SESSION
from agent_memory.ingest.ownership import FILE_KEY
from agent_memory.ingest.removal import forget_ids

DAY = 86_400.0


def _matches(selector: str, item: MemoryItem) -> bool:
    field, sep, value = selector.partition(":")
    if not sep:
        return selector == item.kind
    if field == "kind":
        return item.kind == value
    if field == "tenant":
        return item.tenant == value
    if field == "source":
        return item.source_id.startswith(value)
    if field == "retention":
        return item.metadata.get("retention") == value
    raise ValueError(f"unknown TTL selector {selector!r}: use KIND, kind:, source:, tenant: or retention:")


def expires_at(item: MemoryItem, rules: Mapping[str, float]) -> float | None:
    days = [float(d) for selector, d in rules.items() if _matches(selector, item)]
    return item.created_at + min(days) * DAY if days else None


def stamped_expiry(value: Any) -> float:
    """An item's ``expires_at`` metadata as Unix seconds: a number (or a string of one), or an ISO date or
    datetime (no offset: UTC; a date alone: its first instant); ``inf`` (never) when absent or unreadable.

    Ingestion stamps a number, but a document's own metadata may carry any value: one ``"2025-01-01"`` or
    ``"soon"`` must not stop ``gc`` and ``stats`` for the whole data dir."""
    if value is None or isinstance(value, bool) or value == "":  # True is an int: not 1970-01-01T00:00:01
        return math.inf
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else math.inf
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            when = parse_when(value)
            return when.timestamp() if when is not None else math.inf
        return number if math.isfinite(number) else math.inf
    return math.inf


def effective_expiry(item: MemoryItem, rules: Mapping[str, float]) -> float:
    """When the item expires under the rules in force (their shortest match), else its stamp;
    ``inf``: never."""
    when = expires_at(item, rules) if rules else None
    if when is None:
        when = stamped_expiry(item.metadata.get("expires_at"))
    return when


def stamp_expiry(items: Iterable[MemoryItem], rules: Mapping[str, float]) -> None:
    if not rules:
        return
    for item in items:
        when = expires_at(item, rules)
        if when is not None:
            item.metadata["expires_at"] = when


def expire(services, forget: Callable[[str, str], Mapping[str, int]] | None = None, *, now: float | None = None,
           tenants: Iterable[str] | None = None) -> dict[str, int]:
    """Forget every source with an expired item, expiry computed now from the settings' rules: each tenant's in
    one batched removal (``removal.forget_ids``: the counts forgetting each one adds up to), or one by one through
    a caller's own ``forget(tenant, source_id) -> counts``; with a ``"session"`` rule, the working-memory messages
    said before it out of their sessions (conversation/expiry.py); then the keyword weighting of every collection
    stops counting deleted items (stores/edge_reload.py), whoever deleted them. Returns the totals removed."""
    now = time.time() if now is None else now
    rules = services.settings.ttl_days
    tenants = None if tenants is None else list(tenants)
    totals = {"sources": 0, "items": 0, "triples": 0, "session_messages": 0}
    for tenant in tenants if tenants is not None else stored_tenants(services):
        expired = sorted({item.source_id for item in services.vectors.scroll(SearchFilter(tenant=tenant))
                          if effective_expiry(item, rules) <= now})
        removed = ([forget(tenant, source_id) for source_id in expired] if forget is not None
                   else [forget_ids(services, tenant, expired).counts()] if expired else [])
        for counts in removed:
            for key, value in counts.items():
                totals[key] = totals.get(key, 0) + value
    if TTL_SESSION in rules:  # sessions are keyed <tenant>/<session id>: every tenant's, or those asked for
        days = rules[TTL_SESSION]
        for prefix in [session_key(t, "") for t in tenants] if tenants is not None else [""]:
            totals["session_messages"] += services.sessions.expire(now - days * DAY, days, prefix)
    services.vectors.refresh_keyword_weights()
    return totals


# ---- upkeep views: stats, list, inspect (the CLI's and the API's) --------------------------------------

RUN_CHECK = "run `agent-memory check`, which says what the stores disagree on and how to mend it"


def tenants_with_data(services) -> list[str]:
    """The tenants that hold stored sources, by name."""
    return sorted(services.catalog.tenants())


def empty_tenant_note(services, tenant: str, *, name_others: bool, where: str | None = None) -> str | None:
    """None when ``tenant`` holds stored sources; else a line saying so, naming the tenants that do
    hold data when the caller may see them (``name_others``: the CLI and Python, never an API key
    bound to one tenant: another tenant's name is not its to know); ``where``: the place looked in (the
    CLI names its data dir; the API names no server path)."""
    if services.catalog.count(tenant) > 0:
        return None
    held = services.vectors.count(SearchFilter(tenant=tenant))
    if held:  # the catalog lost it (ingest/consistency.py): not an empty tenant
        return (f"tenant {tenant!r} holds {held} stored items" + (f" in {where}" if where else "")
                + f", but the catalog records none of its sources (lost or replaced?): {RUN_CHECK}")
    note = f"tenant {tenant!r} holds no stored memory" + (f" in {where}" if where else "")
    if not name_others:
        return note
    others = [t for t in tenants_with_data(services) if t != tenant]
    if not others:
        uncatalogued = sorted(services.vectors.tenants() - {tenant})
        if uncatalogued:
            return note + (f"; the catalog records no tenant's sources, but the vectors hold items of "
                           f"{', '.join(uncatalogued)}: {RUN_CHECK}")
        return note + "; no tenant holds any yet"
    return note + f"; tenants with data: {', '.join(others)} (choose one with --tenant, tenant= or AGENT_MEMORY_TENANT)"


def stored_tenants(services) -> list[str]:
    """The catalog's tenants, then any other whose items the vectors hold: one the catalog lost (a lost or
    restored file, ingest/consistency.py) is still counted and expired, not skipped."""
    names = services.catalog.tenants()
    return names + sorted(services.vectors.tenants() - set(names))


def _tenants(services, tenant: str | None) -> list[str]:
    return [tenant] if tenant else stored_tenants(services)


def stats(services, tenant: str | None = None, *, soon_days: float = 1.0, now: float | None = None) -> dict:
    """Per tenant: items per kind, sources, items expiring within ``soon_days``, entities, triples and
    the share of triples a newer fact superseded."""
    soon_days = check_soon_days(soon_days)  # the API's cap too (core/limits.py): the same answer everywhere
    now = time.time() if now is None else now
    out = {}
    for name in _tenants(services, tenant):
        kinds: dict[str, int] = {}
        sources: set[str] = set()
        soon = 0
        for item in services.vectors.scroll(SearchFilter(tenant=name)):
            kinds[item.kind] = kinds.get(item.kind, 0) + 1
            sources.add(item.source_id)
            soon += effective_expiry(item, services.settings.ttl_days) <= now + soon_days * DAY
        graph = services.graph.stats(name)
        superseded = services.graph.superseded_count(name)
        out[name] = {"items": sum(kinds.values()), "items_per_kind": kinds, "sources": len(sources),
                     "expiring_soon": soon, "entities": graph["entities"], "triples": graph["relations"],
                     "superseded_triples": superseded,
                     "superseded_share": round(superseded / graph["relations"], 4) if graph["relations"] else 0.0}
    return out


def list_sources(services, tenant: str, *, prefix: str = "", kind: str | None = None, offset: int = 0,
                 limit: int = 50) -> list[dict]:
    """Sources with their kinds, item count and oldest item time, by source ID; filtered and paged."""
    return source_page(services, tenant, prefix=prefix, kind=kind, offset=offset, limit=limit)["sources"]


def source_page(services, tenant: str, *, prefix: str = "", kind: str | None = None, offset: int = 0,
                limit: int = 50) -> dict:
    """One page of ``list_sources`` as ``list`` and ``GET /v1/sources`` answer it: ``offset``, ``limit``,
    ``total`` (the sources the filter matches, every page together), ``next_offset`` (the next page's
    offset; None on the last page) and ``sources``."""
    # A negative bound would slice from the end (offset -2: the last two), not page; the API's caps
    # (core/limits.py) hold here too, so a page refused through a server is refused locally.
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise ValueError(f"offset must be a whole number, 0 or more, got {offset!r}")
    whole_number(limit, "limit", 1, MAX_LIST_LIMIT)
    found: dict[str, dict] = {}
    for item in services.vectors.scroll(SearchFilter(tenant=tenant, kinds=[kind] if kind else None)):
        if not item.source_id.startswith(prefix):
            continue
        row = found.setdefault(item.source_id, {"source_id": item.source_id, "kinds": [], "items": 0,
                                                "created_at": item.created_at})
        row["items"] += 1
        row["created_at"] = min(row["created_at"], item.created_at)
        if item.kind not in row["kinds"]:
            row["kinds"].append(item.kind)
    rows = [found[s] for s in sorted(found)]
    following = offset + limit
    return {"offset": offset, "limit": limit, "total": len(rows),
            "next_offset": following if following < len(rows) else None, "sources": rows[offset:following]}


# How much of each item's text ``inspect`` shows unless asked for all of it: a source's view stays small
# (an API response, a terminal), and the item says when its text was cut and how long it is.


def inspect(services, tenant: str, source_id: str, *, full: bool = False) -> dict | None:
    """Everything stored for one source: its catalog entry and its items with their metadata. Each
    item's ``text`` is its first ``INSPECT_TEXT_CHARS`` characters unless ``full``, never silently:
    ``chars`` is the whole text's length and ``text_truncated`` says whether it was cut.

    A file's ID that is no source itself (a JSON or JSONL file whose records are sources ``file.json#0``
    ... or have IDs of their own) is the file: its manifest as ``catalog`` (kind "file", its path and
    content hash, the source IDs it holds as ``item_ids``), no items, and ``file_sources``: each source
    it holds with its number of items."""
    entry = services.catalog.get(tenant, source_id)
    items = [i for i in services.vectors.scroll(SearchFilter(tenant=tenant, source_ids=[source_id]))]
    if entry is None and not items:
        return _inspect_file(services, tenant, source_id)
    return {"source_id": source_id, "tenant": tenant, "catalog": None if entry is None else _catalog_view(entry),
            "items": [_shown_item(i, full) for i in sorted(items, key=lambda i: (i.kind, i.chunk_index))]}


def _inspect_file(services, tenant: str, file_id: str) -> dict | None:
    manifest = services.catalog.get(tenant, FILE_KEY + file_id)
    if manifest is None:
        return None
    held = list(dict.fromkeys(manifest.item_ids))
    return {"source_id": file_id, "tenant": tenant, "catalog": _catalog_view(manifest), "items": [],
            "file_sources": [{"source_id": sid,
                              "items": services.vectors.count(SearchFilter(tenant=tenant, source_ids=[sid]))}
                             for sid in held]}


def _catalog_view(entry) -> dict:
    return {"kind": entry.kind, "content_hash": entry.content_hash, "path": entry.path, "title": entry.title,
            "session_id": entry.session_id, "seq": entry.seq, "timestamp": entry.timestamp,
            "item_ids": list(entry.item_ids), "triples": entry.n_triples}


def _shown_item(item, full: bool) -> dict:
    cut = not full and len(item.text) > INSPECT_TEXT_CHARS
    return {"id": item.id, "kind": item.kind, "chunk_index": item.chunk_index, "start": item.start, "end": item.end,
            "created_at": item.created_at, "text": item.text[:INSPECT_TEXT_CHARS] if cut else item.text,
            "chars": len(item.text), "text_truncated": cut, "metadata": item.metadata}
