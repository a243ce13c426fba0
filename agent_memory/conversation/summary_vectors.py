"""A compaction summary's lines embedded when it is written, and stored with it.

The prompt's summaries section ranks the live session's summaries by the question (retrieval/live_summaries.py),
by meaning too when its setting says so: the similarity of the summary's line nearest the question. Embedding
the lines at question time put a wait of 20-260 ms a summary (seconds for a session never asked before) inside
the question's time. The archive pass, which runs off the append's path (working_memory.py), embeds the lines
of each summary written since its last pass and stores them in the summary's row (``line_vectors``), so the
ranking reads them and embeds nothing. The row names the embedding model: vectors of another model are read
as absent (the question embeds the lines, as before).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass

import numpy as np


def summary_lines(text: str) -> list[str]:
    """A summary's lines that say something: a section's title alone ("Tool results:") is left out."""
    return [line.strip() for line in text.splitlines() if line.strip() and not line.rstrip().endswith((":", "："))]


@dataclass(frozen=True)
class LineVectors:
    """One row per line of ``summary_lines(text) or [text]``: its vector, embedding space and language."""

    vectors: np.ndarray
    spaces: list[str]
    langs: list[str]


def embed_lines(embedder, texts: list[str]) -> list[LineVectors]:
    """The lines of each of ``texts`` embedded in one batch by ``embedder`` (core/embedding_spaces.EmbeddingSpaces)."""
    lines = [summary_lines(t) or [t] for t in texts]
    flat = [line for group in lines for line in group]
    spaces = embedder.spaces_for(flat)
    vectors = np.asarray(embedder.embed_documents(flat, spaces), dtype=np.float32)
    langs = [embedder.lang_of(line) for line in flat]
    out, start = [], 0
    for group in lines:
        end = start + len(group)
        out.append(LineVectors(vectors[start:end], list(spaces[start:end]), langs[start:end]))
        start = end
    return out


def encode(found: LineVectors, model: str) -> str:
    """The stored form: JSON naming the model, the spaces and languages, the float32 rows in base64."""
    return json.dumps({"model": model, "spaces": found.spaces, "langs": found.langs, "dim": int(found.vectors.shape[1]),
                       "vectors": base64.b64encode(np.ascontiguousarray(found.vectors, np.float32).tobytes()).decode()})


def decode(stored: str | None, model: str) -> LineVectors | None:
    """What ``encode`` wrote, if written by ``model`` and whole; else None (the lines are embedded when asked)."""
    if not stored:
        return None
    try:
        data = json.loads(stored)
        if data.get("model") != model:
            return None
        vectors = np.frombuffer(base64.b64decode(data["vectors"]), dtype=np.float32).reshape(-1, int(data["dim"]))
        spaces, langs = [str(s) for s in data["spaces"]], [str(g) for g in data["langs"]]
    except (ValueError, KeyError, TypeError):
        return None
    if not (len(vectors) == len(spaces) == len(langs)):
        return None
    return LineVectors(vectors, spaces, langs)


def embed_new_summaries(store, key: tuple[str, str], embedder) -> int:
    """Embed and store the lines of the session's summaries that have none stored yet; returns how many."""
    missing = store.summaries_without_line_vectors(key)
    if not missing:
        return 0
    found = embed_lines(embedder, [text for _, text in missing])
    store.save_summary_line_vectors(key, [(summary_id, encode(lines, embedder.name))
                                          for (summary_id, _), lines in zip(missing, found)])
    return len(missing)


def stored_line_vectors(store, key: tuple[str, str], model: str) -> dict[str, LineVectors]:
    """The session's summaries' stored line vectors of ``model``, by summary text."""
    out = {}
    for text, stored in store.summary_line_vectors(key):
        found = decode(stored, model)
        if found is not None:
            out[text] = found
    return out
