"""The default reranker: per kind of item, a weighted sum of standardized signals, then bonuses.

Similarity signals (``dense``, ``turn_context``, ``keyword``, ``terms``, ``fused``) are z-scored
over all candidates together, then weighted by the candidate's kind: turns by
``RetrievalConfig.turn_weights``, chunks, summaries and facts by ``chunk_weights``. Turn signals
(neighbours and session, named speaker, speaker prior, others told of, length) apply to turns, a turn by a role
read alone (``context_read_alone``) taking nothing of its neighbour's; document signals
(graph page and links) to everything else; the time window to every kind. A memory of one kind
ranks exactly as the configuration tuned on that kind.
"""

from __future__ import annotations

import time
from typing import Callable, Protocol, Sequence

import numpy as np

from agent_memory.index.triples.speaker import asks_of_assistant
from agent_memory.retrieval.advice import asks_for_advice
from agent_memory.retrieval.config import RetrievalConfig
from agent_memory.retrieval.config_parts import SignalWeights
from agent_memory.retrieval.rerank import signals
from agent_memory.retrieval.types import Candidate

# (candidates, "dense" | "turn_context") -> similarity to the question, on one scale for all spaces.
Similarity = Callable[[Sequence[Candidate], str], np.ndarray]
SIMILARITY_SIGNALS = ("dense", "turn_context")
DOCUMENT_KINDS = {"chunk", "summary", "fact"}


class Reranker(Protocol):
    name: str

    def rerank(self, query: str, candidates: list[Candidate], similarity: Similarity | None = None,
               terms_query: str | None = None) -> list[Candidate]:
        """``similarity`` gives the embedding signals of this question (None: they are left out); ``terms_query``
        what the term coverage reads instead of ``query`` (agent_memory/retrieval/succession.py: a "before X"
        question without X)."""


class DefaultReranker:
    name = "default"

    def __init__(self, config: RetrievalConfig, *, graph: bool = True) -> None:
        self.config = config
        self.graph = graph  # the graph and link bonuses exist only when the graph route runs

    def _weights(self, candidates: Sequence[Candidate]) -> dict[str, np.ndarray]:
        """Per signal, the weight of each candidate (by its kind)."""
        rows = [self.config.turn_weights if c.item.kind == "turn" else self.config.chunk_weights for c in candidates]
        return {name: np.array([getattr(w, name) for w in rows]) for name in SignalWeights.model_fields}

    def rerank(self, query: str, candidates: list[Candidate], similarity: Similarity | None = None,
               terms_query: str | None = None) -> list[Candidate]:
        if not candidates:
            return candidates
        cfg = self.config
        weights = self._weights(candidates)
        values: dict[str, np.ndarray] = {
            "fused": np.array([c.fused for c in candidates], dtype=np.float64),
            "keyword": np.array([c.route_scores.get("keyword", 0.0) for c in candidates], dtype=np.float64),
            "terms": np.array(signals.term_coverage(terms_query or query, [c.item.text for c in candidates],
                                                    [c.item.terms for c in candidates]), dtype=np.float64),
        }
        for name in SIMILARITY_SIGNALS:
            if similarity is not None and weights[name].any():
                values[name] = similarity(candidates, name)
        alone = signals.read_alone(candidates, cfg.context_read_alone,
                                   answer_with_ask=cfg.context_answer_with_ask and asks_of_assistant(query))
        if alone.any() and "turn_context" in values and "dense" in values:
            values["turn_context"] = np.where(alone, values["dense"], values["turn_context"])
        score = np.zeros(len(candidates))
        for name, value in values.items():
            if weights[name].any():
                score += weights[name] * signals.standardize(value)
        score = signals.conversation_context(candidates, score, cfg.context_neighbour, cfg.context_session,
                                             cfg.session_top, alone)
        score -= cfg.length_signal * signals.length_excess(candidates, cfg.length_words, cfg.cjk_chars_per_word)
        score += cfg.speaker_named * signals.speaker_named(query, candidates)
        score += signals.speaker_prior(candidates, cfg.speaker_prior)
        if cfg.others_told:
            score -= cfg.others_told * signals.tells_of_others(query, candidates)
        if self.graph:
            score += cfg.graph_signal * signals.route_bonus(candidates, "graph", DOCUMENT_KINDS)
            score += cfg.link_signal * signals.route_bonus(candidates, "links", DOCUMENT_KINDS)
        if cfg.title_signal:
            score += cfg.title_signal * signals.title_in_question(query, candidates)
        score += cfg.time_signal * signals.route_bonus(candidates, "time")
        if cfg.second_hop:
            score += cfg.hop_signal * signals.route_bonus(candidates, "hop")
        if cfg.advice.signal and similarity is not None and asks_for_advice(query):
            turns = np.array([c.item.kind == "turn" for c in candidates], dtype=np.float64)
            score += cfg.advice.signal * turns * signals.standardize(similarity(candidates, "standing"))
        if cfg.importance_signal:
            score += cfg.importance_signal * signals.importance(candidates, cfg.importance_half_life_days, time.time())
        for cand, value in zip(candidates, score):
            cand.rerank = float(value)
            cand.final = cand.rerank
        return sorted(candidates, key=lambda c: -c.final)
