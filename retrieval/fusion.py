"""Reciprocal rank fusion with per-route weights, and the rerankers."""

from __future__ import annotations

import math
from typing import Callable, Protocol, Sequence

import numpy as np

from agent_memory.text import keyword_terms

from .types import Candidate


def fuse(route_hits: dict[str, list], weights: dict[str, float], k: int = 60) -> list[Candidate]:
    """Weighted RRF: each route adds weight / (k + rank) for every item it returned."""
    by_id: dict[str, Candidate] = {}
    for route, hits in route_hits.items():
        weight = weights.get(route, 1.0)
        for rank, hit in enumerate(hits, start=1):
            cand = by_id.get(hit.item.id)
            if cand is None:
                cand = by_id[hit.item.id] = Candidate(item=hit.item)
            cand.route_scores[route] = float(hit.score)
            cand.route_ranks[route] = rank
            cand.fused += weight / (k + rank)
    ranked = sorted(by_id.values(), key=lambda c: -c.fused)
    for cand in ranked:
        cand.final = cand.fused
    return ranked


class Reranker(Protocol):
    name: str

    def rerank(self, query: str, query_vector: np.ndarray | None, candidates: list[Candidate]) -> list[Candidate]: ...


class DefaultReranker:
    """No extra model: fused rank, query-passage embedding similarity and IDF-weighted term coverage.

    Passage vectors come from the embedding cache (they were embedded at ingestion), so
    this costs a lookup, not a model call.
    """

    name = "default"

    def __init__(self, vectors_for: Callable[[Sequence[Candidate]], np.ndarray], weights: dict[str, float]) -> None:
        self.vectors_for = vectors_for
        self.weights = weights

    def rerank(self, query: str, query_vector: np.ndarray | None, candidates: list[Candidate]) -> list[Candidate]:
        if not candidates:
            return candidates
        top_fused = max(c.fused for c in candidates) or 1.0
        dense = np.zeros(len(candidates), dtype=np.float32)
        if query_vector is not None and self.weights.get("dense", 0):
            matrix = self.vectors_for(candidates)
            dense = matrix @ query_vector.astype(np.float32)
        coverage = term_coverage(query, [c.item.text for c in candidates])
        for cand, cos, cov in zip(candidates, dense, coverage):
            cand.rerank = (
                self.weights.get("fused", 1.0) * cand.fused / top_fused
                + self.weights.get("dense", 1.0) * float(cos)
                + self.weights.get("terms", 1.0) * cov
            )
            cand.final = cand.rerank
        return sorted(candidates, key=lambda c: -c.final)


class CrossEncoderReranker:
    """sentence-transformers CrossEncoder, when a model is available locally (none ships offline here)."""

    name = "cross-encoder"

    def __init__(self, model_name_or_path: str) -> None:
        from sentence_transformers import CrossEncoder

        self.model = CrossEncoder(model_name_or_path, device="cpu")

    def rerank(self, query: str, query_vector, candidates: list[Candidate]) -> list[Candidate]:
        if not candidates:
            return candidates
        scores = self.model.predict([(query, c.item.text) for c in candidates])
        for cand, score in zip(candidates, scores):
            cand.rerank = float(score)
            cand.final = cand.rerank
        return sorted(candidates, key=lambda c: -c.final)


def term_coverage(query: str, texts: Sequence[str]) -> list[float]:
    """Share of the query's content words (IDF-weighted within the candidates) each text contains."""
    q_terms = list(dict.fromkeys(keyword_terms(query)))
    if not q_terms:
        return [0.0] * len(texts)
    docs = [set(keyword_terms(t)) for t in texts]
    n = len(docs)
    idf = {w: math.log(1 + n / (1 + sum(1 for d in docs if w in d))) for w in q_terms}
    total = sum(idf.values()) or 1.0
    return [sum(idf[w] for w in q_terms if w in d) / total for d in docs]
