"""A turn read together with the turn it answers.

"Sure, I'll bring it tomorrow!" says little alone; after "Can you lend me the tent?" it says
what it is about. The context text of a turn is the previous turn of its session, then the
turn. Its vector is one more reranker signal (see retrieval/fusion.py); ingestion embeds it
beside the turn's own vector, so at question time it is a cache lookup.
"""

from __future__ import annotations

from typing import Sequence

from agent_memory.records import MemoryItem

from .items import embedding_text


def context_text(item: MemoryItem, previous: MemoryItem | None) -> str:
    own = embedding_text(item)
    if previous is not None:
        return f"{embedding_text(previous)}\n{own}"
    # A turn promoted from a live session carries the turn it answers (that one may not be stored).
    stated = item.metadata.get("previous_turn")
    if isinstance(stated, dict) and stated.get("text"):
        return f"{stated.get('speaker', '')}: {stated['text']}\n{own}"
    return own


def _position(item: MemoryItem) -> tuple[str, int] | None:
    session = item.metadata.get("session_id")
    if item.kind != "turn" or not session or item.chunk_index:
        return None  # later pieces of a long turn follow their own first piece, not another turn
    return session, int(item.metadata.get("seq", 0) or 0)


def previous_turns(services, tenant: str, items: Sequence[MemoryItem]) -> dict[str, MemoryItem]:
    """The turn before each turn item (by item id): the last piece of the previous turn of its
    session, as ingestion reads it (``session_context_texts``). Found through one catalog query per
    session; taken from ``items`` when it is there, else from the vector store. A session's first
    turn has none."""
    after: dict[tuple[str, int], list[MemoryItem]] = {}  # (session, seq) of a previous turn → turns after it
    for item in items:
        pos = _position(item)
        if pos is not None and pos[1] > 0:
            after.setdefault((pos[0], pos[1] - 1), []).append(item)
    seqs: dict[str, set[int]] = {}
    for session, seq in after:
        seqs.setdefault(session, set()).add(seq)
    last_piece: dict[tuple[str, int], str] = {}
    for session, wanted in seqs.items():
        low, high = min(wanted), max(wanted)
        for entry in services.catalog.session_neighbours(tenant, session, low, 0, high - low):
            if entry.seq in wanted and entry.item_ids:
                last_piece[(session, entry.seq)] = entry.item_ids[-1]
    known = {i.id: i for i in items}
    fetch = [i for i in dict.fromkeys(last_piece.values()) if i not in known]
    if fetch:
        known.update((i.id, i) for i in services.vectors.get(fetch))
    return {turn.id: known[last_piece[pos]] for pos, turns in after.items()
            if last_piece.get(pos) in known for turn in turns}


def context_texts_for(services, tenant: str, items: Sequence[MemoryItem]) -> list[str]:
    """One text per item: the item read after the turn before it (what ingestion embedded)."""
    previous = previous_turns(services, tenant, items)
    return [context_text(i, previous.get(i.id)) for i in items]


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
