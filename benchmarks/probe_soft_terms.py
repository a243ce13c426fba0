"""Probe: would matching a question's words to a passage's words *by meaning* lift spread evidence?

    python benchmarks/fit_weights.py record locomo ../shared/eval/locomo_dev.json --data-dir STORE \\
        --out /tmp/rec/locomo.pkl --budget 1800
    python benchmarks/probe_soft_terms.py /tmp/rec/locomo.pkl [--weights 0 0.3 0.6 1 1.5]

LoCoMo's aggregation questions name a class ("What activities does Melanie partake in?") where the
evidence names its members ("I'm off to go swimming with the kids"); no word is shared, and the
sentence vectors sit far apart. This probe gives each recorded candidate a "soft term" signal: for each
content word of the question (less the speakers' names), its highest cosine to a content word of the
passage, with words embedded alone by the served English encoder; summed over the question's words
(``mean``) or the best one (``max``), less a floor. The signal, z-scored, is added with a weight to the
served reranker's score, and the recorded candidates are packed whole into the budget in that order
(``fit_weights.replay``'s approximation of the assembly) and scored with the harness's metric.
Printed: soft / strict overall and strict per category, one row per (weight, reduction, floor); the
row of weight 0 is the served order. ``--ranks`` also prints, for each evidence item a strict miss
lacked, its rank in the served order beside the number of passages the budget held.

Nothing is fitted here: the grid is printed whole. Measured on 2026-12-04 (docs/journal): flat at best.
"""

from __future__ import annotations

import argparse
import collections
import pickle
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fit_weights import pack_whole, rerank_recorded  # noqa: E402  (benchmarks/ is on sys.path when run as a script)

from agent_memory.core.embedding import make_embedder  # noqa: E402
from agent_memory.core.settings_defaults import DEFAULT_EMBEDDING_MODEL  # noqa: E402
from agent_memory.core.text import content_words  # noqa: E402
from agent_memory.evaluation.metric import score_question  # noqa: E402
from agent_memory.retrieval.config import load_preset  # noqa: E402
from agent_memory.retrieval.rerank import DefaultReranker, signals  # noqa: E402


def word_vectors(rows) -> dict[str, np.ndarray]:
    """Every content word of the questions and candidates, embedded alone and normalized."""
    vocab = set()
    for row in rows:
        vocab.update(content_words(row["question"].text))
        for cand in row["candidates"]:
            vocab.update(content_words(cand.item.text))
    words = sorted(vocab)
    vectors = make_embedder(DEFAULT_EMBEDDING_MODEL).embed_documents(words)
    vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return dict(zip(words, vectors))


def served_order(reranker: DefaultReranker, row) -> tuple[list, np.ndarray]:
    """The candidates in recorded order and the served reranker's score of each (recorded similarities)."""
    rerank_recorded(reranker, row)
    cands = list(row["candidates"])
    return cands, np.array([c.final for c in cands])


def soft_matrix(row, cands, vectors) -> np.ndarray:
    """Candidates × question words: the best cosine of each question word to one of the passage's words."""
    speakers = {str(c.item.metadata.get("speaker") or "").lower() for c in cands}
    asked = [w for w in dict.fromkeys(content_words(row["question"].text)) if w in vectors and w not in speakers]
    out = np.zeros((len(cands), max(1, len(asked))))
    if asked:
        q = np.stack([vectors[w] for w in asked])
        for i, cand in enumerate(cands):
            own = [vectors[w] for w in set(content_words(cand.item.text)) if w in vectors]
            if own:
                out[i] = (np.stack(own) @ q.T).max(axis=0)
    return out


def packed(recording, row, cands, score) -> str:
    """``fit_weights``'s replay prompt with the candidates in order of ``score``."""
    return pack_whole(row, [cands[i] for i in np.argsort(-score, kind="stable")], recording["budget"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("recording")
    parser.add_argument("--weights", type=float, nargs="+", default=[0.0, 0.3, 0.6, 1.0, 1.5])
    parser.add_argument("--floors", type=float, nargs="+", default=[0.0, 0.3, 0.45])
    parser.add_argument("--ranks", action="store_true")
    args = parser.parse_args()
    with open(args.recording, "rb") as handle:
        recording = pickle.load(handle)
    rows = recording["rows"]
    vectors = word_vectors(rows)
    reranker = DefaultReranker(load_preset("default"))
    prepared = [(row, *served_order(reranker, row)) for row in rows]
    prepared = [(row, cands, base, soft_matrix(row, cands, vectors)) for row, cands, base in prepared]
    print("| weight | reduction | floor | soft | strict | strict per category |\n| --- | --- | --- | --- | --- | --- |")
    for weight in args.weights:
        for reduction in ("max", "mean"):
            for floor in args.floors:
                if weight == 0 and (reduction, floor) != ("max", args.floors[0]):
                    continue
                soft, strict, per = [], [], collections.defaultdict(list)
                for row, cands, base, sm in prepared:
                    lifted = np.clip(sm - floor, 0, None)
                    signal = lifted.max(axis=1) if reduction == "max" else lifted.mean(axis=1)
                    score = base + weight * signals.standardize(signal) if weight else base
                    result = score_question(recording["dataset"], row["question"], packed(recording, row, cands, score))
                    soft.append(result.soft)
                    strict.append(float(result.strict))
                    per[getattr(row["question"], "category", "") or "all"].append(float(result.strict))
                cats = ", ".join(f"{k} {statistics.mean(v):.3f}" for k, v in sorted(per.items()))
                print(f"| {weight} | {reduction} | {floor} | {statistics.mean(soft):.3f} | "
                      f"{statistics.mean(strict):.3f} | {cats} |", flush=True)
    if args.ranks:
        for row, cands, base, _ in prepared:
            text = packed(recording, row, cands, base)
            result = score_question(recording["dataset"], row["question"], text)
            if result.strict:
                continue
            order = [cands[i].item.source_id for i in np.argsort(-base, kind="stable")]
            held = text.count("\n") + 1
            for evidence, present in zip(row["question"].evidence, result.present):
                if not present:
                    rank = order.index(evidence.source_id) + 1 if evidence.source_id in order else None
                    print(getattr(row["question"], "category", ""), row["question"].qid, evidence.source_id,
                          "rank", rank if rank else "not a candidate", "of a prompt of", held)


if __name__ == "__main__":
    main()
