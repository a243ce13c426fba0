"""Aggregation and the written report: Markdown + JSON tables, and recall against budget (PNG)."""

from __future__ import annotations

import json
import logging
import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_memory.core.extras import has_extra
from agent_memory.evaluation.metric import Score

log = logging.getLogger(__name__)

PRODUCT = "product"


@dataclass
class Tally:
    """Per-question scores of one system at one budget, kept as small numbers only."""

    soft: list[float] = field(default_factory=list)
    strict: list[bool] = field(default_factory=list)
    answer: list[bool] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    by_category: dict[str, list[tuple[float, bool]]] = field(default_factory=lambda: defaultdict(list))

    def add(self, category: str, score: Score, tokens: int) -> None:
        self.soft.append(score.soft)
        self.strict.append(score.strict)
        self.tokens.append(tokens)
        if score.answer_in_prompt is not None:
            self.answer.append(score.answer_in_prompt)
        self.by_category[category].append((score.soft, score.strict))

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"soft": _mean(self.soft), "strict": _mean(self.strict), "n": len(self.soft),
                               "tokens_mean": _mean(self.tokens)}
        if self.answer:
            out["answer_in_prompt"] = _mean(self.answer)
        out["by_category"] = {
            cat: {"soft": _mean([s for s, _ in rows]), "strict": _mean([t for _, t in rows]), "n": len(rows)}
            for cat, rows in sorted(self.by_category.items())
        }
        return out


def _mean(values) -> float:
    values = list(values)
    return round(sum(float(v) for v in values) / len(values), 4) if values else 0.0


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return round(ordered[rank - 1], 1)


def run_summary(budget: int, tallies: dict[str, Tally], latencies: list[float], extra: dict[str, Any]) -> dict:
    """One budget's results: product and baselines side by side, with the delta to the best baseline."""
    systems = {name: tally.summary() for name, tally in tallies.items()}
    product = systems.pop(PRODUCT, None)
    # Compared product configurations (--compare) stand beside the product, never as baselines.
    compare = {name.split(":", 1)[1]: systems.pop(name) for name in list(systems) if name.startswith(PRODUCT + ":")}
    if product is not None:
        for summary in compare.values():
            summary["product_minus_this"] = {
                "soft": round(product["soft"] - summary["soft"], 4),
                "strict": round(product["strict"] - summary["strict"], 4),
                "by_category": {cat: {"soft": round(row["soft"] - summary["by_category"][cat]["soft"], 4),
                                      "strict": round(row["strict"] - summary["by_category"][cat]["strict"], 4)}
                                for cat, row in product["by_category"].items() if cat in summary["by_category"]}}
    best: dict[str, Any] = {}
    delta: dict[str, float] = {}
    for metric in ("soft", "strict", "answer_in_prompt"):
        scored = {n: s[metric] for n, s in systems.items() if metric in s}
        if scored:
            name = max(scored, key=lambda n: scored[n])
            best[metric] = {"name": name, "value": scored[name]}
            if product is not None and metric in product:
                delta[metric] = round(product[metric] - scored[name], 4)
    return {"budget": budget, "product": product, "compare": compare, "baselines": systems, "best_baseline": best,
            "delta": delta,
            "latency_ms": {"p50": percentile(latencies, 50), "p95": percentile(latencies, 95), "n": len(latencies)},
            **extra}


# ---- writing ---------------------------------------------------------------------------------------


def _fmt(value) -> str:
    return "—" if value is None else f"{value:.3f}"


def _cell(summary: dict | None, metric: str) -> str:
    return "—" if summary is None or metric not in summary else _fmt(summary[metric])


def render_markdown(report: dict) -> str:
    lines = [f"# Evidence recall inside a bounded prompt: {report['dataset']}", ""]
    lines += [f"- file: `{report['file']}`", f"- questions: {report['n_questions']}"
              + (f" (first {report['limit']} only)" if report.get("limit") else ""),
              f"- tokenizer: {report['tokenizer']}; budgets: {', '.join(str(r['budget']) for r in report['runs'])}",
              f"- embedding: {report['embedding_model']}, preset {report.get('preset', 'default')}",
              *[f"- compared in the same run: `{PRODUCT}:{c['label']}` = preset {c['preset']}"
                + (f" with `{json.dumps(c['overrides'])}`" if c["overrides"] else "") for c in report.get("compare", [])],
              f"- triple extractor: {report['triple_extractor']}",
              f"- product: {report.get('product_status', 'ran')}",
              "- baselines pack whole turns/paragraphs greedily by rank (a source that does not fit is skipped), "
              "kinds turn/chunk only, RRF k=60, in the product's frame (instructions and question count against "
              "the budget)", ""]
    ingest = report.get("ingest") or {}
    if ingest:
        lines += ["Ingestion: " + ", ".join(f"{k} {v}" for k, v in ingest.items()), ""]
    metrics = ["soft", "strict"] + (["answer_in_prompt"] if report["dataset"] == "hotpotqa" else [])
    if report["dataset"] == "cmrc":
        metrics = ["soft"]
        lines += ["CMRC: a hit when a gold answer appears verbatim in the prompt's context (soft = strict = hit).", ""]
    for run in report["runs"]:
        compared = {f"{PRODUCT}:{label}": summary for label, summary in run.get("compare", {}).items()}
        systems = {PRODUCT: run["product"], **compared, **run["baselines"]}
        lines += [f"## Budget {run['budget']} tokens", ""]
        header = "| system | " + " | ".join(metrics) + " | tokens (mean) |"
        lines += [header, "|" + " --- |" * (len(metrics) + 2)]
        for name, summary in systems.items():
            cells = [_cell(summary, m) for m in metrics]
            tokens = "—" if summary is None else f"{summary['tokens_mean']:.0f}"
            lines.append(f"| {name} | " + " | ".join(cells) + f" | {tokens} |")
        if run["delta"]:
            lines.append("| **product − best baseline** | " + " | ".join(
                (f"{run['delta'][m]:+.3f} (vs {run['best_baseline'][m]['name']})" if m in run["delta"] else "—")
                for m in metrics) + " | |")
        lines.append("")
        categories = sorted({c for s in systems.values() if s for c in s["by_category"]})
        if len(categories) > 1:
            lines += ["Per category (strict / soft):", "",
                      "| category | n | " + " | ".join(systems) + " |", "|" + " --- |" * (len(systems) + 2)]
            for cat in categories:
                n = next((s["by_category"][cat]["n"] for s in systems.values() if s and cat in s["by_category"]), 0)
                cells = []
                for s in systems.values():
                    row = s["by_category"].get(cat) if s else None
                    cells.append("—" if row is None else f"{row['strict']:.3f} / {row['soft']:.3f}")
                lines.append(f"| {cat} | {n} | " + " | ".join(cells) + " |")
            lines.append("")
        lat = run["latency_ms"]
        if lat["n"]:
            lines += [f"Product latency per question: p50 {lat['p50']} ms, p95 {lat['p95']} ms "
                      f"({lat['n']} questions); over budget: {run.get('over_budget', 0)}; "
                      f"errors: {run.get('errors', 0)}.", ""]
        lines += [f"Per-question records: `{run['questions_file']}`", ""]
    if report.get("plot"):
        lines += [f"![recall against budget]({Path(report['plot']).name})", ""]
    return "\n".join(lines)


def plot_budgets(report: dict, path: Path) -> Path | None:
    """Soft (solid) and strict (dashed) recall against budget for every system."""
    runs = sorted(report["runs"], key=lambda r: r["budget"])
    if len(runs) < 2:
        return None
    if not has_extra("matplotlib"):
        log.warning("no plot: matplotlib is not installed (pip install 'agent-memory[eval]')")
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [PRODUCT, *runs[0]["baselines"]]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    budgets = [r["budget"] for r in runs]
    for index, name in enumerate(names):
        rows = [r["product"] if name == PRODUCT else r["baselines"].get(name) for r in runs]
        if any(row is None for row in rows):
            continue
        color = f"C{index}"
        ax.plot(budgets, [row["soft"] for row in rows], "-o", color=color, label=f"{name} soft")
        if report["dataset"] != "cmrc":
            ax.plot(budgets, [row["strict"] for row in rows], "--", color=color, label=f"{name} strict")
    ax.set_xlabel(f"budget ({report['tokenizer']} tokens)")
    ax.set_ylabel("evidence recall" if report["dataset"] != "cmrc" else "answer hit")
    ax.set_ylim(0, 1)
    ax.set_title(f"{report['dataset']}: recall against budget")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def write_report(report: dict, out_dir: Path, stem: str) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    plot = plot_budgets(report, out_dir / f"{stem}.png")
    if plot is not None:
        report["plot"] = str(plot)
        paths["plot"] = plot
    paths["json"] = out_dir / f"{stem}.json"
    paths["json"].write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    paths["markdown"] = out_dir / f"{stem}.md"
    paths["markdown"].write_text(render_markdown(report), encoding="utf-8")
    return paths
