"""The live session's compaction summaries, ranked by the question.

Compaction leaves a summary of each span it takes out of a session's view (agent_memory/conversation/
compaction.py): a digest of a few hundred tokens in lines (goals, facts, tool results, decisions, identifiers).
The prompt's summaries section holds a small share of the budget (``shares.summaries``), often less than one
summary, so which summary goes in is decided by the question, not by age: each summary scores by the share of
the question's keyword terms it holds and, with ``LiveSummaries.dense`` above 0, by its line closest in meaning to
the question: the lines' vectors are read from the summary's row, where the archive pass stored them after
compaction wrote it (agent_memory/conversation/summary_vectors.py); a summary without them has its lines embedded
here, once (the embedder caches by content). Equal scores keep the newest first. The assembler shows a summary longer than
the room left as its lines that carry the question's terms (agent_memory/retrieval/compress.py).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable

import numpy as np

from agent_memory.conversation.summary_vectors import LineVectors, embed_lines, summary_lines
from agent_memory.core.embedding_spaces import QueryVectors
from agent_memory.core.records import MemoryItem
from agent_memory.core.text import keyword_terms
from agent_memory.retrieval.config_parts import LiveSummaries

# Summaries whose lines' vectors and terms are kept in process (about 45 kB each): a summary never changes once written,
# and each question of a session ranks them all again (88 summaries: 37 ms from the vector cache, 1 ms from here).
KEPT_SUMMARIES = 512


# (tenant, session ID) -> the session's summaries' stored line vectors, by summary text.
StoredLineVectors = Callable[[str, str], dict[str, LineVectors]]


@dataclass
class RankedSummary:
    item: MemoryItem
    score: float
    why: str


@dataclass
class _Prepared:
    terms: frozenset[str]
    vectors: np.ndarray  # one row per line (summary_lines)
    spaces: list[str]
    langs: list[str]


class LiveSummaryRanker:
    """``rank(question, dense, items)``: the summaries (newest first, as working memory gives them) best first."""

    def __init__(self, embedder, config: LiveSummaries, stored: StoredLineVectors | None = None) -> None:
        self.embedder = embedder  # agent_memory/core/embedding_spaces.EmbeddingSpaces: routes and caches by content
        self.config = config
        self.stored = stored  # the live session's stored line vectors (WorkingMemory.summary_line_vectors)
        self._kept: OrderedDict[str, _Prepared] = OrderedDict()
        self._lock = threading.Lock()

    def rank(self, question: str, dense: QueryVectors | None, items: list[MemoryItem]) -> list[RankedSummary]:
        if not items:
            return []
        config = self.config
        prepared = self._prepared(items)
        meaning = self._meaning(dense, prepared) if config.dense and dense else np.zeros(len(items))
        asked = set(keyword_terms(question))
        ranked = []
        for position, (item, ready, similarity) in enumerate(zip(items, prepared, meaning)):
            held = len(asked & ready.terms)
            terms = held / len(asked) if asked else 0.0
            newer = config.newest * (len(items) - 1 - position) / max(1, len(items) - 1)
            score = config.dense * float(similarity) + config.terms * terms + newer
            why = (f"best line by meaning {similarity:.2f}, question terms {held}/{len(asked)}, "
                   f"{position + 1} of {len(items)} newest first")
            ranked.append(RankedSummary(item, score, why))
        # Ties (no line near the question, no term of it) keep the newest first.
        order = sorted(range(len(ranked)), key=lambda k: (-ranked[k].score, k))
        return [ranked[k] for k in order]

    def _meaning(self, dense: QueryVectors, prepared: list[_Prepared]) -> np.ndarray:
        """Per summary, the calibrated similarity of its line nearest the question."""
        scores = self.embedder.similarities(np.vstack([p.vectors for p in prepared]),
                                            [s for p in prepared for s in p.spaces],
                                            [g for p in prepared for g in p.langs], dense)
        out, start = np.zeros(len(prepared)), 0
        for k, ready in enumerate(prepared):
            out[k] = float(scores[start:start + len(ready.spaces)].max())
            start += len(ready.spaces)
        return out

    def _prepared(self, items: list[MemoryItem]) -> list[_Prepared]:
        """Each summary's terms and its lines' vectors: kept here, else stored with the summary, else the lines of
        those still missing embedded in one batch."""
        texts = [item.text for item in items]
        with self._lock:
            kept = {t: self._kept[t] for t in texts if t in self._kept}
        missing = [t for t in dict.fromkeys(texts) if t not in kept]
        if missing and self.config.dense:
            found: dict[str, LineVectors] = {}
            if self.stored is not None:
                for tenant, session in dict.fromkeys((i.tenant, str(i.metadata.get("session_id") or ""))
                                                     for i in items if i.text in missing):
                    found.update(self.stored(tenant, session))
            fresh = [t for t in missing if t not in found]
            found.update(zip(fresh, embed_lines(self.embedder, fresh)) if fresh else ())
            for text in missing:
                lines = found[text]
                kept[text] = _Prepared(frozenset(keyword_terms(text)), lines.vectors, lines.spaces, lines.langs)
        else:  # ranked by terms alone: no line is embedded
            for text in missing:
                count = len(summary_lines(text) or [text])
                kept[text] = _Prepared(frozenset(keyword_terms(text)), np.zeros((count, 0), dtype=np.float32),
                                       [""] * count, [""] * count)
        with self._lock:
            for text in texts:
                self._kept[text] = kept[text]
                self._kept.move_to_end(text)
            while len(self._kept) > KEPT_SUMMARIES:
                self._kept.popitem(last=False)
        return [kept[t] for t in texts]
