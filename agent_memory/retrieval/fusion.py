"""Reciprocal rank fusion with per-list weights: the one implementation, for the routes and for the
rewritten question's variants. Ranking lives in ``agent_memory/retrieval/rerank/``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from agent_memory.retrieval.types import Candidate


def rrf(ranked: Iterable[tuple[float, Sequence[str]]], k: int) -> dict[str, float]:
    """Weighted RRF over ``(weight, ids best first)`` lists: each list adds weight / (k + rank) to
    every ID it holds (rank from 1). The IDs in order of first appearance, so a stable sort by
    score breaks ties by the earlier list, then the better rank."""
    scores: dict[str, float] = {}
    for weight, ids in ranked:
        for rank, item_id in enumerate(ids, start=1):
            scores[item_id] = scores.get(item_id, 0.0) + weight / (k + rank)
    return scores


def fuse(route_hits: dict[str, list], weights: dict[str, float], k: int) -> list[Candidate]:
    """The routes' hits as candidates ranked by weighted RRF (a route without a weight counts 1)."""
    scores = rrf(((weights.get(route, 1.0), [hit.item.id for hit in hits]) for route, hits in route_hits.items()), k)
    by_id: dict[str, Candidate] = {}
    for route, hits in route_hits.items():
        for rank, hit in enumerate(hits, start=1):
            cand = by_id.get(hit.item.id)
            if cand is None:
                cand = by_id[hit.item.id] = Candidate(item=hit.item)
            cand.route_scores[route] = float(hit.score)
            cand.route_ranks[route] = rank
    for item_id, cand in by_id.items():
        cand.fused = scores[item_id]
    ranked = sorted(by_id.values(), key=lambda c: -c.fused)
    for cand in ranked:
        cand.final = cand.fused
    return ranked
