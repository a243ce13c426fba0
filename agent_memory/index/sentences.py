"""Sentence vectors: a fact said in passing inside a long turn, found by the sentence that says it.

One vector for a long turn is mostly what the turn is about ("help me plan a trip to Japan ...");
a personal fact said on the way ("... I just turned 32 last month ...") barely moves it, and a
question about that fact ranks the turn low. So each turn of a listed speaker (``Settings.
sentence_vector_speakers``: the person the memory serves, ``user`` by default) with at least
``sentence_vector_min_words`` words also stores the vectors of its sentences (those of at least
``sentence_min_words`` words), as the multivector ``sentences`` of its own point, embedded in the
turn's space with the turn's speaker in front, as the turn itself is. The dense route and the
reranker's dense signal score the turn by the better of its own vector and its best sentence
(``search_dense``, agent_memory/retrieval/stored_vectors.py). Nothing else changes: the turn is still the
item that is cited, replaced, expired and deleted, with its sentences inside it. A point holds at
most a few dozen rows: a long turn is stored in pieces of ``chunk_tokens`` tokens, each with its own.

Measured by ``benchmarks/probe_sentence_vectors.py`` on LongMemEval's development questions, dense
similarity alone: the evidence turns' median rank among ~500 turns 4.5 → 2, in the top 10 37 → 48
of 56. Figures of the whole product in docs/journal/evaluation-diary.md.
"""

from __future__ import annotations

from agent_memory.core.records import MemoryItem
from agent_memory.core.roles import speaker_role
from agent_memory.core.text import split_sentences, words
from agent_memory.index.items import is_tool_turn


def may_store_sentences(item: MemoryItem, settings) -> bool:
    """Whether ``item`` is a turn of a listed speaker (cheap: the reranker asks it of every candidate)."""
    if item.kind != "turn" or is_tool_turn(item) or not settings.sentence_vector_speakers:
        return False  # a tool payload's lines are the agent's reading, not what its user said
    role = speaker_role(item.metadata.get("speaker"))  # "用户" is the user (agent_memory/core/roles.py)
    return any(role == speaker_role(s) for s in settings.sentence_vector_speakers)


def sentence_texts(item: MemoryItem, settings) -> list[str]:
    """The texts whose vectors ``item`` stores as its sentences: none unless it is a long enough
    turn of a listed speaker with more than one sentence long enough to say something."""
    if not may_store_sentences(item, settings):
        return []
    speaker = str(item.metadata.get("speaker") or "")
    if len(words(item.text)) < settings.sentence_vector_min_words:
        return []
    sentences = [s for s in split_sentences(item.text) if len(words(s)) >= settings.sentence_min_words]
    if len(sentences) < 2:
        return []  # one sentence: the turn's own vector is that sentence's
    return [f"{speaker}: {s}" for s in sentences]
