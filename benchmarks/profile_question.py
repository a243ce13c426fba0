"""The question path in-process on a store written by bench_scale.py: per-stage times and a digest
of the prompts (two code versions on one store must print the same digest), optionally a cProfile.

    python benchmarks/bench_scale.py --sizes 11000 --data-dir /tmp/s11k      # ingest once
    python benchmarks/profile_question.py /tmp/s11k --questions 80 --cold [--profile out.prof]

The questions are bench_scale's, drawn as it draws them (random.Random(7)), each from a random
tenant. ``--cold`` empties the per-text caches (keyword sets, entity spans, sentences) before every
question: at 100k items the passages a question reaches are mostly new to the process, at 11k
mostly met before. The pipeline runs without the API and the debug dump (as /v1/ask does).
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_scale import corpus  # noqa: E402

from agent_memory.core import text  # noqa: E402
from agent_memory.core.config import load_settings  # noqa: E402
from agent_memory.retrieval import pages  # noqa: E402
from agent_memory.retrieval.pipeline import RetrievalPipeline  # noqa: E402
from agent_memory.services import build_services  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--questions", type=int, default=80)
    parser.add_argument("--tenants", type=int, default=10)
    parser.add_argument("--cold", action="store_true", help="empty the per-text caches before each question")
    parser.add_argument("--profile", type=Path, help="write a cProfile of the questions (main thread)")
    parser.add_argument("--overrides", type=json.loads, default=None,
                        help="retrieval settings over the default, as JSON ('{\"hop_bridges\": 2}')")
    args = parser.parse_args()
    _, questions = corpus()
    rng = random.Random(7)
    draws = [(rng.choice(questions), f"t{rng.randrange(args.tenants)}") for _ in range(args.questions)]
    caches = [getattr(module, name) for module, name in
              ((text, "keyword_set"), (text, "_split_terms"), (text, "_cjk_run_terms"),
               (pages, "mentioned_names"), (pages, "_sentences")) if hasattr(module, name)]
    settings = load_settings(data_dir=args.data_dir, qdrant_url=None, neo4j_uri=None, postgres_url=None,
                             llm_model=None)
    stages: dict[str, list[float]] = {}
    prompts = []
    profile = cProfile.Profile() if args.profile else None
    with build_services(settings) as services:
        pipeline = RetrievalPipeline.from_services(services, overrides=args.overrides)
        for question, tenant in draws[:5]:  # models and stores warm
            pipeline.run(question, tenant=tenant)
        for question, tenant in draws:
            for cache in caches if args.cold else ():
                cache.cache_clear()
            if profile:
                profile.enable()
            started = time.perf_counter()
            result = pipeline.run(question, tenant=tenant)
            wall = (time.perf_counter() - started) * 1000
            if profile:
                profile.disable()
            for stage, ms in {**result.timings_ms, "wall": wall}.items():
                stages.setdefault(stage, []).append(ms)
            prompts.append(result.prompt)

    def pick(values: list[float], p: float) -> float:
        return round(sorted(values)[min(len(values) - 1, int(len(values) * p))], 1)

    print(json.dumps({stage: {"mean": round(sum(v) / len(v), 1), "p50": pick(v, 0.5), "p95": pick(v, 0.95)}
                      for stage, v in stages.items()}))
    print("prompts sha256", hashlib.sha256("\n".join(prompts).encode()).hexdigest()[:16])
    if profile:
        profile.dump_stats(args.profile)


if __name__ == "__main__":
    main()
