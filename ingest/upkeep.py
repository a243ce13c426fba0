"""Time to live: items that expire, and the pass that removes them from every store at once.

Rules (settings ``ttl_days``) map a selector to days: ``"turn"`` or ``"kind:turn"`` (a kind),
``"source:tools/"`` (a source ID prefix), ``"tenant:acme"``, ``"retention:forgettable"`` (a
promoted working-memory turn's class). An item matching several rules takes the shortest.
Ingestion stamps ``expires_at`` into the item's metadata; ``expire`` then forgets every source
holding an expired item: its vectors (dense and keyword), its triples and its catalog entry go
together, so no route can return it afterwards.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping

from agent_memory.records import MemoryItem, SearchFilter

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


def stamp_expiry(items: Iterable[MemoryItem], rules: Mapping[str, float]) -> None:
    if not rules:
        return
    for item in items:
        when = expires_at(item, rules)
        if when is not None:
            item.metadata["expires_at"] = when


def expire(services, forget, *, now: float | None = None, tenants: Iterable[str] | None = None) -> dict[str, int]:
    """Forget every source with an expired item (``forget(tenant, source_id) -> counts``, the
    ingestion pipeline's). Returns the totals removed."""
    now = time.time() if now is None else now
    totals = {"sources": 0, "items": 0, "triples": 0}
    for tenant in tenants if tenants is not None else services.catalog.tenants():
        expired = sorted({item.source_id for item in services.vectors.scroll(SearchFilter(tenant=tenant))
                          if float(item.metadata.get("expires_at") or "inf") <= now})
        for source_id in expired:
            for key, value in forget(tenant, source_id).items():
                totals[key] = totals.get(key, 0) + value
    return totals
