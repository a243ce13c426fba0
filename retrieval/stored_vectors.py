"""The candidates' vectors, read from the vector store with them rather than re-embedded.

Each stored point carries its passage vector (``dense``) and, for a turn, the turn read after
the turn it answers (``context``, ingest/context.py), in the space the turn lives in. The
reranker and de-duplication read both here, in one batched retrieve per space, so a process
whose embedding cache is empty (a replica that did not ingest, a restart on a fresh disk) ranks
exactly as the one that ingested, without embedding anything but the question. A candidate the
store does not hold, or a turn stored before turn-context vectors existed, is left without
one: the pipeline embeds its text (through the cache) as before.
"""

from __future__ import annotations

from typing import Sequence

from ingest.items import embedding_text

from .types import Candidate


def fill_from_store(services, candidates: Sequence[Candidate]) -> None:
    """Set ``vector`` (+ space, language) and ``context_vector`` of the candidates that have none yet."""
    missing = [c for c in candidates if c.vector is None]
    read = getattr(services.vectors, "stored_vectors", None)
    if not missing or read is None:
        return
    stored = read([c.item.id for c in missing])
    embedder = services.embedder
    for cand in missing:
        space, vectors = stored.get(cand.item.id, ("", {}))
        dense = vectors.get("dense")
        if dense is None:
            continue
        lang = embedder.lang_of(embedding_text(cand.item))
        cand.vector, cand.vector_space, cand.vector_lang = dense, space, lang
        # A chunk or summary is its own context; a turn's was stored with it (in the turn's space).
        context = vectors.get("context") if cand.item.kind == "turn" else dense
        if cand.context_vector is None and context is not None:
            cand.context_vector, cand.context_vector_space, cand.context_vector_lang = context, space, lang
