"""Replay the reranker over recorded candidates to choose its weights, with leave-one-group-out.

    python benchmarks/tune_reranker.py ../shared/eval/locomo_dev.json --data-dir STORE [--budget 1800]
        [--grid turn_weights.dense=0.5,1.0 turn_weights.turn_context=0,0.6 speaker_named=0.5,3]

``STORE`` is a data dir the harness already ingested (``agent-memory eval ... --data-dir STORE``).
Every question runs once through the served pipeline; the first rerank's candidates and their
embedding similarities are recorded. Each point of the grid then re-ranks the recorded candidates
with the same ``DefaultReranker`` code and packs whole items in rank order into the budget (an
approximation of the assembly: no compression, no section shares), and scores evidence recall with
the harness's metric. Reported side by side: the in-sample figure of every point, and the
leave-one-group-out figure (a group is a LoCoMo conversation or a LongMemEval question's haystack;
document sets are split into five folds): weights chosen on the other groups, scored on the held-out
one. This is how the conversation weights in ``agent_memory/retrieval/config.py`` were chosen (docs/journal/evaluation-diary.md).
"""

from __future__ import annotations

import argparse
import copy
import itertools
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_memory.core.citations import tag  # noqa: E402
from agent_memory.core.config import load_settings  # noqa: E402
from agent_memory.evaluation.cli import DEFAULT_BUDGETS  # noqa: E402
from agent_memory.evaluation.datasets import load_dataset  # noqa: E402
from agent_memory.evaluation.metric import score_question  # noqa: E402
from agent_memory.retrieval.config import deep_merge, load_preset  # noqa: E402
from agent_memory.retrieval.pipeline import RetrievalPipeline  # noqa: E402
from agent_memory.retrieval.rerank import DefaultReranker  # noqa: E402
from agent_memory.services import build_services  # noqa: E402

DEFAULT_GRID = ["turn_weights.dense=0.5,1.0", "turn_weights.turn_context=0.0,0.6", "speaker_named=0.5,3.0"]


class RecordingReranker(DefaultReranker):
    """The served reranker, keeping the first call's candidates and similarities per question."""

    def __init__(self, config) -> None:
        super().__init__(config, graph=config.graph.enabled)
        self.recorded = None

    def rerank(self, query, candidates, similarity=None, terms_query=None):
        if self.recorded is None and similarity is not None:
            sims = {s: np.asarray(similarity(candidates, s)) for s in ("dense", "turn_context")}
            self.recorded = (copy.deepcopy(candidates), sims, terms_query)
        return super().rerank(query, candidates, similarity, terms_query=terms_query)


def record(services, evalset, questions, preset: str):
    rows = []
    for question in questions:
        reranker = RecordingReranker(load_preset(preset))
        with RetrievalPipeline(services, load_preset(preset), reranker=reranker) as pipeline:
            pipeline.run(question.text, tenant=question.tenant, budget=DEFAULT_BUDGETS[evalset.name],
                         question_date=question.question_date)
        if reranker.recorded is not None:
            rows.append((question, *reranker.recorded))
    return rows


def replay(rows, evalset, counter, overrides: dict, budget: int) -> list[float]:
    reranker = DefaultReranker(load_preset("default", overrides))
    scores = []
    for question, candidates, sims, terms_query in rows:
        index = {id(c): i for i, c in enumerate(candidates)}
        ranked = reranker.rerank(question.text, list(candidates),
                                 lambda cands, s, sims=sims, index=index: sims[s][[index[id(c)] for c in cands]],
                                 terms_query=terms_query)
        lines, used = [], 0
        for cand in ranked:
            line = f"{tag(cand.item.source_id)} {cand.item.text}"
            cost = counter.count(line) + 1
            if used + cost > budget:
                continue
            lines.append(line)
            used += cost
        scores.append(score_question(evalset.name, question, "\n".join(lines)).soft)
    return scores


def groups_of(rows, kind: str) -> list[str]:
    if kind == "conversation":
        return [row[0].tenant for row in rows]
    return [f"fold{i % 5}" for i in range(len(rows))]


def parse_grid(specs: list[str]) -> list[dict]:
    axes = []
    for spec in specs:
        key, values = spec.split("=", 1)
        axes.append([(key, float(v)) for v in values.split(",")])
    points = []
    for combo in itertools.product(*axes):
        point: dict = {}
        for key, value in combo:
            node = {}
            parts = key.split(".")
            node_ref = node
            for part in parts[:-1]:
                node_ref = node_ref.setdefault(part, {})
            node_ref[parts[-1]] = value
            point = deep_merge(point, node)
        points.append(point)
    return points


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset")
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--budget", type=int)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--preset", default="default")
    parser.add_argument("--grid", nargs="+", default=DEFAULT_GRID)
    args = parser.parse_args()
    evalset = load_dataset(Path(args.dataset))
    questions = evalset.select(args.limit)
    budget = args.budget or DEFAULT_BUDGETS[evalset.name]
    with build_services(load_settings(data_dir=args.data_dir)) as services:
        rows = record(services, evalset, questions, args.preset)
        points = parse_grid(args.grid)
        per_point = [replay(rows, evalset, services.counter, p, budget) for p in points]
    groups = groups_of(rows, evalset.kind)
    names = sorted(set(groups))
    print(f"{len(rows)} questions, {len(names)} groups, budget {budget}; in-sample soft per grid point:")
    for point, scores in zip(points, per_point):
        print(f"  {statistics.mean(scores):.3f}  {point}")
    if len(names) < 2:  # one group (a single-tenant file): nothing to hold out
        print(f"best in-sample {max(statistics.mean(s) for s in per_point):.3f}; one group, no leave-one-out")
        return
    held_out = []
    for name in names:
        inside = [i for i, g in enumerate(groups) if g != name]
        outside = [i for i, g in enumerate(groups) if g == name]
        best = max(range(len(points)), key=lambda p: statistics.mean(per_point[p][i] for i in inside))
        held_out += [per_point[best][i] for i in outside]
        print(f"  held out {name}: chose {points[best]}")
    best_in = max(statistics.mean(s) for s in per_point)
    print(f"best in-sample {best_in:.3f}; leave-one-group-out {statistics.mean(held_out):.3f}")


if __name__ == "__main__":
    main()
