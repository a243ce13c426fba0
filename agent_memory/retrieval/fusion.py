"""Reciprocal rank fusion with per-route weights. Ranking lives in ``agent_memory/retrieval/rerank/``."""

from __future__ import annotations

from agent_memory.retrieval.types import Candidate


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
