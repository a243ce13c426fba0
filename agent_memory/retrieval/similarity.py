"""How similar each candidate is to the question, for the reranker (agent_memory/retrieval/rerank/) and
de-duplication: each candidate against the question in its own embedding space, calibrated so
that spaces compare (agent_memory/core/embedding_spaces.py).

Vectors come from what is stored with each item (agent_memory/retrieval/stored_vectors.py); only a candidate
the store cannot answer for is embedded here, from its text, once.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from agent_memory.core.embedding_spaces import QueryVectors
from agent_memory.index.context import context_texts_for
from agent_memory.index.items import embedding_text
from agent_memory.retrieval.advice import StandingExamples
from agent_memory.retrieval.stored_vectors import context_similarity, fill_dense, with_sentences
from agent_memory.retrieval.types import Candidate


class QuestionSimilarity:
    """``similarity(candidates, signal)``: one calibrated similarity per candidate, ``signal``
    "dense" (the passage's own vector; a long turn's best sentence when that is better) or
    "turn_context" (a turn read after the turn before it, agent_memory/index/context.py), or "standing"
    (not the question's: how like a user's standing statement it reads, agent_memory/retrieval/advice.py).

    An item's similarity to the question does not change while the question is answered: the
    links' rerank (agent_memory/retrieval/links.py) asks again for the candidates the first rerank scored, and
    only the pages it added are scored (11k mixed items: the links stage's p95 was a whole second
    rerank). So each is computed once per question and signal."""

    def __init__(self, services, question: QueryVectors, standing: StandingExamples | None = None) -> None:
        self.services = services
        self.question = question
        self.standing = standing  # an advice request's examples of standing statements (signal "standing")
        self._known: dict[str, dict[str, float]] = {}

    def __call__(self, candidates: Sequence[Candidate], signal: str) -> np.ndarray:
        seen = self._known.setdefault(signal, {})
        missing = list({c.item.id: c for c in candidates if c.item.id not in seen}.values())
        if missing:
            seen.update(zip((c.item.id for c in missing), self._computed(missing, signal).tolist()))
        return np.array([seen[c.item.id] for c in candidates], dtype=np.float64)

    def _computed(self, candidates: list[Candidate], signal: str) -> np.ndarray:
        if signal == "turn_context":  # scored by the store on each turn's stored context vector
            return context_similarity(self.services, candidates, self.question,
                                      lambda rest: self._embedded(rest, signal))
        if signal == "standing":  # not the question: how like a standing statement each passage reads
            if self.standing is None:
                return np.zeros(len(candidates))
            vectors = candidate_vectors(self.services, candidates)
            return self.standing.similarity(vectors, spaces_of(candidates), [c.vector_lang for c in candidates])
        # A long turn scores by its best sentence when that is better, as the dense route does.
        return with_sentences(self.services, candidates, self.question, self._embedded(candidates, signal))

    def _embedded(self, candidates: list[Candidate], signal: str) -> np.ndarray:
        if signal == "dense":
            field, vectors = "vector", candidate_vectors(self.services, candidates)
        else:
            field = "context_vector"
            vectors = _stacked(self.services, candidates, field,
                               lambda items: context_texts_for(self.services, items[0].tenant, items))
        langs = [getattr(c, field + "_lang") for c in candidates]
        return self.services.embedder.similarities(vectors, spaces_of(candidates, field), langs, self.question)


def spaces_of(candidates: Sequence[Candidate], field: str = "vector") -> list[str]:
    """The space each candidate's vector in ``field`` was embedded in (decided by its text)."""
    return [getattr(c, field + "_space") for c in candidates]


def candidate_vectors(services, candidates: Sequence[Candidate]) -> np.ndarray:
    """Passage vectors from the embedding cache, else from the vector store, once per candidate:
    the reranker and de-duplication both need them."""
    fill_dense(services, candidates)
    return _stacked(services, candidates, "vector", lambda items: [embedding_text(i) for i in items])


def _stacked(services, candidates: Sequence[Candidate], field: str,
             texts_of: Callable[[list], list[str]]) -> np.ndarray:
    """The candidates' vectors kept in ``field`` (and their space in ``field``_space); those not
    yet there are embedded once, together, each text in the space its language routes to.
    Context vectors land here only for a turn stored before its context vector was."""
    missing = [c for c in candidates if getattr(c, field) is None]
    if missing:
        embedder = services.embedder
        texts = texts_of([c.item for c in missing])
        spaces = embedder.spaces_for(texts)
        for cand, vector, space, text in zip(missing, embedder.embed_documents(texts, spaces), spaces, texts):
            setattr(cand, field, vector)
            setattr(cand, field + "_space", space)
            setattr(cand, field + "_lang", embedder.lang_of(text))
    if not candidates:
        return np.zeros((0, services.embedder.dimension), dtype=np.float32)
    return np.vstack([getattr(c, field) for c in candidates])
