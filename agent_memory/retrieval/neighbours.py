"""Neighbours: context placed right after the strongest passages, before de-duplication.

Turns beside the strongest turns (a reply answers its neighbour); chunks of the same document beside the
strongest chunks, bounded to short documents (``chunk_neighbour_source_tokens``), so that a paragraph split
past the chunk size reads whole. Numbers: ``RetrievalConfig`` (``neighbours``, ``chunk_neighbours`` ...)."""

from __future__ import annotations

from agent_memory.core.records import MemoryItem, SearchFilter
from agent_memory.core.tokens import TokenCounter
from agent_memory.retrieval.config import RetrievalConfig
from agent_memory.retrieval.routes import passes
from agent_memory.retrieval.types import Candidate, Decision
from agent_memory.services import Services


def add_neighbours(services: Services, config: RetrievalConfig, counter: TokenCounter, ranked: list[Candidate],
                   flt: SearchFilter, decisions: list[Decision]) -> list[Candidate]:
    """Turns next to the strongest turns, and chunks next to the strongest chunks, are cheap
    context (a reply answers its neighbour; an answer runs past a chunk border): each is
    inserted right after its anchor. A chunk neighbour that was already a weaker candidate
    moves up to its anchor: a paragraph split in two is read whole only if both halves reach
    the prompt together (MuSiQue: a passage's first half at rank 1, its second at rank 19)."""
    extra: dict[str, list[Candidate]] = {}
    present = {c.item.id for c in ranked}
    position = {c.item.id: rank for rank, c in enumerate(ranked)}
    moved: set[str] = set()

    def insert(anchor: Candidate, items: list[MemoryItem]) -> None:
        for item in items:
            if item.id in present or not passes(item, flt):
                continue
            present.add(item.id)
            cand = Candidate(item=item, final=anchor.final * 0.5, note=f"neighbour of {anchor.item.source_id}")
            extra.setdefault(anchor.item.id, []).append(cand)
            decisions.append(Decision("neighbours", item.source_id, "added",
                                      f"next to strong {anchor.item.kind} {anchor.item.source_id}"))

    def move_up(anchor: Candidate, cands: list[Candidate]) -> None:
        for cand in cands:
            if cand.item.id in moved or position[cand.item.id] < position[anchor.item.id]:
                continue
            moved.add(cand.item.id)
            extra.setdefault(anchor.item.id, []).append(cand)
            decisions.append(Decision("neighbours", cand.item.source_id, "moved",
                                      f"next to strong chunk {anchor.item.id} of its document"))

    if config.neighbours and config.neighbour_top:
        turns = [c for c in ranked if c.item.kind == "turn" and c.item.metadata.get("session_id")]
        for anchor in turns[: config.neighbour_top]:
            meta = anchor.item.metadata
            entries = services.catalog.session_neighbours(
                flt.tenant, meta["session_id"], int(meta.get("seq", 0)), config.neighbours,
                config.neighbours)
            ids = [i for e in entries for i in e.item_ids if i not in present]
            insert(anchor, services.vectors.get(ids) if ids else [])
    if config.chunk_neighbours and config.chunk_neighbour_top:
        chunks = [c for c in ranked if c.item.kind == "chunk"][: config.chunk_neighbour_top]
        by_source: dict[str, list[Candidate]] = {}
        for cand in ranked:
            if cand.item.kind == "chunk":
                by_source.setdefault(cand.item.source_id, []).append(cand)
        # One catalog read and one vector read for all anchors' documents.
        entries = services.catalog.get_many(flt.tenant, list(dict.fromkeys(c.item.source_id for c in chunks)))
        bound = config.chunk_neighbour_source_tokens
        if bound:
            entries = {source: e for source, e in entries.items() if len(e.item_ids) <= most_items(bound)}
        ids = [i for e in entries.values() for i in e.item_ids if i not in present]
        fetched: dict[str, list[MemoryItem]] = {}
        for item in (services.vectors.get(ids) if ids else []):
            if item.kind == "chunk":
                fetched.setdefault(item.source_id, []).append(item)
        # With a bound, a document without an entry (or listing too many items) is not known to be short.
        short = {source for source in entries
                 if document_tokens(counter, by_source[source], fetched.get(source, [])) <= bound} if bound else set()
        for anchor in chunks:
            if anchor.item.id in moved:
                continue  # itself a neighbour placed after a stronger chunk
            source = anchor.item.source_id
            if bound and source not in short:
                continue
            others = fetched.get(source, [])
            move_up(anchor, sorted((c for c in by_source[source]
                                    if 0 < abs(c.item.chunk_index - anchor.item.chunk_index)
                                    <= config.chunk_neighbours), key=lambda c: c.item.chunk_index))
            siblings = [i for i in others
                        if 0 < abs(i.chunk_index - anchor.item.chunk_index) <= config.chunk_neighbours]
            insert(anchor, sorted(siblings, key=lambda i: i.chunk_index))
    if not extra:
        return ranked
    out: list[Candidate] = []
    for cand in ranked:
        if cand.item.id in moved:
            continue
        out.append(cand)
        out.extend(extra.get(cand.item.id, []))
    return out


def document_tokens(counter: TokenCounter, candidates: list[Candidate], fetched: list[MemoryItem]) -> int:
    """Tokens in all chunks of one document: those among the candidates and those fetched."""
    chunks = {c.item.chunk_index: c.item.text for c in candidates}
    chunks.update((i.chunk_index, i.text) for i in fetched)
    return sum(counter.count(text) for text in chunks.values())


def most_items(bound: int) -> int:
    """The most catalog items a document within ``bound`` tokens is expected to list: its chunks and about
    as many summaries, a dozen at most for 512 tokens in the development stores; bound / 16 leaves a wide
    margin. A document listing more is taken as long without reading it, so that a book's every item is
    never read on a question."""
    return max(16, bound // 16)
