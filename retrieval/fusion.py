"""Reciprocal rank fusion with per-route weights, and the rerankers."""

from __future__ import annotations

import math
import re
from typing import Callable, Protocol, Sequence

import numpy as np

from agent_memory.text import keyword_set, keyword_terms

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
    """No extra model: a weighted sum of standardized signals, then conversation context.

    Signals (each z-scored over the candidates): query-passage embedding similarity, the
    same similarity for each turn read after the turn it answers (see ingest/context.py), the
    keyword route's BM25 score, IDF-weighted query-term coverage, and the fused RRF score.
    Passage vectors come from the embedding cache (they were embedded at ingestion), so
    this costs a lookup, not a model call. Then, for conversation turns, two context
    terms: the best neighbouring turn's score (a reply often holds the fact its neighbour
    asked about) and the strength of the turn's session (facts cluster by session). The
    weights were chosen on aggregate recall over LoCoMo conversations; see the closing note.
    Then the length of a turn: beyond ``length_words`` words, a penalty per doubling (a long
    turn takes the room of several short ones; chunks are bounded by the splitter). Last,
    raw bonuses: the graph route's score, the link score of pages that a top passage names
    (see retrieval/pages.py), and the time score of items dated inside the window the
    question names (see retrieval/when.py).
    """

    name = "default"

    def __init__(self, vectors_for: Callable[[Sequence[Candidate]], np.ndarray], weights: dict[str, float],
                 neighbour_weight: float = 0.3, session_weight: float = 0.4, session_top: int = 3,
                 speaker_weight: float = 0.5, graph_weight: float = 0.0, link_weight: float = 0.0,
                 speaker_prior: dict[str, float] | None = None, time_weight: float = 0.0,
                 length_weight: float = 0.0, length_words: int = 60,
                 context_vectors_for: Callable[[Sequence[Candidate]], np.ndarray] | None = None) -> None:
        self.context_vectors_for = context_vectors_for
        self.time_weight = time_weight
        self.length_weight = length_weight
        self.length_words = length_words
        self.speaker_prior = {k.lower(): v for k, v in (speaker_prior or {}).items()}
        self.vectors_for = vectors_for
        self.graph_weight = graph_weight
        self.link_weight = link_weight
        self.weights = weights
        self.speaker_weight = speaker_weight
        self.neighbour_weight = neighbour_weight
        self.session_weight = session_weight
        self.session_top = session_top

    def rerank(self, query: str, query_vector: np.ndarray | None, candidates: list[Candidate]) -> list[Candidate]:
        if not candidates:
            return candidates
        n = len(candidates)
        signals: dict[str, np.ndarray] = {
            "fused": np.array([c.fused for c in candidates], dtype=np.float64),
            "keyword": np.array([c.route_scores.get("keyword", 0.0) for c in candidates], dtype=np.float64),
            "terms": np.array(term_coverage(query, [c.item.text for c in candidates]), dtype=np.float64),
            "dense": np.zeros(n),
        }
        if query_vector is not None and self.weights.get("dense", 0):
            signals["dense"] = (self.vectors_for(candidates) @ query_vector.astype(np.float32)).astype(np.float64)
        if query_vector is not None and self.weights.get("turn_context", 0) and self.context_vectors_for is not None:
            signals["turn_context"] = (self.context_vectors_for(candidates)
                                       @ query_vector.astype(np.float32)).astype(np.float64)
        score = np.zeros(n)
        for name, weight in self.weights.items():
            if weight and name in signals:
                score += weight * _standardize(signals[name])
        score = self._with_context(candidates, score)
        if self.length_weight:
            score = score - self.length_weight * _length_excess(candidates, self.length_words)
        score = score + self.speaker_weight * _speaker_named(query, candidates)
        if self.speaker_prior:
            score = score + np.array([self.speaker_prior.get(str(c.item.metadata.get("speaker", "")).lower(), 0.0)
                                      if c.item.kind == "turn" else 0.0 for c in candidates])
        # Entity links are evidence similarity cannot see: a page the question or a top
        # passage names. Raw route scores in [0, 1], not standardized: most candidates have none.
        for route, weight in (("graph", self.graph_weight), ("links", self.link_weight), ("time", self.time_weight)):
            if weight:
                score = score + weight * np.array([c.route_scores.get(route, 0.0) for c in candidates])
        for cand, value in zip(candidates, score):
            cand.rerank = float(value)
            cand.final = cand.rerank
        return sorted(candidates, key=lambda c: -c.final)

    def _with_context(self, candidates: list[Candidate], score: np.ndarray) -> np.ndarray:
        sessions = [c.item.metadata.get("session_id") if c.item.kind == "turn" else None for c in candidates]
        if not any(sessions):
            return score
        position = {(s, int(c.item.metadata.get("seq", 0) or 0)): i
                    for i, (s, c) in enumerate(zip(sessions, candidates)) if s}
        by_session: dict[str, list[float]] = {}
        for s, value in zip(sessions, score):
            if s:
                by_session.setdefault(s, []).append(float(value))
        strength = {s: float(np.mean(sorted(v, reverse=True)[: self.session_top])) for s, v in by_session.items()}
        out = score.copy()
        for i, (s, cand) in enumerate(zip(sessions, candidates)):
            if not s:
                continue
            seq = int(cand.item.metadata.get("seq", 0) or 0)
            around = [position.get((s, seq + d)) for d in (-1, 1)]
            near = [score[j] for j in around if j is not None]
            if near:
                out[i] += self.neighbour_weight * max(near)
            out[i] += self.session_weight * strength[s]
        return out


_WORD = re.compile(r"\w+")


# Roles, not names: "the user" in a question is a topic word, and LongMemEval's turns are all one of these.
_ROLES = {"user", "assistant", "system", "tool", "human", "ai"}


def without_names(question: str, names: Sequence[str]) -> str:
    """The question without the given names (as written, with their possessive 's), spaces tidied."""
    names = [n for n in names if len(n) > 2 and n.lower() not in _ROLES]
    if not names:
        return question
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
                         + r")(?:'s|’s)?\b")
    return re.sub(r"\s{2,}", " ", pattern.sub("", question)).strip()


def _speaker_named(query: str, candidates: list[Candidate]) -> np.ndarray:
    """1 for turns whose speaker the question names ("What did Caroline research?"), else 0."""
    lowered = " " + " ".join(_WORD.findall(query.lower())) + " "
    speakers = {c.item.metadata.get("speaker") for c in candidates if c.item.kind == "turn"}
    named = {s for s in speakers if s and f" {s.lower()} " in lowered}
    return np.array([1.0 if c.item.kind == "turn" and c.item.metadata.get("speaker") in named else 0.0
                     for c in candidates])


def _length_excess(candidates: list[Candidate], words: int) -> np.ndarray:
    """log2 of how many times longer than ``words`` a turn is (0 when shorter). Under a hard budget
    a long turn must earn its room: an assistant's essay outweighs several of the user's facts.
    Chunks are bounded by the splitter and are left alone."""
    return np.array([max(0.0, math.log2(len(c.item.text.split()) / words)) if c.item.kind == "turn" and
                     c.item.text.strip() else 0.0 for c in candidates])


def _standardize(values: np.ndarray) -> np.ndarray:
    spread = values.std()
    return (values - values.mean()) / spread if spread > 0 else np.zeros_like(values)


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
    docs = [keyword_set(t) for t in texts]
    n = len(docs)
    idf = {w: math.log(1 + n / (1 + sum(1 for d in docs if w in d))) for w in q_terms}
    total = sum(idf.values()) or 1.0
    return [sum(idf[w] for w in q_terms if w in d) / total for d in docs]
