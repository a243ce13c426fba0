"""Bounded load check of POST /v1/ask on loopback: the API in a subprocess (uvicorn), the sample
corpus ingested through the API, then N retrieval-only asks at concurrency C. Prints p50/p95/p99
latency and throughput; exits 1 on any error. Traffic goes to 127.0.0.1 only, and stops by itself
(fixed request count, per-request timeout, overall deadline).

    .venv/bin/python benchmarks/load_ask.py --requests 200 --concurrency 8
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_memory.api.testing import serve_in_subprocess, upload_samples, wait_ready  # noqa: E402

QUESTIONS = [
    "Which vector store does agent-memory embed, and why?",
    "Who founded Acme Corporation, and where is it based?",
    "How often does the X-300 report readings?",
    "Which sensor did the team order for the greenhouse, and how many?",
    "What happens to strict messages when the window fills?",
    "Which graph database is used in production?",
    "How much power does the X-200 draw?",
    "When is the delivery of the sensors expected?",
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--budget", type=int, default=1200)
    parser.add_argument("--deadline-s", type=float, default=900.0, help="give up after this long in total")
    parser.add_argument("--json", help="also write the figures to this JSON file")
    args = parser.parse_args(argv)

    data_dir = Path(tempfile.mkdtemp(prefix="agent-memory-load-"))
    env = {"AGENT_MEMORY_TRIPLE_EXTRACTOR": "rules", "AGENT_MEMORY_API_KEYS": "{}", "AGENT_MEMORY_LLM_MODEL": "",
           "HF_HUB_OFFLINE": "1", "AGENT_MEMORY_NO_PROGRESS": "1"}
    started = time.monotonic()
    with serve_in_subprocess(data_dir, env) as url:
        with httpx.Client(base_url=url, timeout=60) as client:
            wait_ready(client)
            upload_samples(client)
            # One warm ask so the first measured request does not pay lazy loading.
            client.post("/v1/ask", json={"question": QUESTIONS[0], "budget": args.budget}).raise_for_status()
            print(f"server ready and samples ingested in {time.monotonic() - started:.1f}s")

        latencies: list[float] = []
        errors: list[str] = []
        stop_at = time.monotonic() + args.deadline_s

        def one(i: int, client: httpx.Client) -> None:
            if time.monotonic() > stop_at:
                errors.append(f"#{i}: deadline passed before sending")
                return
            body = {"question": QUESTIONS[i % len(QUESTIONS)], "budget": args.budget}
            t0 = time.perf_counter()
            try:
                response = client.post("/v1/ask", json=body)
            except httpx.HTTPError as exc:
                errors.append(f"#{i}: {type(exc).__name__}: {exc}")
                return
            elapsed = (time.perf_counter() - t0) * 1000
            if response.status_code != 200 or response.json().get("mode") != "retrieval-only":
                errors.append(f"#{i}: HTTP {response.status_code} {response.text[:200]}")
                return
            if not response.json()["passages"]:
                errors.append(f"#{i}: no passages for {body['question']!r}")
                return
            latencies.append(elapsed)

        limits = httpx.Limits(max_connections=args.concurrency, max_keepalive_connections=args.concurrency)
        with httpx.Client(base_url=url, timeout=60, limits=limits) as client:
            wall = time.perf_counter()
            with ThreadPoolExecutor(max_workers=args.concurrency) as pool:
                list(pool.map(lambda i: one(i, client), range(args.requests)))
            wall = time.perf_counter() - wall

    figures = {
        "requests": args.requests, "concurrency": args.concurrency, "budget": args.budget,
        "ok": len(latencies), "errors": len(errors), "wall_s": round(wall, 2),
        "throughput_rps": round(len(latencies) / wall, 2) if wall else 0.0,
        "p50_ms": round(percentile(latencies, 50), 1) if latencies else None,
        "p95_ms": round(percentile(latencies, 95), 1) if latencies else None,
        "p99_ms": round(percentile(latencies, 99), 1) if latencies else None,
        "mean_ms": round(statistics.fmean(latencies), 1) if latencies else None,
        "cpu_count": os.cpu_count(),
    }
    print(json.dumps(figures, indent=2))
    for error in errors[:10]:
        print("error:", error, file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0 if not errors and len(latencies) == args.requests else 1


if __name__ == "__main__":
    sys.exit(main())
