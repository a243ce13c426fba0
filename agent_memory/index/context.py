"""A turn read together with the turn it answers.

"Sure, I'll bring it tomorrow!" says little alone; after "Can you lend me the tent?" it says
what it is about. The context text of a turn is the previous turn of its session, then the
turn. Its vector is one more reranker signal (``turn_context``, agent_memory/retrieval/rerank/); ingestion
embeds it in the turn's own space and stores it with the turn's point (the named vector
``context``), so at question time it is read with the candidates, in whatever process asks.
A point stored before that existed lacks it: the reranker builds its text here
(``context_texts_for``) and embeds it, until ``agent-memory reindex`` stores it.

An archived tool turn (a call and its results, or a late result: ``conversation/tool_turns.py``) is read
alone: the call's own words say what it does, and the turn before it is the agent's previous step, so its
context vector was a second encoding of the same payload, bought at the encoder's price on every tool
result's append and giving the reranker nothing the turn's own vector does not (its context vector is its
own, as a session's first turn's is).

A turn after a long one is read alone (``Settings.turn_context_previous_max_words``): a statement
made after a recited article ("刚想起来，合唱团今年五一的年会的负责人是马库斯。") does not answer
it, and read after it its vector is mostly the article's. Chat answers a short turn; what follows
a long one rarely needs it to be understood (LoCoMo 0.9102 → 0.9106 soft, one question fewer strict;
LongMemEval 0.906 → 0.911; docs/journal/evaluation-diary.md, late afternoon of 2026-12-02).
"""

from __future__ import annotations

from typing import Sequence

from agent_memory.core.records import MemoryItem
from agent_memory.core.text import words
from agent_memory.index.items import embedding_text, is_tool_turn


def context_text(item: MemoryItem, previous: MemoryItem | None, previous_max_words: int) -> str:
    """``item`` read after ``previous`` (the last piece of the turn before it), or alone when that turn
    is longer than ``previous_max_words`` words (a turn stored in pieces always is: a piece holds
    ``chunk_tokens``, and its last piece may be short) or there is none."""
    own = embedding_text(item)
    if is_tool_turn(item):
        return own  # a tool call and its results say what they are about: no second vector
    if previous is not None:
        long = previous.chunk_index > 0 or len(words(previous.text)) > previous_max_words
        return own if long else f"{embedding_text(previous)}\n{own}"
    # A turn promoted from a live session carries the turn it answers (that one may not be stored).
    stated = item.metadata.get("previous_turn")
    if isinstance(stated, dict) and stated.get("text"):
        if len(words(str(stated["text"]))) > previous_max_words:
            return own
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
    limit = services.settings.turn_context_previous_max_words
    return [context_text(i, previous.get(i.id), limit) for i in items]


def turn_context_texts(services, units: Sequence, wanted: Sequence | None = None) -> dict[str, str]:
    """Item ID of each turn's first piece → its context text, for the turn units (``SourceItems``)
    ``wanted`` (default: all of ``units``): the previous turn (seq − 1 of its session) is taken
    from ``units`` when there, else from the stores (``previous_turns``: one catalog query per
    session), as a question would find it. Later pieces of a long turn have no entry: their
    context is their own text."""
    turns = [u for u in units if u.kind == "turn" and u.items]
    by_position = {(u.tenant, u.session_id, u.seq): u for u in turns if u.session_id and u.seq is not None}
    out: dict[str, str] = {}
    lookup: dict[str, list[MemoryItem]] = {}
    limit = services.settings.turn_context_previous_max_words
    for unit in (turns if wanted is None else [u for u in wanted if u.kind == "turn" and u.items]):
        first = unit.items[0]
        before = by_position.get((unit.tenant, unit.session_id, (unit.seq or 0) - 1)) if unit.seq else None
        if before is not None:
            out[first.id] = context_text(first, before.items[-1], limit)
        elif unit.seq and unit.session_id:
            lookup.setdefault(unit.tenant, []).append(first)  # its previous turn was stored by an earlier job
        else:
            out[first.id] = context_text(first, None, limit)
    for tenant, firsts in lookup.items():
        found = previous_turns(services, tenant, firsts)
        out.update((i.id, context_text(i, found.get(i.id), limit)) for i in firsts)
    return out


def next_turns(services, tenant: str, last_pieces: Sequence[MemoryItem]) -> dict[str, MemoryItem]:
    """The stored first piece of the turn after each given turn (by the given item's id), through
    one catalog query per session: whose context a rewritten turn changes."""
    wanted: dict[tuple[str, int], list[MemoryItem]] = {}
    for item in last_pieces:
        session, seq = item.metadata.get("session_id"), item.metadata.get("seq")
        if item.kind == "turn" and session and seq is not None:
            wanted.setdefault((session, int(seq) + 1), []).append(item)
    first_piece: dict[tuple[str, int], str] = {}
    sessions: dict[str, list[int]] = {}
    for session, seq in wanted:
        sessions.setdefault(session, []).append(seq)
    for session, seqs in sessions.items():
        low, high = min(seqs), max(seqs)
        for entry in services.catalog.session_neighbours(tenant, session, low, 0, high - low):
            if (session, entry.seq) in wanted and entry.item_ids:
                first_piece[(session, entry.seq)] = entry.item_ids[0]
    items = {i.id: i for i in services.vectors.get(list(dict.fromkeys(first_piece.values())))} if first_piece else {}
    return {before.id: items[first_piece[pos]] for pos, befores in wanted.items()
            if first_piece.get(pos) in items for before in befores}


def session_context_texts(session_items: Sequence[Sequence[MemoryItem]], previous_max_words: int) -> list[str]:
    """Context texts of a session's turns given in order (each turn's items): ingestion embeds them."""
    texts: list[str] = []
    previous: MemoryItem | None = None
    for items in session_items:
        if not items:
            continue
        texts.append(context_text(items[0], previous, previous_max_words))
        previous = items[-1]
    return texts
