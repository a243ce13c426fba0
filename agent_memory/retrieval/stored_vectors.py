"""The reranker's vectors at question time, from what is stored with each item, not re-embedded.

Each stored point carries its passage vector (``dense``) and, for a turn, the turn read after
the turn it answers (``context``, agent_memory/index/context.py), in the space the turn lives in.

- Passage vectors (the dense signal, de-duplication) come from the embedding cache, which is only
  a cache: what it lacks (a replica that did not ingest, a fresh disk) is read from the store in
  one batched retrieve per space and put into it, never re-embedded.
- The turn-context signal is scored by the store itself: the question's vector against each
  candidate turn's ``context`` vector, one query per space restricted to the candidates' IDs. No
  vector leaves the store (reading a few hundred back into Python costs tens of milliseconds; the
  scoring about one).
- A long turn's sentence vectors (``sentences``, agent_memory/index/sentences.py) are scored the same way: the
  dense signal of such a turn is the better of its own similarity and its best sentence's.

A candidate the store does not hold, or a turn stored before turn-context vectors existed, is
left to the caller's ``embedded`` path: its text embedded (through the cache) as before.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

import numpy as np

from agent_memory.core.ids import content_hash
from agent_memory.index.items import embedding_text
from agent_memory.index.sentences import may_store_sentences
from agent_memory.retrieval.types import Candidate


def fill_dense(services, candidates: Sequence[Candidate]) -> None:
    """Set ``vector`` (+ its space and language) of the candidates that have none yet: from the
    embedding cache, else from the vector store (then cached). Those found in neither stay None."""
    missing = [c for c in candidates if c.vector is None]
    if not missing:
        return
    embedder = services.embedder
    texts = [embedding_text(c.item) for c in missing]
    spaces = embedder.spaces_for(texts)
    hashes = [content_hash(t) for t in texts]
    absent: list[int] = []
    for space in dict.fromkeys(spaces):
        rows = [i for i, s in enumerate(spaces) if s == space]
        cached = embedder.embedders[space]
        found = cached.cache.get_many(cached.name, [hashes[i] for i in rows])
        for i in rows:
            if hashes[i] in found:
                _set(missing[i], found[hashes[i]], space, embedder.lang_of(texts[i]))
            else:
                absent.append(i)
    read = getattr(services.vectors, "stored_vectors", None)
    if not absent or read is None:
        return
    stored = read([missing[i].item.id for i in absent], names=["dense"])
    fresh: dict[str, dict[str, np.ndarray]] = {}
    for i in absent:
        space, vectors = stored.get(missing[i].item.id, ("", {}))
        if "dense" in vectors:
            _set(missing[i], vectors["dense"], space, embedder.lang_of(texts[i]))
            fresh.setdefault(space, {})[hashes[i]] = vectors["dense"]
    for space, by_hash in fresh.items():
        cached = embedder.embedders[space]
        cached.cache.put_many(cached.name, by_hash)


def _set(cand: Candidate, vector: np.ndarray, space: str, lang: str) -> None:
    cand.vector, cand.vector_space, cand.vector_lang = np.asarray(vector, dtype=np.float32), space, lang


def _scored_by_store(services, query: Mapping[str, np.ndarray], ids: list[str], using: str) -> dict:
    """Item ID → (its space, the cosine of its named vector ``using`` with the question), scored by
    the store; empty when there is nothing to score or the store cannot score."""
    score = getattr(services.vectors, "score_ids", None)
    return score(query, ids, using) if ids and score is not None else {}


def _lang_of(embedder, cand: Candidate) -> str:
    return cand.vector_lang or embedder.lang_of(embedding_text(cand.item))


def _calibrated(embedder, query, entries: list[tuple[int, str, str, float]]) -> tuple[list[int], np.ndarray]:
    """(row, space, language, cosine) entries → their rows and calibrated similarities, each
    cosine on the scale of its model and pair of languages (agent_memory/core/embedding_spaces.py)."""
    groups: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for row, space, lang, cosine in entries:
        groups.setdefault((space, lang), []).append((row, cosine))
    rows: list[int] = []
    values: list[np.ndarray] = []
    for (space, lang), pairs in groups.items():
        rows += [row for row, _ in pairs]
        values.append(embedder.calibrate(space, np.array([c for _, c in pairs], dtype=np.float64),
                                         getattr(query, "lang", "en"), lang))
    return rows, (np.concatenate(values) if values else np.zeros(0))


def context_similarity(services, candidates: Sequence[Candidate], query: Mapping[str, np.ndarray],
                       embedded: Callable[[list[Candidate]], np.ndarray]) -> np.ndarray:
    """The turn_context signal: calibrated similarity to the question of each candidate read after
    the turn it answers. A turn: its stored ``context`` vector, scored by the store. Any other kind:
    its own passage vector (its context is its own text). The rest: ``embedded(rest)``."""
    embedder = services.embedder
    fill_dense(services, [c for c in candidates if c.item.kind != "turn"])
    scored = _scored_by_store(services, query, [c.item.id for c in candidates if c.item.kind == "turn"], "context")
    entries: list[tuple[int, str, str, float]] = []
    rest: list[int] = []
    for row, cand in enumerate(candidates):
        if cand.item.kind == "turn" and cand.item.id in scored:
            space, cosine = scored[cand.item.id]
            entries.append((row, space, _lang_of(embedder, cand), cosine))
        elif cand.item.kind != "turn" and cand.vector is not None and cand.vector_space in query:
            cosine = float(cand.vector @ np.asarray(query[cand.vector_space], dtype=np.float32))
            entries.append((row, cand.vector_space, cand.vector_lang, cosine))
        else:
            rest.append(row)
    out = np.zeros(len(candidates), dtype=np.float64)
    rows, values = _calibrated(embedder, query, entries)
    out[rows] = values
    if rest:
        out[rest] = embedded([candidates[i] for i in rest])
    return out


def with_sentences(services, candidates: Sequence[Candidate], query: Mapping[str, np.ndarray],
                   similarity: np.ndarray) -> np.ndarray:
    """The dense signal of a long turn that stores its sentences (agent_memory/index/sentences.py): the better
    of its own calibrated similarity (``similarity``) and its best sentence's, scored by the store
    and calibrated alike, as the dense route scores it. Other candidates keep ``similarity``."""
    turns = [c.item.id for c in candidates if may_store_sentences(c.item, services.settings)]
    scored = _scored_by_store(services, query, turns, "sentences")
    if not scored:
        return similarity
    embedder = services.embedder
    entries = []
    for row, cand in enumerate(candidates):
        if cand.item.id in scored:
            space, cosine = scored[cand.item.id]
            entries.append((row, space, _lang_of(embedder, cand), cosine))
    out = np.array(similarity, dtype=np.float64, copy=True)
    rows, best = _calibrated(embedder, query, entries)
    out[rows] = np.maximum(out[rows], best)
    return out
