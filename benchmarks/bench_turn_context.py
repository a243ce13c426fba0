"""Question-time cost of the reranker's vectors on a small conversation store, warm and cold cache.

    python benchmarks/bench_turn_context.py [--conversations 1] [--questions 60]

Ingests LoCoMo conversations from ../shared/eval (no triples: the graph is not what is measured)
into a fresh data dir, then asks the conversations' questions through RetrievalPipeline twice:
with the embedding cache the ingestion filled, and in a fresh process state after the cache file
was deleted (a replica that did not ingest). Prints p50/p95 of the ``rerank`` and ``dedup`` stages
(where the candidates' passage and turn-context vectors are obtained) and of the whole pipeline,
and how many embeddings each pass computed beyond the questions'.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_memory.core.config import load_settings  # noqa: E402
from agent_memory.ingest.pipeline import IngestionPipeline  # noqa: E402
from agent_memory.ingest.transcripts import locomo_turns  # noqa: E402
from agent_memory.retrieval.pipeline import RetrievalPipeline  # noqa: E402
from agent_memory.services import build_services  # noqa: E402

EVAL = Path(__file__).resolve().parents[1].parent / "shared" / "eval"


def pct(values: list[float], p: float) -> float:
    xs = sorted(values)
    return round(xs[min(len(xs) - 1, int(len(xs) * p))], 2)


def ask(settings, questions: list[str]) -> dict:
    with build_services(settings) as services:
        pipeline = RetrievalPipeline.from_services(services)
        pipeline.run("warm up", tenant="default", budget=1000)  # model load is not retrieval
        before = services.embedder.computed
        stages: dict[str, list[float]] = {}
        rankings = []
        for question in questions:
            result = pipeline.run(question, tenant="default", budget=1000, debug=True)
            rankings.append([f["id"] for f in result.fused])
            for stage, ms in result.timings_ms.items():
                stages.setdefault(stage, []).append(ms)
        computed = services.embedder.computed - before
        pipeline.close()
    out = {k: {"p50": pct(v, 0.5), "p95": pct(v, 0.95)} for k, v in stages.items() if k in ("rerank", "dedup", "total")}
    return {"stages": out, "embeddings_computed": computed, "rankings": rankings}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--conversations", type=int, default=1, help="LoCoMo conversations to ingest")
    parser.add_argument("--questions", type=int, default=60, help="questions asked per pass")
    args = parser.parse_args()
    records = json.loads((EVAL / "locomo_dev.json").read_text())[: args.conversations]
    data_dir = Path(tempfile.mkdtemp(prefix="agent-memory-turn-context-"))
    settings = load_settings(data_dir=data_dir, qdrant_url=None, neo4j_uri=None, postgres_url=None, llm_model=None,
                             triple_extractor="none")
    with build_services(settings) as services:
        started = time.perf_counter()
        pipeline = IngestionPipeline(services)
        for record in records:
            pipeline.ingest_turns(locomo_turns(record, "default"))
        items = services.vectors.count()
        print(f"ingested {items} items in {time.perf_counter() - started:.1f} s ({data_dir})")
    questions = [qa["question"] for r in records for qa in r["qa"]][: args.questions]
    warm = ask(settings, questions)
    (data_dir / "embedding-cache.sqlite").unlink()
    cold = ask(settings, questions)
    same = sum(a == b for a, b in zip(warm["rankings"], cold["rankings"]))
    for name, run in (("warm cache", warm), ("empty cache", cold)):
        print(f"{name}: " + ", ".join(f"{k} p50/p95 {v['p50']}/{v['p95']} ms" for k, v in run["stages"].items())
              + f"; embeddings computed beyond the questions: {run['embeddings_computed']}")
    print(f"same ranking after the cache was emptied: {same}/{len(questions)} questions")


if __name__ == "__main__":
    main()
