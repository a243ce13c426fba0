"""Retrieval latency (all routes, no LLM, embedded stores) over a store built by `agent-memory eval`.

    python benchmarks/bench_retrieval_latency.py DATA_DIR TENANT QUESTIONS_JSONL [--preset default] [--n 100]

QUESTIONS_JSONL: one JSON object per line with a "question" field (the eval harness's per-question
records work). Prints the store size and p50/p95/max of the whole pipeline per question, after a
warm-up query (model load is not retrieval).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_memory.core.config import load_settings  # noqa: E402
from agent_memory.core.records import SearchFilter  # noqa: E402
from agent_memory.retrieval.pipeline import RetrievalPipeline  # noqa: E402
from agent_memory.services import build_services  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("data_dir")
    parser.add_argument("tenant")
    parser.add_argument("questions")
    parser.add_argument("--preset", default="default")
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--budget", type=int, default=1000)
    args = parser.parse_args()
    questions = list(dict.fromkeys(json.loads(line)["question"] for line in Path(args.questions).read_text().splitlines()))
    with build_services(load_settings(data_dir=args.data_dir)) as services:
        pipeline = RetrievalPipeline.from_services(services, preset=args.preset)
        pipeline.run("warm up", tenant=args.tenant, budget=args.budget)
        items = services.vectors.count(SearchFilter(tenant=args.tenant))
        times, stages = [], {}
        for question in questions[: args.n]:
            started = time.perf_counter()
            result = pipeline.run(question, tenant=args.tenant, budget=args.budget)
            times.append((time.perf_counter() - started) * 1000)
            for stage, ms in result.timings_ms.items():
                stages.setdefault(stage, []).append(ms)
        pipeline.close()
    times.sort()
    pct = lambda xs, p: sorted(xs)[min(len(xs) - 1, int(len(xs) * p))]  # noqa: E731
    print(f"store: {items} items in tenant {args.tenant!r}; preset {args.preset}; {len(times)} questions")
    print(f"latency ms: p50 {pct(times, 0.5):.1f}  p95 {pct(times, 0.95):.1f}  max {times[-1]:.1f}")
    print("per stage p50/p95 ms: " + ", ".join(f"{k} {pct(v, .5):.1f}/{pct(v, .95):.1f}" for k, v in stages.items()))


if __name__ == "__main__":
    main()
