"""Fit the reranker's signal weights with a listwise logistic model, held out one set at a time.

    # once per set: ingest (skipped when the store holds it), record the first rerank's candidates
    python benchmarks/fit_weights.py record SET FILE --data-dir STORE --out /tmp/loso/SET.pkl [--budget B]
    # fit and replay: current weights, leave-one-set-out (held out), fitted on all (in-sample)
    python benchmarks/fit_weights.py fit /tmp/loso/*.pkl [--json OUT]

Recording is ``tune_reranker``'s: each question runs once through the served pipeline and the first
rerank's candidates and embedding similarities are kept, with each candidate's token cost and
whether it alone would count as evidence under the harness metric (LoCoMo / LongMemEval / HotpotQA
kinds: a cited evidence item covered to 80%; CMRC: a gold answer verbatim).

Every candidate's signal vector holds what ``DefaultReranker`` sums linearly before the
conversation context: the z-scored similarity signals per kind (turns: ``turn_weights``;
chunks, summaries, facts: ``chunk_weights``), the named speaker, the assistant prior, the length
excess (negated, so its weight is ``length_signal``), the graph, link, time and hop bonuses and
importance. The model is a softmax over each question's candidates (the evidence candidates are
the targets), each set weighing the same, weights bounded as the config bounds them. Its weights
are the reranker's weights (a positive rescaling ranks the same, the context shares included), so
the replay is ``tune_reranker``'s: ``DefaultReranker`` with the weights as overrides, whole items
packed in rank order into the budget, scored with the harness metric. A signal that never varies
in the recordings (the hop and link bonuses come after the first rerank) keeps its current weight.
"""

from __future__ import annotations

import argparse
import copy
import json
import pickle
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tune_reranker import RecordingReranker  # noqa: E402  (benchmarks/ is on sys.path when run as a script)

from agent_memory.core.citations import tag  # noqa: E402
from agent_memory.core.config import load_settings  # noqa: E402
from agent_memory.core.roles import speaker_role  # noqa: E402
from agent_memory.evaluation.datasets import load_dataset  # noqa: E402
from agent_memory.evaluation.metric import PRESENT_THRESHOLD, score_question, word_coverage  # noqa: E402
from agent_memory.evaluation.runner import ingest  # noqa: E402
from agent_memory.retrieval.config import load_preset  # noqa: E402
from agent_memory.retrieval.pipeline import RetrievalPipeline  # noqa: E402
from agent_memory.retrieval.rerank import DefaultReranker, signals  # noqa: E402
from agent_memory.retrieval.rerank.reranker import DOCUMENT_KINDS  # noqa: E402
from agent_memory.services import build_services  # noqa: E402

SIMILARITY = ("dense", "turn_context", "keyword", "terms", "fused")
FEATURES = ([f"turn_weights.{s}" for s in SIMILARITY] + [f"chunk_weights.{s}" for s in SIMILARITY]
            + ["speaker_named", "speaker_prior.assistant", "length_signal", "graph_signal", "link_signal",
               "time_signal", "hop_signal", "importance_signal", "title_signal"])
DEFAULTS = load_preset("default")
FREE_SIGN = {"speaker_prior.assistant"}  # every other weight is ge=0 in retrieval/config.py


# -- recording --------------------------------------------------------------------------------

def slim(candidate):
    """A candidate without its vectors (the replay needs the item, its routes and its fused score)."""
    out = copy.copy(candidate)
    out.vector = out.context_vector = None
    out.item = copy.copy(candidate.item)
    out.item.metadata = dict(candidate.item.metadata)
    return out


def is_evidence(dataset: str, question, candidate) -> bool:
    """Whether this candidate alone would count (part of) the question's evidence as present."""
    text = candidate.item.text
    if dataset == "cmrc":
        return any(a.strip() and a.strip() in text for a in question.answers)
    return any(ev.source_id == candidate.item.source_id and word_coverage(ev.text, text) >= PRESENT_THRESHOLD
               for ev in question.evidence)


def record(args) -> None:
    evalset = load_dataset(Path(args.file))
    questions = evalset.select(args.limit)
    rows = []
    started = time.perf_counter()
    with build_services(load_settings(data_dir=args.data_dir)) as services:
        print("ingest", ingest(services, evalset, evalset.tenants_for(questions), progress=False), flush=True)
        for question in questions:
            reranker = RecordingReranker(load_preset("default"))
            with RetrievalPipeline(services, load_preset("default"), reranker=reranker) as pipeline:
                pipeline.run(question.text, tenant=question.tenant, budget=args.budget,
                             question_date=question.question_date)
            if reranker.recorded is None:
                continue
            candidates, sims, terms_query = reranker.recorded
            candidates = [slim(c) for c in candidates]
            costs = np.array([services.counter.count(f"{tag(c.item.source_id)} {c.item.text}") + 1
                              for c in candidates])
            labels = np.array([is_evidence(evalset.name, question, c) for c in candidates])
            rows.append({"question": question, "candidates": candidates, "sims": sims, "costs": costs,
                         "labels": labels, "terms_query": terms_query})
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "wb") as handle:
        pickle.dump({"set": args.set, "dataset": evalset.name, "budget": args.budget, "rows": rows}, handle)
    print(f"{args.set}: {len(rows)} questions recorded in {time.perf_counter() - started:.0f}s", flush=True)


# -- signals and the fit ----------------------------------------------------------------------

def signal_matrix(row, now: float) -> np.ndarray:
    """Candidates × FEATURES, as DefaultReranker would weigh them with the default config."""
    cfg = DEFAULTS
    cands, sims, question = row["candidates"], row["sims"], row["question"]
    turn = np.array([c.item.kind == "turn" for c in cands], dtype=np.float64)
    values = {
        "dense": sims["dense"], "turn_context": sims["turn_context"],
        "keyword": np.array([c.route_scores.get("keyword", 0.0) for c in cands], dtype=np.float64),
        "terms": np.array(signals.term_coverage(question.text, [c.item.text for c in cands],
                                                [c.item.terms for c in cands]), dtype=np.float64),
        "fused": np.array([c.fused for c in cands], dtype=np.float64),
    }
    z = [signals.standardize(np.asarray(values[s], dtype=np.float64)) for s in SIMILARITY]
    assistant = np.array([1.0 if c.item.kind == "turn" and speaker_role(c.item.metadata.get("speaker")) == "assistant"
                          else 0.0 for c in cands])
    cols = ([v * turn for v in z] + [v * (1 - turn) for v in z] + [
        signals.speaker_named(question.text, cands), assistant,
        -signals.length_excess(cands, cfg.length_words, cfg.cjk_chars_per_word),
        signals.route_bonus(cands, "graph", DOCUMENT_KINDS), signals.route_bonus(cands, "links", DOCUMENT_KINDS),
        signals.route_bonus(cands, "time"), signals.route_bonus(cands, "hop"),
        signals.importance(cands, cfg.importance_half_life_days, now),
        signals.title_in_question(question.text, cands)])
    return np.stack(cols, axis=1)


def current_weights() -> np.ndarray:
    cfg = load_preset("default")
    out = []
    for name in FEATURES:
        if name == "speaker_prior.assistant":
            out.append(cfg.speaker_prior.get("assistant", 0.0))
        elif "." in name:
            group, signal = name.split(".")
            out.append(getattr(getattr(cfg, group), signal))
        else:
            out.append(getattr(cfg, name))
    return np.array(out, dtype=np.float64)


def overrides_of(weights: np.ndarray) -> dict:
    out: dict = {}
    for name, value in zip(FEATURES, weights):
        if "." in name:
            group, key = name.split(".")
            out.setdefault(group, {})[key] = round(float(value), 3)
        else:
            out[name] = round(float(value), 3)
    return out


def fit(sets: list[dict], fixed: np.ndarray, *, steps: int, l2: float, toward_current: float = 0.0) -> np.ndarray:
    """Listwise logistic fit: per question, softmax over its candidates with the evidence candidates as
    targets; every set weighs the same. Projected Adam; ``fixed`` features keep the current weight.
    The weights are ``a * current + d``: with ``toward_current`` > 0, ``d`` is penalized by it (a
    departure from the hand-set weights must pay for itself in the loss), otherwise ``w`` by ``l2``."""
    current = current_weights()
    theta = (np.concatenate([[1.0], np.zeros(len(current))]) if toward_current
             else np.concatenate([[0.0], np.where(fixed, 0.0, 0.1)]))
    m = np.zeros_like(theta)
    v = np.zeros_like(theta)
    lower = np.array([-np.inf if f in FREE_SIGN else 0.0 for f in FEATURES])
    for step in range(1, steps + 1):
        a, d = theta[0], theta[1:]
        w = a * current + d
        grad_w = np.zeros_like(w) if toward_current else l2 * w
        for data in sets:
            X, mask, target = data["X"], data["mask"], data["target"]
            s = np.where(mask, X @ w, -np.inf)
            p = np.exp(s - s.max(axis=1, keepdims=True))
            p /= p.sum(axis=1, keepdims=True)
            grad_w += np.einsum("qlf,ql->f", X, (p - target)) * data["scale"]
        grad_w[fixed] = 0.0
        grad = np.concatenate([[current @ grad_w if toward_current else 0.0], grad_w + toward_current * d])
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad * grad
        theta = theta - 0.05 * (m / (1 - 0.9 ** step)) / (np.sqrt(v / (1 - 0.999 ** step)) + 1e-8)
        theta[0] = max(theta[0], 0.0)
        theta[1:] = np.maximum(theta[1:], lower - theta[0] * current)
        theta[1:][fixed] = 0.0
    w = theta[0] * current + theta[1:]
    # Rescale to the current weights' size over the fitted signals (the ranking does not change),
    # so that the signals left at their current weight keep their meaning beside the fitted ones.
    w = w.copy()
    free = ~fixed
    norm = np.abs(w[free]).sum()
    if norm > 0:
        w[free] *= np.abs(current[free]).sum() / norm
    w[fixed] = current[fixed]
    return w


def training_data(recording: dict, now: float, negatives: int, rng, hard: bool = False) -> dict:
    """One set's signal rows, questions × candidates × signals (padded): every evidence candidate and at
    most ``negatives`` others per question (``hard``: those the current weights rank highest, where the
    budget's cut falls; else a random draw); questions with no evidence candidate teach nothing."""
    blocks, targets = [], []
    for row in recording["rows"]:
        labels = row["labels"]
        if not labels.any() or labels.all():
            continue
        X = signal_matrix(row, now)
        pos = np.flatnonzero(labels)
        neg = np.flatnonzero(~labels)
        if len(neg) > negatives:
            neg = (neg[np.argsort(-(X[neg] @ current_weights()))[:negatives]] if hard
                   else rng.choice(neg, negatives, replace=False))
        blocks.append(X[np.concatenate([pos, neg])])
        targets.append(np.concatenate([np.full(len(pos), 1.0 / len(pos)), np.zeros(len(neg))]))
    nq, width = len(blocks), max(len(b) for b in blocks)
    X = np.zeros((nq, width, len(FEATURES)))
    mask = np.zeros((nq, width), dtype=bool)
    target = np.zeros((nq, width))
    for q, (block, t) in enumerate(zip(blocks, targets)):
        X[q, : len(block)], mask[q, : len(block)], target[q, : len(block)] = block, True, t
    return {"X": X, "mask": mask, "target": target, "scale": 1.0 / nq,
            "varies": np.concatenate(blocks).std(axis=0) > 0}


def rerank_recorded(reranker: DefaultReranker, row) -> list:
    """A recorded question's candidates ranked by ``reranker`` with the recorded similarities (each
    candidate's ``final`` score set, as the served reranker sets it)."""
    cands, sims = list(row["candidates"]), row["sims"]
    index = {id(c): i for i, c in enumerate(cands)}
    return reranker.rerank(row["question"].text, cands,
                           lambda cs, s: np.asarray(sims[s])[[index[id(c)] for c in cs]],
                           terms_query=row.get("terms_query"))  # recordings before it have none


def pack_whole(row, ranked, budget: int) -> str:
    """The replay's prompt: whole candidates in ``ranked`` order, each that still fits ``budget`` at its
    recorded cost, as cited lines (no compression, no section shares)."""
    cost = {id(c): k for c, k in zip(row["candidates"], row["costs"])}
    lines, used = [], 0
    for cand in ranked:
        if used + cost[id(cand)] > budget:
            continue
        lines.append(f"{tag(cand.item.source_id)} {cand.item.text}")
        used += cost[id(cand)]
    return "\n".join(lines)


def replay(recording: dict, overrides: dict) -> tuple[float, float]:
    """Soft and strict evidence recall of the recorded questions re-ranked with ``overrides``."""
    reranker = DefaultReranker(load_preset("default", overrides))
    soft, strict = [], []
    for row in recording["rows"]:
        ranked = rerank_recorded(reranker, row)
        score = score_question(recording["dataset"], row["question"], pack_whole(row, ranked, recording["budget"]))
        soft.append(score.soft)
        strict.append(float(score.strict))
    return statistics.mean(soft), statistics.mean(strict)


def fit_command(args) -> None:
    now = time.time()
    rng = np.random.default_rng(12)
    recordings = []
    for path in args.recordings:
        with open(path, "rb") as handle:
            recordings.append(pickle.load(handle))
    names = [r["set"] for r in recordings]
    data = {r["set"]: training_data(r, now, args.negatives, rng, args.hard) for r in recordings}
    varies = np.any([d["varies"] for d in data.values()], axis=0)
    print("signals that never vary in the recordings (kept at the current weight):",
          [f for f, v in zip(FEATURES, varies) if not v], flush=True)
    current = {r["set"]: replay(r, {}) for r in recordings}
    report = {}
    for shrink in args.toward_current:
        options = {"steps": args.steps, "l2": args.l2, "toward_current": shrink}
        everything = fit(list(data.values()), ~varies, **options)
        print(f"toward_current {shrink}: fitted on all sets:", json.dumps(overrides_of(everything)), flush=True)
        results = {}
        for held, recording in zip(names, recordings):
            train = [data[n] for n in names if n != held]
            held_w = fit(train, ~np.any([d["varies"] for d in train], axis=0), **options)
            results[held] = {"current": current[held], "held_out": replay(recording, overrides_of(held_w)),
                             "in_sample": replay(recording, overrides_of(everything)),
                             "held_out_weights": overrides_of(held_w)}
            print(f"  {held}: held-out weights {json.dumps(overrides_of(held_w))}", flush=True)
        print_table(f"toward_current {shrink}", results)
        report[str(shrink)] = {"all": overrides_of(everything), "sets": results}
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))


def print_table(title: str, results: dict) -> None:
    kinds = ("current", "held_out", "in_sample")
    print(f"\n{title}: evidence recall soft / strict (replay)")
    print("| set | current weights | LOSO learned (held-out) | learned on all (in-sample) |")
    print("| --- | --- | --- | --- |")
    for held, r in results.items():
        print(f"| {held} | " + " | ".join(f"{r[k][0]:.4f} / {r[k][1]:.4f}" for k in kinds) + " |")
    means = [statistics.mean(r[k][0] for r in results.values()) for k in kinds]
    print("| mean soft | " + " | ".join(f"{m:.4f}" for m in means) + " |")
    worst = min(r["held_out"][0] - r["current"][0] for r in results.values())
    print(f"held-out mean {means[1] - means[0]:+.4f} soft against current; worst set {worst:+.4f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("set")
    rec.add_argument("file")
    rec.add_argument("--data-dir", required=True)
    rec.add_argument("--out", required=True)
    rec.add_argument("--budget", type=int, required=True)
    rec.add_argument("--limit", type=int)
    fitp = sub.add_parser("fit")
    fitp.add_argument("recordings", nargs="+")
    fitp.add_argument("--steps", type=int, default=300)
    fitp.add_argument("--l2", type=float, default=1e-3)
    fitp.add_argument("--negatives", type=int, default=150)
    fitp.add_argument("--toward-current", type=float, nargs="+", default=[0.0],
                      help="penalties on departing from the current weights, one fit each (0: a free fit)")
    fitp.add_argument("--hard", action="store_true",
                      help="the negatives are those the current weights rank highest, not a random draw")
    fitp.add_argument("--json")
    args = parser.parse_args()
    record(args) if args.command == "record" else fit_command(args)


if __name__ == "__main__":
    main()
