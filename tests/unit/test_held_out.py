"""benchmarks/held_out.py: the configuration each held-out part is scored with is the one the rest chose."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "held_out.py"
_spec = importlib.util.spec_from_file_location("held_out", _PATH)
held_out = importlib.util.module_from_spec(_spec)
sys.modules["held_out"] = held_out
_spec.loader.exec_module(held_out)


def _write(path: Path, rows: dict[str, dict[str, float]]) -> Path:
    """rows: {system: {qid: strict (soft = strict)}}."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps({"system": s, "qid": q, "strict": v, "soft": v})
                              for s, by_q in rows.items() for q, v in by_q.items()) + "\n", encoding="utf-8")
    return path


def test_a_tie_keeps_the_served_configuration_and_the_best_wins_otherwise():
    assert held_out.choose({"product": (0.5, 0.5), "product:x": (0.5, 0.5)}) == "product"
    assert held_out.choose({"product": (0.5, 0.5), "product:x": (0.5, 0.6)}) == "product:x"


def test_each_set_is_scored_with_what_the_other_sets_choose(tmp_path, capsys, monkeypatch):
    # Set a prefers x, set b prefers the served one more strongly: leaving a out, b chooses the served
    # one, so a's held-out figure is the served one's; leaving b out, a chooses x.
    qs = [f"q{i}" for i in range(10)]
    a = _write(tmp_path / "a" / "a.jsonl", {"product": dict.fromkeys(qs, 0.0), "product:x": dict.fromkeys(qs, 0.5)})
    b = _write(tmp_path / "b" / "b.jsonl", {"product": dict.fromkeys(qs, 1.0), "product:x": dict.fromkeys(qs, 0.0)})
    monkeypatch.setattr(sys, "argv", ["held_out.py", str(a), str(b), "--folds", "5"])
    held_out.main()
    lines = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
             for line in capsys.readouterr().out.splitlines() if line.startswith("| a/") or line.startswith("| b/")}
    assert lines["a/a"][1:3] == ["product:x", "0.500 / 0.500"]  # in-sample: its own choice
    assert lines["a/a"][3].startswith("0.500 / 0.500")  # every fold of a chose x on the other folds of a
    assert lines["a/a"][4] == "0.000 / 0.000 (product)"  # held out across sets: b's choice
    assert lines["b/b"][4] == "0.000 / 0.000 (product:x)"
