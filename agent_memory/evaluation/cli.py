"""``agent-memory eval DATASET``: the entry point used by ``agent_memory.cli``.

Also runnable alone (``python -m agent_memory.evaluation``) with a parser that accepts a
comma list of budgets and ``--no-product``.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from agent_memory.core.errors import AgentMemoryError, ConfigError
from agent_memory.evaluation.agent_path import AgentPathConfig, evaluate_agent_path
from agent_memory.evaluation.agent_path import markdown as agent_markdown
from agent_memory.evaluation.arguments import add_eval_arguments
from agent_memory.evaluation.datasets import detect_format, read_any
from agent_memory.evaluation.mixed import MixedConfig, evaluate_mixed
from agent_memory.evaluation.mixed import markdown as mixed_markdown
from agent_memory.evaluation.runner import RunConfig, evaluate, parse_compare

DEFAULT_BUDGETS = {"locomo": 1800, "longmemeval": 2000, "hotpotqa": 1000, "cmrc": 1000}


def parse_budgets(value: Any, dataset_name: str) -> list[int]:
    """``None`` → the README's default for the set; an int; or a comma list like "500,1000,1800"."""
    if value is None or value == "":
        return [DEFAULT_BUDGETS[dataset_name]]
    if isinstance(value, int):
        parts = [value]
    else:
        try:
            parts = [int(p) for p in str(value).split(",") if p.strip()]
        except ValueError:
            raise ConfigError(f"--budget {value!r} must be an integer or a comma list of integers") from None
    if not parts or any(p <= 0 for p in parts):
        raise ConfigError(f"--budget {value!r} must hold positive token counts")
    return parts


def json_summary(report: dict, run: dict) -> dict:
    """The one-object summary printed by ``--json`` for one budget."""
    product = run["product"]
    out: dict[str, Any] = {
        "dataset": report["dataset"],
        "budget": run["budget"],
        "tokenizer": report["tokenizer"],
        "overall": None if product is None else {"soft": product["soft"], "strict": product["strict"],
                                                 "n": product["n"]},
        "by_category": {} if product is None else product["by_category"],
        "baselines": {name: (None if s is None else {"soft": s["soft"], "strict": s["strict"]})
                      for name, s in run["baselines"].items()},
        # --compare: each configuration beside the product, per category, with the product's lead over it.
        "compare": {label: {"soft": s["soft"], "strict": s["strict"], "n": s["n"], "by_category": s["by_category"],
                            "product_minus_this": s.get("product_minus_this")}
                    for label, s in run.get("compare", {}).items()},
        "latency_ms": {"p50": run["latency_ms"]["p50"], "p95": run["latency_ms"]["p95"]},
    }
    if report["dataset"] == "hotpotqa":
        out["answer_in_prompt"] = None if product is None else product.get("answer_in_prompt")
        for name, s in run["baselines"].items():
            if s is not None:
                out["baselines"][name]["answer_in_prompt"] = s.get("answer_in_prompt")
    if product is None:
        out["product"] = report["product_status"]
    return out


def run_mixed(args) -> int:
    if getattr(args, "compare", None):
        raise ConfigError("--compare runs on one set; leave out --mixed")
    files = [Path(f) for f in args.mixed]
    budgets = {}
    for path in files:
        if not path.is_file():
            raise ConfigError(f"dataset file {str(path)!r} does not exist")
        name = detect_format(read_any(path))
        budgets[name] = DEFAULT_BUDGETS[name]
    if getattr(args, "budget", None):
        raise ConfigError("--mixed runs every set at its own default budget; leave out --budget")
    data_dir = getattr(args, "data_dir", None)
    temp = None if data_dir else tempfile.mkdtemp(prefix="am-eval-mixed-")
    try:
        config = MixedConfig(datasets=files, budgets=budgets, data_dir=Path(data_dir or temp),
                             out_dir=Path(getattr(args, "out", None) or "reports"),
                             preset=getattr(args, "preset", None) or "default", limit=getattr(args, "limit", None),
                             agent_path=bool(getattr(args, "agent_path", False)))
        report = evaluate_mixed(config)
    finally:
        if temp:
            shutil.rmtree(temp, ignore_errors=True)
    print(json.dumps(report, ensure_ascii=False) if getattr(args, "json", False) else mixed_markdown(report))
    return 0


def run_agent_path(args, dataset: Path, name: str) -> int:
    budgets = parse_budgets(getattr(args, "budget", None), name)
    if len(budgets) != 1:
        raise ConfigError(f"--agent-path runs at one budget, got {budgets}")
    for flag in ("compare", "no_product"):
        if getattr(args, flag, None):
            raise ConfigError(f"--agent-path scores the product on both paths; leave out --{flag.replace('_', '-')}")
    data_dir = getattr(args, "data_dir", None)
    temp = None if data_dir else tempfile.mkdtemp(prefix="am-eval-agent-")
    try:
        report = evaluate_agent_path(AgentPathConfig(
            dataset=dataset, budget=budgets[0], data_dir=Path(data_dir or temp),
            out_dir=Path(getattr(args, "out", None) or "reports"), limit=getattr(args, "limit", None),
            preset=getattr(args, "preset", None) or "default"))
    finally:
        if temp:
            shutil.rmtree(temp, ignore_errors=True)
    print(json.dumps(report, ensure_ascii=False) if getattr(args, "json", False) else agent_markdown(report))
    return 0


def run_eval(args) -> int:
    if getattr(args, "mixed", None):
        return run_mixed(args)
    if not args.dataset:
        raise ConfigError("name a benchmark file, or several with --mixed")
    dataset = Path(args.dataset)
    if not dataset.is_file():
        raise ConfigError(f"dataset file {str(dataset)!r} does not exist")
    name = {"locomo": "locomo", "longmemeval": "longmemeval", "hotpotqa": "hotpotqa", "cmrc": "cmrc"}[
        detect_format(read_any(dataset))]
    if getattr(args, "agent_path", False):
        return run_agent_path(args, dataset, name)
    budgets = parse_budgets(getattr(args, "budget", None), name)
    product = not getattr(args, "no_product", False)
    baselines = not getattr(args, "no_baselines", False)
    if not product and not baselines:
        raise ConfigError("--no-product with --no-baselines leaves nothing to measure")
    compare = parse_compare(getattr(args, "compare", None) or [], getattr(args, "preset", None) or "default")
    if compare and not product:
        raise ConfigError("--compare scores more product configurations; leave out --no-product")
    data_dir = getattr(args, "data_dir", None)
    config = RunConfig(dataset=dataset, budgets=budgets, limit=getattr(args, "limit", None),
                       out_dir=Path(getattr(args, "out", None) or "reports"), baselines=baselines, product=product,
                       data_dir=Path(data_dir) if data_dir else None,
                       preset=getattr(args, "preset", None) or "default", progress=True, compare=compare)
    result = evaluate(config)
    report = result.report
    if getattr(args, "json", False):
        runs = report["runs"]
        out = json_summary(report, runs[0])
        if len(runs) > 1:
            out["runs"] = [json_summary(report, run) for run in runs]
        print(json.dumps(out, ensure_ascii=False))
    else:
        print(result.paths["markdown"].read_text(encoding="utf-8"))
        print(f"written: {', '.join(str(p) for p in result.paths.values())}", file=sys.stderr)
    if product and report["product_status"] != "ran":
        print(f"warning: product {report['product_status']}", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m agent_memory.evaluation", description=__doc__)
    add_eval_arguments(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        return run_eval(args)
    except Exception as exc:  # noqa: BLE001 - the command reports, it does not dump a traceback
        if not isinstance(exc, AgentMemoryError):
            raise
        print(f"error: {exc}", file=sys.stderr)
        return 2
