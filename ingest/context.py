"""A turn read together with the turn it answers.

"Sure, I'll bring it tomorrow!" says little alone; after "Can you lend me the tent?" it says
what it is about. The context text of a turn is the previous turn of its session, then the
turn. Its vector is one more reranker signal (see retrieval/fusion.py); ingestion embeds it
beside the turn's own vector, so at question time it is a cache lookup.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from agent_memory.records import MemoryItem

from .items import embedding_text


def context_text(item: MemoryItem, previous: MemoryItem | None) -> str:
    own = embedding_text(item)
    return f"{embedding_text(previous)}\n{own}" if previous is not None else own


def _position(item: MemoryItem) -> tuple[str, int] | None:
    session = item.metadata.get("session_id")
    if item.kind != "turn" or not session or item.chunk_index:
        return None  # later pieces of a long turn follow their own first piece, not another turn
    return session, int(item.metadata.get("seq", 0) or 0)


def previous_turns(services, tenant: str, items: Sequence[MemoryItem]) -> dict[str, MemoryItem]:
    """The turn before each turn item (by item id), taken from ``items`` when it is there, else
    from the catalog and the vector store; a session's first turn has none."""
    at = {_position(i): i for i in items if _position(i) is not None}
    found: dict[str, MemoryItem] = {}
    wanted: dict[str, list[MemoryItem]] = {}  # item id of a previous turn → the turns after it
    for item in items:
        pos = _position(item)
        if pos is None or pos[1] <= 0:
            continue
        before = at.get((pos[0], pos[1] - 1))
        if before is not None:
            found[item.id] = before
            continue
        for entry in services.catalog.session_neighbours(tenant, pos[0], pos[1] - 1, 0, 0):
            if entry.item_ids:
                wanted.setdefault(entry.item_ids[-1], []).append(item)
    if wanted:
        for before in services.vectors.get(list(wanted)):
            for item in wanted.get(before.id, []):
                found[item.id] = before
    return found


def context_vectors(services, tenant: str, items: Sequence[MemoryItem]) -> np.ndarray:
    """One vector per item: its context text embedded (through the embedding cache)."""
    previous = previous_turns(services, tenant, items)
    return services.embedder.embed_documents([context_text(i, previous.get(i.id)) for i in items])


def session_context_texts(session_items: Sequence[Sequence[MemoryItem]]) -> list[str]:
    """Context texts of a session's turns given in order (each turn's items): ingestion embeds them."""
    texts: list[str] = []
    previous: MemoryItem | None = None
    for items in session_items:
        if not items:
            continue
        texts.append(context_text(items[0], previous))
        previous = items[-1]
    return texts
