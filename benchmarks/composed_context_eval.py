"""What the stored turn-context vectors are worth against a free approximation of them.

    python benchmarks/composed_context_eval.py --data-dir STORE eval ../shared/eval/locomo_dev.json \
        --budget 1800 --no-baselines

Runs ``agent-memory`` (any command; meant for ``eval`` into a fresh ``--data-dir``) with one change
to ingestion: a turn's ``context`` vector is not embedded from its context text (the turn before it,
then the turn; agent_memory/index/context.py) but composed from the two turns' own vectors, the normalized sum,
which costs no model time. The served ingestion embeds the context texts: about a third of a
conversation's embedding time (benchmarks/bench_ingest.py). Compare the figure with the same
command through ``agent-memory`` (docs/journal/evaluation-diary.md, "Ingestion cost").
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import agent_memory.ingest.pipeline  # noqa: E402
from agent_memory.cli import main  # noqa: E402
from agent_memory.ingest.vectors import point_vectors  # noqa: E402


def composed_point_vectors(embedder, items, texts, spaces, contexts, settings):
    """The served vectors without context texts; each turn's context = its own vector plus the
    previous turn's (the previous turn's text embedded in the turn's space when the batch lacks it)."""
    vectors = point_vectors(embedder, items, texts, spaces, {}, settings)
    row_of = {(text, space): row for row, (text, space) in enumerate(zip(texts, spaces))}
    missing: list[tuple[int, str]] = []
    for row, item in enumerate(items):
        context = contexts.get(item.id)
        if item.kind != "turn" or not context or context == texts[row]:
            continue
        previous = context[: len(context) - len(texts[row]) - 1]  # context_text: previous, "\n", own
        at = row_of.get((previous, spaces[row]))
        if at is None:
            missing.append((row, previous))
        else:
            vectors.context[row] = _unit(vectors.dense[at] + vectors.dense[row])
    if missing:
        found = embedder.embed_documents([text for _, text in missing], [spaces[row] for row, _ in missing])
        for (row, _), previous in zip(missing, found):
            vectors.context[row] = _unit(previous + vectors.dense[row])
    return vectors


def _unit(vector: np.ndarray) -> np.ndarray:
    return (vector / (np.linalg.norm(vector) or 1.0)).astype(np.float32)


if __name__ == "__main__":
    agent_memory.ingest.pipeline.point_vectors = composed_point_vectors
    sys.exit(main(sys.argv[1:]))
