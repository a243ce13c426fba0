"""The text an item is embedded and searched by, as ingestion writes it and retrieval re-derives it."""

from __future__ import annotations

from agent_memory.core.records import MemoryItem
from agent_memory.core.text import joined_terms


def embedding_text(item: MemoryItem) -> str:
    """What gets embedded: turns carry their speaker, chunks their document title."""
    speaker = item.metadata.get("speaker")
    if item.kind == "turn" and speaker:
        return f"{speaker}: {item.text}"
    title = item.metadata.get("title")
    if title and item.kind == "chunk" and title.lower() not in item.text[:200].lower():
        return f"{title}. {item.text}"
    return item.text


def is_tool_turn(item: MemoryItem) -> bool:
    """An archived tool call with its results, or a late result: a turn whose metadata names the tools it holds
    (``conversation/tool_turns.py``). It is embedded once per piece (``context.py``, ``sentences.py``) and read
    for its prose alone by the graph (``triples/prose.py``)."""
    return item.kind == "turn" and bool(item.metadata.get("tools"))


def stamp_terms(items) -> None:
    """Each item's keyword terms, stored with it: the reranker's terms signal reads them instead of
    segmenting and stemming the text of every candidate it has not met (agent_memory/retrieval/rerank/signals.py).
    An item that has them keeps them (the text is unchanged)."""
    for item in items:
        if item.terms is None:
            item.terms = joined_terms(item.text)
