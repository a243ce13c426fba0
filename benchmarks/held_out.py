"""In-sample beside held-out figures for a setting chosen among `eval --compare` configurations.

Every configuration answered the same questions in one run (`agent-memory eval FILE --compare
'name={...}' ...`), so each question has one record per configuration in the run's JSONL files.
A setting is *chosen* by the figure it reaches (mean strict, then mean soft; a tie keeps the served
default, ``product``). This prints, per set and budget:

- in-sample: the chosen configuration's figure when the choice saw every question;
- held out across folds: the questions split in ``--folds`` folds (by a hash of the question ID, or
  of the part before ``--group-sep`` to keep a conversation's questions together); each fold is scored
  with the configuration chosen on the other folds;
- held out across sets (with record files of two or more sets): each set scored with the configuration
  chosen on the mean of the other sets' figures (a set is a folder of the run: its budgets leave together).

    python benchmarks/held_out.py runs/hotpot/hotpotqa-500.jsonl runs/hotpot/hotpotqa-1000.jsonl \\
        runs/musique/hotpotqa-1000.jsonl runs/locomo/locomo-1800.jsonl --folds 5
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections import defaultdict
from pathlib import Path

SERVED = "product"


def read(path: Path) -> dict[str, dict[str, tuple[float, float]]]:
    """{system: {qid: (strict, soft)}} of one record file."""
    out: dict[str, dict[str, tuple[float, float]]] = defaultdict(dict)
    for line in path.read_text("utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            out[rec["system"]][rec["qid"]] = (float(rec["strict"]), float(rec["soft"]))
    return dict(out)


def figure(scores: dict[str, tuple[float, float]], qids: list[str]) -> tuple[float, float]:
    if not qids:
        return (0.0, 0.0)
    return (sum(scores[q][0] for q in qids) / len(qids), sum(scores[q][1] for q in qids) / len(qids))


def choose(figures: dict[str, tuple[float, float]]) -> str:
    """The best (strict, soft); the served default wins a tie."""
    best = max(figures.values())
    return SERVED if figures.get(SERVED) == best else min(s for s, f in figures.items() if f == best)


def fold_of(qid: str, folds: int, sep: str | None) -> int:
    key = qid.split(sep)[0] if sep and sep in qid else qid
    return int(hashlib.sha1(key.encode()).hexdigest(), 16) % folds


def across_folds(systems: dict[str, dict[str, tuple[float, float]]], folds: int, sep: str | None) -> dict:
    qids = sorted(systems[SERVED])
    by_fold = defaultdict(list)
    for q in qids:
        by_fold[fold_of(q, folds, sep)].append(q)
    held: list[tuple[float, float]] = []
    chosen = []
    for _, members in sorted(by_fold.items()):
        rest = [q for q in qids if q not in set(members)]
        pick = choose({s: figure(v, rest) for s, v in systems.items()})
        chosen.append(pick)
        held.extend(systems[pick][q] for q in members)
    n = len(held)
    return {"held_out": (sum(h[0] for h in held) / n, sum(h[1] for h in held) / n), "chosen_per_fold": chosen}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("records", nargs="+", type=Path, help="per-question JSONL files of eval runs with --compare")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--group-sep", default=None, help="fold by the part of the question ID before this")
    args = parser.parse_args()
    sets = {str(p): read(p) for p in args.records}
    common = set.intersection(*(set(s) for s in sets.values()))
    if SERVED not in common:
        raise SystemExit(f"every file needs the served system {SERVED!r}; systems in common: {sorted(common)}")
    print(f"systems: {', '.join(sorted(common))}")
    print("| set | served | chosen in-sample | in-sample | held out across folds (folds' choices) |"
          " held out across sets (choice) |")
    print("| --- | --- | --- | --- | --- | --- |")
    whole = {name: {s: figure(v, sorted(v)) for s, v in systems.items() if s in common}
             for name, systems in sets.items()}
    for name, systems in sets.items():
        systems = {s: v for s, v in systems.items() if s in common}
        pick = choose(whole[name])
        folds = across_folds(systems, args.folds, args.group_sep)
        row = [Path(name).parent.name + "/" + Path(name).stem, _fmt(whole[name][SERVED]), pick,
               _fmt(whole[name][pick]), f"{_fmt(folds['held_out'])} ({', '.join(folds['chosen_per_fold'])})"]
        others = [n for n in sets if Path(n).parent != Path(name).parent]  # a set's budgets leave together
        if others:
            mean = {s: tuple(sum(whole[o][s][i] for o in others) / len(others) for i in (0, 1)) for s in common}
            other_pick = choose(mean)
            row.append(f"{_fmt(whole[name][other_pick])} ({other_pick})")
        else:
            row.append("—")
        print("| " + " | ".join(row) + " |")


def _fmt(f: tuple[float, float]) -> str:
    return f"{f[1]:.3f} / {f[0]:.3f}"


if __name__ == "__main__":
    main()
