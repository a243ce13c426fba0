"""Mixed load on a real ``agent-memory serve`` on loopback (issue 32): N concurrent clients mixing
ingestion, ask, prompt and session appends for a fixed time, on one tenant and across 10 tenants.

Reports throughput, p50/p95/p99 latency per endpoint, errors (any non-2xx), lost writes (an
acknowledged document or message that cannot be read back afterwards) and the server's memory
growth (RSS after warm-up and seeding vs at the end). Retrieval-only (no LLM), embedded stores.
Traffic goes to 127.0.0.1 only; every request has a timeout; the run stops by itself.

    .venv/bin/python benchmarks/bench_load.py --clients 30 --duration 600 --json /tmp/load.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import threading
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import quote

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_memory.api.testing import sample_files, serve_in_subprocess, wait_ready  # noqa: E402

# (endpoint, weight): what a busy agent deployment does, mostly reads and appends.
MIX = [("ingest", 0.15), ("ask", 0.30), ("prompt", 0.20), ("append", 0.35)]
QUESTIONS = [
    "Which vector store does agent-memory embed, and why?",
    "How often does the X-300 report readings?",
    "Which sensor did the team order for the greenhouse, and how many?",
    "What happens to strict messages when the window fills?",
    "What did the user say about the delivery date?",
]
WORDS = ("harbour grain sensor delivery greenhouse pier lighthouse order budget invoice window "
         "sample model vector graph tenant session message summary").split()


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def server_rss_mb(data_dir: Path) -> float | None:
    """RSS of the ``serve`` process for ``data_dir`` (found by its command line), in MB."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
            if b"serve" in cmdline and str(data_dir).encode() in cmdline:
                for line in (proc / "status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024
        except OSError:
            continue
    return None


class Run:
    def __init__(self, url: str, tenants: int, seed: int) -> None:
        self.url, self.tenants = url, tenants
        self.keys = [f"key-{n}" for n in range(tenants)]
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.errors: dict[str, list[str]] = defaultdict(list)
        self.documents: list[tuple[str, str]] = []  # (key, source id) acknowledged
        self.messages: dict[tuple[str, str], int] = defaultdict(int)  # (key, session) -> acknowledged
        self.lock = threading.Lock()
        self.random = random.Random(seed)

    def client_loop(self, n: int, until: float) -> None:
        rnd = random.Random(n)
        key = self.keys[n % len(self.keys)]
        session = f"client-{n}"
        with httpx.Client(base_url=self.url, timeout=60, headers={"X-API-Key": key}) as http:
            i = 0
            while time.monotonic() < until:
                i += 1
                op = rnd.choices([m[0] for m in MIX], weights=[m[1] for m in MIX])[0]
                text = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(20, 120)))
                started = time.perf_counter()
                try:
                    if op == "ingest":
                        sid = f"load/{n}/{i}"
                        response = http.post("/v1/documents", json={"source_id": sid, "text": f"Note {i}: {text}."})
                    elif op == "append":
                        role = "user" if i % 2 else "assistant"
                        response = http.post(f"/v1/sessions/{session}/messages",
                                             json={"message": {"role": role, "content": f"{i}: {text}"}})
                    else:
                        response = http.post(f"/v1/{op}", json={"question": rnd.choice(QUESTIONS), "budget": 800,
                                                                 "session_id": session})
                    status = response.status_code
                except httpx.HTTPError as exc:
                    status, response = None, exc
                elapsed = (time.perf_counter() - started) * 1000
                with self.lock:
                    self.latency[op].append(elapsed)
                    if status != 200:
                        self.errors[op].append(f"{status}: {str(getattr(response, 'text', response))[:200]}")
                    elif op == "ingest":
                        self.documents.append((key, sid))
                    elif op == "append":
                        self.messages[(key, session)] += 1

    def lost_writes(self) -> int:
        lost = 0
        with httpx.Client(base_url=self.url, timeout=120) as http:
            for key, sid in self.documents:
                if http.get(f"/v1/sources/{quote(sid, safe='/')}", headers={"X-API-Key": key}).status_code != 200:
                    lost += 1
            for (key, session), count in self.messages.items():
                view = http.get(f"/v1/sessions/{session}/view?budget=10000000", headers={"X-API-Key": key})
                shown = len(view.json()["messages"]) if view.status_code == 200 else 0
                # The view is compacted: count the session's stored messages instead when it is.
                stats = http.post(f"/v1/sessions/{session}/messages", headers={"X-API-Key": key},
                                  json={"message": {"role": "user", "content": "count check"}})
                stored = stats.json()["seq"] if stats.status_code == 200 else shown
                lost += max(0, count - max(shown, stored))
        return lost


def scenario(args, tenants: int) -> dict:
    data_dir = Path(tempfile.mkdtemp(prefix=f"agent-memory-load-{tenants}t-"))
    keys = {f"key-{n}": f"tenant{n}" for n in range(tenants)}
    env = {"AGENT_MEMORY_TRIPLE_EXTRACTOR": "rules", "AGENT_MEMORY_API_KEYS": json.dumps(keys),
           "AGENT_MEMORY_LLM_MODEL": "", "AGENT_MEMORY_QDRANT_URL": None, "AGENT_MEMORY_NEO4J_URI": None,
           "AGENT_MEMORY_POSTGRES_URL": None, "HF_HUB_OFFLINE": "1", "AGENT_MEMORY_NO_PROGRESS": "1"}
    with serve_in_subprocess(data_dir, env, log=data_dir.parent / f"{data_dir.name}.log") as url:
        with httpx.Client(base_url=url, timeout=120) as http:
            wait_ready(http)
            for key in keys:  # each tenant starts with the sample corpus
                for path in sample_files():
                    with path.open("rb") as handle:
                        http.post("/v1/documents", headers={"X-API-Key": key}, files={"file": (path.name, handle)},
                                  data={"source_id": str(path.relative_to(ROOT))}).raise_for_status()
        rss_start = server_rss_mb(data_dir)
        run = Run(url, tenants, seed=tenants)
        started = time.monotonic()
        until = started + args.duration
        with ThreadPoolExecutor(args.clients) as pool:
            list(pool.map(lambda n: run.client_loop(n, until), range(args.clients)))
        wall = time.monotonic() - started
        rss_end = server_rss_mb(data_dir)
        lost = run.lost_writes()
    total = sum(len(v) for v in run.latency.values())
    return {
        "tenants": tenants, "clients": args.clients, "duration_s": round(wall, 1), "requests": total,
        "throughput_rps": round(total / wall, 1),
        "endpoints": {op: {"requests": len(v), "p50_ms": round(percentile(v, 50), 1),
                           "p95_ms": round(percentile(v, 95), 1), "p99_ms": round(percentile(v, 99), 1),
                           "errors": len(run.errors.get(op, []))} for op, v in sorted(run.latency.items())},
        "errors": sum(len(v) for v in run.errors.values()),
        "error_samples": [e for v in run.errors.values() for e in v[:3]],
        "lost_writes": lost, "documents_acknowledged": len(run.documents),
        "messages_acknowledged": sum(run.messages.values()),
        "rss_mb_start": rss_start and round(rss_start, 1), "rss_mb_end": rss_end and round(rss_end, 1),
        "rss_growth_mb": round(rss_end - rss_start, 1) if rss_start and rss_end else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=30)
    parser.add_argument("--duration", type=float, default=600.0, help="seconds of load per scenario")
    parser.add_argument("--tenants", default="1,10", help="scenarios: tenant counts, comma-separated")
    parser.add_argument("--json", help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    results = [scenario(args, int(t)) for t in args.tenants.split(",")]
    for r in results:
        print(f"\n{r['tenants']} tenant(s), {r['clients']} clients, {r['duration_s']} s: {r['requests']} requests, "
              f"{r['throughput_rps']} req/s, errors {r['errors']}, lost writes {r['lost_writes']}, "
              f"RSS {r['rss_mb_start']} -> {r['rss_mb_end']} MB")
        for op, e in r["endpoints"].items():
            print(f"  {op:7s} n={e['requests']:6d}  p50 {e['p50_ms']:8.1f}  p95 {e['p95_ms']:8.1f}  "
                  f"p99 {e['p99_ms']:8.1f} ms  errors {e['errors']}")
        for sample in r["error_samples"]:
            print(f"  error: {sample}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0 if all(r["errors"] == 0 and r["lost_writes"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
