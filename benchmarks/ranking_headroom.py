"""How much a better order of the recorded candidates could lift strict recall, and whether the signals
the reranker has can find that order.

    python benchmarks/fit_weights.py record locomo ../shared/eval/locomo_dev.json --data-dir STORE \
        --out /tmp/rec/locomo.pkl --budget 1800
    pip install lightgbm                      # the ranker below; not a dependency of the package
    python benchmarks/ranking_headroom.py /tmp/rec/locomo.pkl [--rounds 100 300]

Two reports on one recording (``fit_weights.py record``: each question's first-rerank candidates, their
similarities, token costs and evidence labels), both replayed as ``fit_weights`` replays (whole
candidates packed in rank order, scored with the harness metric), by question category:

1. **Budget curve.** Strict recall of the current order packed into 1×, 1.4×, 2× and 2.8× the recorded
   budget: how far down the current ranking the last evidence item of a question sits, in tokens.
2. **A learned non-linear ranker.** A LambdaRank gradient-boosted tree model (LightGBM) over every
   signal ``fit_weights`` fits linearly, plus the current rank, final score, token cost and the raw
   similarities, trained leave-one-group-out (a group is a tenant: a LoCoMo conversation) and on all
   groups (in-sample). Held-out above current means the signals hold an order the linear reranker
   misses; held-out at or below current with in-sample far above means they do not (the model only
   memorises its training questions).
"""

from __future__ import annotations

import argparse
import collections
import pickle
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fit_weights import pack_whole, rerank_recorded, signal_matrix  # noqa: E402

from agent_memory.evaluation.metric import score_question  # noqa: E402
from agent_memory.retrieval.config import load_preset  # noqa: E402
from agent_memory.retrieval.rerank import DefaultReranker  # noqa: E402

BUDGET_FACTORS = (1.0, 1.4, 2.0, 2.8)


def by_category(rows: list, strict: list[bool]) -> dict[str, float]:
    groups: dict[str, list[float]] = collections.defaultdict(list)
    for row, hit in zip(rows, strict):
        groups[row["question"].category or "-"].append(float(hit))
        groups["all"].append(float(hit))
    return {name: statistics.mean(values) for name, values in sorted(groups.items())}


def replay_strict(recording: dict, rows: list, orders: list[list], budget: int) -> list[bool]:
    return [score_question(recording["dataset"], row["question"], pack_whole(row, order, budget)).strict
            for row, order in zip(rows, orders)]


def features(row: dict, ranked: list, now: float) -> np.ndarray:
    """``fit_weights``' signal matrix plus the current order's rank and score, cost and raw similarities."""
    index = {id(c): i for i, c in enumerate(row["candidates"])}
    rank, final = np.zeros(len(index)), np.zeros(len(index))
    for k, cand in enumerate(ranked):
        rank[index[id(cand)]], final[index[id(cand)]] = k, cand.final
    extra = np.stack([np.log1p(rank), final, row["costs"], np.asarray(row["sims"]["dense"]),
                      np.asarray(row["sims"]["turn_context"])], axis=1)
    return np.concatenate([signal_matrix(row, now), extra], axis=1)


def learned_orders(rows: list, X: list[np.ndarray], train: list[int], predict: list[int], rounds: int,
                   lgb) -> dict[int, list]:
    params = {"objective": "lambdarank", "learning_rate": 0.05, "num_leaves": 15, "min_data_in_leaf": 50,
              "lambdarank_truncation_level": 60, "verbose": -1, "seed": 12, "deterministic": True}
    data = lgb.Dataset(np.concatenate([X[i] for i in train]),
                       np.concatenate([rows[i]["labels"].astype(int) for i in train]),
                       group=[len(rows[i]["labels"]) for i in train])
    model = lgb.train(params, data, num_boost_round=rounds)
    return {i: [rows[i]["candidates"][j] for j in np.argsort(-model.predict(X[i]), kind="stable")]
            for i in predict}


def print_rows(title: str, results: dict[str, dict[str, float]]) -> None:
    names = list(next(iter(results.values())))
    print(f"\n{title}\n| order | " + " | ".join(names) + " |\n|" + " --- |" * (len(names) + 1))
    for label, figures in results.items():
        print(f"| {label} | " + " | ".join(f"{figures[n]:.3f}" for n in names) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recording")
    parser.add_argument("--rounds", type=int, nargs="+", default=[100, 300], help="boosting rounds, one model each")
    args = parser.parse_args()
    with open(args.recording, "rb") as handle:
        recording = pickle.load(handle)
    rows, budget, now = recording["rows"], recording["budget"], time.time()
    reranker = DefaultReranker(load_preset("default"))
    current = [rerank_recorded(reranker, row) for row in rows]

    curve = {f"current, {int(budget * f)} tokens": by_category(rows, replay_strict(recording, rows, current,
                                                                                   int(budget * f)))
             for f in BUDGET_FACTORS}
    print_rows(f"{recording['set']}: strict recall of the current order at larger budgets (whole packing)", curve)

    try:
        import lightgbm as lgb
    except ImportError:
        sys.exit("the learned ranker needs LightGBM: pip install lightgbm")
    X = [features(row, ranked, now) for row, ranked in zip(rows, current)]
    group = [row["question"].tenant for row in rows]
    results = {"current": curve[f"current, {budget} tokens"]}
    everything = list(range(len(rows)))
    for rounds in args.rounds:
        held: dict[int, list] = {}
        for name in sorted(set(group)):
            inside = [i for i in everything if group[i] == name]
            held.update(learned_orders(rows, X, [i for i in everything if group[i] != name], inside, rounds, lgb))
        fitted = learned_orders(rows, X, everything, everything, rounds, lgb)
        results[f"LambdaRank {rounds} rounds, held out"] = by_category(
            rows, replay_strict(recording, rows, [held[i] for i in everything], budget))
        results[f"LambdaRank {rounds} rounds, in-sample"] = by_category(
            rows, replay_strict(recording, rows, [fitted[i] for i in everything], budget))
    print_rows(f"{recording['set']}: strict recall at {budget} tokens, leave one tenant out "
               f"({len(set(group))} tenants)", results)


if __name__ == "__main__":
    main()
