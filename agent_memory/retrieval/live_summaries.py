"""The live session's compaction summaries, ranked by the question.

Compaction leaves a summary of each span it takes out of a session's view (agent_memory/conversation/
compaction.py): a digest of a few hundred tokens in lines (goals, facts, tool results, decisions, identifiers).
The prompt's summaries section holds a small share of the budget (``shares.summaries``), often less than one
summary, so which summary goes in is decided by the question, not by age: each summary scores by its line
closest in meaning to the question (each line embedded once; the embedder caches by content, so a summary's
lines are embedded the first time a question meets them) and by the share of the question's keyword terms
it holds (``LiveSummaries``); equal scores keep the newest first. The assembler shows a summary longer than
the room left as its lines that carry the question's terms (agent_memory/retrieval/compress.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agent_memory.core.embedding_spaces import QueryVectors
from agent_memory.core.records import MemoryItem
from agent_memory.core.text import keyword_terms
from agent_memory.retrieval.config import LiveSummaries


def summary_lines(text: str) -> list[str]:
    """A summary's lines that say something: a section's title alone ("Tool results:") is left out."""
    return [line.strip() for line in text.splitlines() if line.strip() and not line.rstrip().endswith((":", "："))]


@dataclass
class RankedSummary:
    item: MemoryItem
    score: float
    why: str


class LiveSummaryRanker:
    """``rank(question, dense, items)``: the summaries (newest first, as working memory gives them) best first."""

    def __init__(self, embedder, config: LiveSummaries) -> None:
        self.embedder = embedder  # agent_memory/core/embedding_spaces.EmbeddingSpaces: routes and caches by content
        self.config = config

    def rank(self, question: str, dense: QueryVectors | None, items: list[MemoryItem]) -> list[RankedSummary]:
        if not items:
            return []
        config = self.config
        meaning = self._meaning(dense, items) if config.dense and dense else np.zeros(len(items))
        asked = set(keyword_terms(question))
        ranked = []
        for position, (item, similarity) in enumerate(zip(items, meaning)):
            held = len(asked & set(keyword_terms(item.text)))
            terms = held / len(asked) if asked else 0.0
            newer = config.newest * (len(items) - 1 - position) / max(1, len(items) - 1)
            score = config.dense * float(similarity) + config.terms * terms + newer
            why = (f"best line by meaning {similarity:.2f}, question terms {held}/{len(asked)}, "
                   f"{position + 1} of {len(items)} newest first")
            ranked.append(RankedSummary(item, score, why))
        # Ties (no line near the question, no term of it) keep the newest first.
        order = sorted(range(len(ranked)), key=lambda k: (-ranked[k].score, k))
        return [ranked[k] for k in order]

    def _meaning(self, dense: QueryVectors, items: list[MemoryItem]) -> np.ndarray:
        """Per summary, the calibrated similarity of its line nearest the question."""
        lines = [summary_lines(item.text) or [item.text] for item in items]
        flat = [line for group in lines for line in group]
        spaces = self.embedder.spaces_for(flat)
        vectors = self.embedder.embed_documents(flat, spaces)
        scores = self.embedder.similarities(vectors, spaces, [self.embedder.lang_of(t) for t in flat], dense)
        out, start = np.zeros(len(items)), 0
        for k, group in enumerate(lines):
            out[k] = float(scores[start:start + len(group)].max())
            start += len(group)
        return out
