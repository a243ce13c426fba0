"""Every vector the points of a batch of items store, from one call to the embedder.

A turn's point holds its own vector, its ``context`` vector (the turn read after the one before
it, agent_memory/index/context.py) and, for a long turn of a listed speaker, its ``sentences``
(agent_memory/index/sentences.py). All of these texts go to the embedder together: each model sorts what it
gets by length before it batches (agent_memory/core/onnx_bert.py, embedding.py), so one call pads
fewer tokens than three calls per batch. With three, on 300 HotpotQA paragraphs, 40 CMRC
paragraphs and one LoCoMo conversation, MiniLM's share of the job was 34.9 s against 28.4 s for
the same texts in one call; the job/encode ratio went 0.71 -> 0.79 (docs/journal/evaluation-diary.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from agent_memory.core.records import MemoryItem
from agent_memory.index.sentences import sentence_texts


@dataclass
class PointVectors:
    dense: np.ndarray  # one row per item
    context: list  # per item: its context vector, or None (not a turn)
    sentences: list  # per item: an (n, dimension) array of its sentence vectors, or None
    computed: int = 0  # how many texts the models embedded (the cache answered the rest)


def point_vectors(embedder, items: Sequence[MemoryItem], texts: Sequence[str], spaces: Sequence[str],
                  contexts: Mapping[str, str], settings) -> PointVectors:
    """The vectors of ``items`` (whose embedding texts are ``texts``, in ``spaces``): their own,
    their turns' context vectors (``contexts``: a turn's first piece id → its context text; a turn
    without one reads as its own text) and their sentences, each in the item's own space."""
    own = len(texts)
    extra: list[str] = []
    extra_spaces: list[str] = []
    context_rows: list[tuple[int, int]] = []  # (item row, row among all texts)
    for row, (item, text) in enumerate(zip(items, texts)):
        context = contexts.get(item.id) or text
        if item.kind == "turn" and context != text:
            context_rows.append((row, own + len(extra)))
            extra.append(context)
            extra_spaces.append(spaces[row])
    sentence_rows: list[tuple[int, int, int]] = []  # (item row, first row among all texts, end)
    for row, item in enumerate(items):
        found = sentence_texts(item, settings)
        if found:
            start = own + len(extra)
            extra += found
            extra_spaces += [spaces[row]] * len(found)
            sentence_rows.append((row, start, start + len(found)))
    before = embedder.computed
    vectors = embedder.embed_documents(list(texts) + extra, list(spaces) + extra_spaces)
    dense = vectors[:own]
    # A turn whose context is its own text (a session's first turn, a later piece of a long turn)
    # stores its own vector as its context; other kinds store none.
    context: list = [dense[row] if item.kind == "turn" else None for row, item in enumerate(items)]
    for row, at in context_rows:
        context[row] = vectors[at]
    sentences: list = [None] * len(items)
    for row, start, end in sentence_rows:
        sentences[row] = np.asarray(vectors[start:end], dtype=np.float32)
    return PointVectors(dense, context, sentences, embedder.computed - before)
