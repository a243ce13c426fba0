"""One sentence scorer for every extractive choice: query-focused compression (retrieval/compress.py),
the light compaction level (conversation/light.py) and extractive summaries (ingest/summarize.py).

A sentence's score is a weighted sum of its features: how often it holds each of the caller's marks
(question terms, numbers, dates, decision words ...) and where it stands in its text. The callers
differ only in the weights they pass; a feature weighted 0 is not computed and adds nothing. The
terms are added in one fixed order (marks, then position, then length), so a caller's scores are
exactly the sums it computed before it shared this scorer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Mark:
    """A feature found in a sentence: ``weight`` per unit of ``count(sentence)`` (True counts 1)."""

    weight: float
    count: Callable[[str], float]


@dataclass(frozen=True)
class SentenceWeights:
    marks: tuple[Mark, ...] = ()
    first: float = 0.0  # the text's first sentence (lead sentences carry the topic in most prose)
    last: float = 0.0  # the text's last sentence, when it is not also the first
    early: float = 0.0  # times 1 - position / count: the earlier, the more
    later: float = 0.0  # times the position: negative prefers the earlier of otherwise equal sentences
    short: float = 0.0  # added to a sentence of fewer than short_chars characters
    short_chars: int = 0
    long: float = 0.0  # added to a sentence of more than long_chars characters (0: none is long)
    long_chars: int = 0


def score_sentence(sentence: str, position: int, total: int, weights: SentenceWeights) -> float:
    """The weighted sum of ``sentence``'s features; ``position`` counts from 0 among ``total``."""
    score = 0.0
    for mark in weights.marks:
        if mark.weight:
            score += mark.weight * mark.count(sentence)
    if position == 0:
        score += weights.first
    elif position == total - 1:
        score += weights.last
    if weights.early:
        score += weights.early * (1.0 - position / max(1, total))
    if weights.later:
        score += weights.later * position
    if len(sentence) < weights.short_chars:
        score += weights.short
    elif weights.long_chars and len(sentence) > weights.long_chars:
        score += weights.long
    return score


def score_sentences(sentences: Sequence[str], weights: SentenceWeights) -> list[float]:
    """Each sentence's score, in order."""
    return [score_sentence(sentence, index, len(sentences), weights) for index, sentence in enumerate(sentences)]
