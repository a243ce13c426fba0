"""The cross-encoder stage: the reranker's first candidates re-ordered by a model that reads the question
and each passage together.

The reranker's signals compare the question with each passage apart (embedding similarity, shared
terms). A cross-encoder reads both at once, which can find the evidence a multi-hop question's words do
not share. The only models measured here are ones trained here from the packaged MiniLM on a few hundred
LoCoMo questions (benchmarks/train_cross_encoder.py): held out, one conversation fold gained (multi-hop
strict 0.485 -> 0.588 replayed), the other lost (0.923 / 0.885 -> 0.901 / 0.856 through the served path), so
the served default sets no model (docs/journal/2026-12-06-a-cross-encoder-trained-here.md).
The stage runs only where a model is configured (``Settings.cross_encoder_model``); it costs question
time, one model call per candidate scored. A scorer that fails leaves the reranker's order, with a
warning and a decision: a question never fails because of it.
"""

from __future__ import annotations

import logging
from typing import Protocol, Sequence

import numpy as np

from agent_memory.core.records import MemoryItem
from agent_memory.retrieval.config_parts import CrossEncoderConfig
from agent_memory.retrieval.rerank.signals import standardize
from agent_memory.retrieval.types import Candidate, Decision

log = logging.getLogger(__name__)


class PassageScorer(Protocol):
    def score(self, question: str, passages: Sequence[str], *, max_tokens: int, batch: int) -> list[float]:
        """One relevance logit per passage (higher: more relevant), each pair cut to ``max_tokens`` tokens
        (only the passage is cut), ``batch`` pairs per model call (agent_memory/core/onnx_cross_encoder.py)."""


def passage_text(item: MemoryItem) -> str:
    """What the model reads of an item, exactly as it was trained (benchmarks/train_cross_encoder.py): a
    turn with its speaker, as the prompt shows it, unless its text already starts with the speaker's name."""
    speaker = item.metadata.get("speaker")
    text = item.text
    return f"{speaker}: {text}" if speaker and not text.startswith(f"{speaker}:") else text


def cross_encode(question: str, ranked: list[Candidate], scorer: PassageScorer, config: CrossEncoderConfig,
                 decisions: list[Decision]) -> list[Candidate]:
    """``ranked`` (the reranker's order, best first) with its first ``config.top`` re-ordered by
    ``z(-rank) + weight * z(logit)``; ties keep the reranker's order, and the candidates beyond ``top`` keep
    theirs. The re-ordered candidates take the first ``top`` finals by position, so the finals stay sorted
    for the stages after (links, the second hop, neighbours, assembly). A moved candidate's decision says
    from which rank to which and its logit."""
    head = ranked[: config.top]
    if len(head) < 2 or not config.weight:
        return ranked
    try:
        logits = np.asarray(scorer.score(question, [passage_text(c.item) for c in head],
                                         max_tokens=config.max_tokens, batch=config.batch), dtype=np.float64)
        if logits.shape != (len(head),) or not np.isfinite(logits).all():
            raise ValueError(f"{logits.size} scores for {len(head)} passages, or a score not finite")
    except Exception as exc:  # noqa: BLE001 - the ranking goes on without it: a question never fails here
        log.warning("cross-encoder failed, the reranker's order kept: %s: %s", type(exc).__name__, exc)
        decisions.append(Decision("cross_encoder", f"{len(head)} candidates", "skipped",
                                  f"the model failed ({type(exc).__name__}: {str(exc)[:200]}): the reranker's "
                                  "order kept"))
        return ranked
    combined = standardize(-np.arange(len(head), dtype=np.float64)) + config.weight * standardize(logits)
    order = np.argsort(-combined, kind="stable")
    finals = [c.final for c in head]
    reordered = [head[i] for i in order]
    for new, (cand, old) in enumerate(zip(reordered, order)):
        cand.final = finals[new]
        if new != old:
            decisions.append(Decision("cross_encoder", cand.item.id, "moved",
                                      f"rank {old + 1} → {new + 1}, logit {logits[old]:.3f}"))
    return reordered + ranked[config.top:]
