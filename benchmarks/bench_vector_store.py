"""Vector store benchmark: Qdrant Edge vs qdrant-client local mode.

    python benchmarks/bench_vector_store.py                 # edge at 100k, edge+local at 20k
    python benchmarks/bench_vector_store.py --n 5000 --local-n 5000
    python benchmarks/bench_vector_store.py --edge-optimize # also time optimize() (segment merge/vacuum)

Data: random unit vectors (384-d), BM25 sparse vectors of synthetic Zipf-distributed
text (~40 tokens), 3 tenants, 3 kinds, spread creation times. Reports upsert seconds,
open (reopen) seconds, and p50/p95 of: dense search filtered by tenant, dense search
filtered by tenant+kind+time, sparse search filtered by tenant. Local mode is brute force
in Python, so it runs at a smaller N (--local-n); the edge store is also run at that N so
the ratios compare like with like.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_memory.core.records import MemoryItem, SearchFilter  # noqa: E402
from agent_memory.core.sparse import SparseEncoder  # noqa: E402
from agent_memory.stores.qdrant_edge_store import EdgeVectorStore  # noqa: E402
from agent_memory.stores.qdrant_server_store import QdrantServerVectorStore  # noqa: E402

TENANTS = ("t0", "t1", "t2")
KINDS = ("chunk", "summary", "turn")


def make_data(n: int, dim: int, seed: int = 7):
    rng = np.random.default_rng(seed)
    dense = rng.normal(size=(n, dim)).astype(np.float32)
    dense /= np.linalg.norm(dense, axis=1, keepdims=True)
    vocab = np.array([f"w{i}" for i in range(20000)])
    ranks = np.minimum(rng.zipf(1.2, size=(n, 40)) - 1, len(vocab) - 1)
    texts = [" ".join(vocab[r]) for r in ranks]
    items = [
        MemoryItem(
            id=str(uuid.UUID(int=int(rng.integers(0, 2**63)) << 64 | i)),
            tenant=TENANTS[i % 3],
            source_id=f"doc-{i // 20}",
            kind=KINDS[(i // 3) % 3],
            text=texts[i],
            chunk_index=i % 20,
            start=(i % 20) * 800,
            end=(i % 20) * 800 + 800,
            created_at=1_700_000_000.0 + i,
            metadata={"title": f"document {i // 20}"},
        )
        for i in range(n)
    ]
    sparse = SparseEncoder().encode_documents(texts)
    return items, dense, sparse, vocab


def percentiles(samples: list[float]) -> tuple[float, float]:
    ms = np.array(samples) * 1000
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 95))


def run(name: str, open_store, items, dense, sparse, vocab, queries: int, optimize: bool = False) -> dict[str, float]:
    enc = SparseEncoder()
    store = open_store()
    t0 = time.perf_counter()
    for start in range(0, len(items), 1000):
        store.upsert(items[start : start + 1000], dense[start : start + 1000], sparse[start : start + 1000])
    out = {"upsert_s": time.perf_counter() - t0}
    if optimize:
        t0 = time.perf_counter()
        store.optimize()
        out["optimize_s"] = time.perf_counter() - t0
    store.close()
    t0 = time.perf_counter()
    store = open_store()
    out["open_s"] = time.perf_counter() - t0
    assert store.count() == len(items), (store.count(), len(items))

    rng = np.random.default_rng(99)
    n = len(items)
    lat: dict[str, list[float]] = {"dense_tenant": [], "dense_kind_time": [], "sparse_tenant": []}
    for q in range(queries):
        tenant = TENANTS[q % 3]
        vec = dense[rng.integers(0, n)] + rng.normal(0, 0.05, dense.shape[1]).astype(np.float32)
        t0 = time.perf_counter()
        hits = store.search_dense(vec, SearchFilter(tenant=tenant), 20)
        lat["dense_tenant"].append(time.perf_counter() - t0)
        assert hits and all(h.item.tenant == tenant for h in hits)
        lo = 1_700_000_000.0 + rng.integers(0, n // 2)
        flt = SearchFilter(tenant=tenant, kinds=["chunk", "turn"], created_after=lo, created_before=lo + n / 4)
        t0 = time.perf_counter()
        store.search_dense(vec, flt, 20)
        lat["dense_kind_time"].append(time.perf_counter() - t0)
        words = " ".join(vocab[np.minimum(rng.zipf(1.2, size=3) - 1, len(vocab) - 1)])
        t0 = time.perf_counter()
        store.search_sparse(enc.encode_query(words), SearchFilter(tenant=tenant), 20)
        lat["sparse_tenant"].append(time.perf_counter() - t0)
    store.close()
    for key, samples in lat.items():
        out[f"{key}_p50_ms"], out[f"{key}_p95_ms"] = percentiles(samples)
    print(f"  {name}: " + ", ".join(f"{k}={v:.3f}" if k.endswith("_s") else f"{k}={v:.1f}" for k, v in out.items()), flush=True)
    return out


def table(title: str, cols: dict[str, dict[str, float]], ratio: tuple[str, str] | None) -> None:
    print(f"\n{title}")
    names = list(cols)
    header = f"{'metric':<24}" + "".join(f"{n:>22}" for n in names) + (f"{ratio[1] + '/' + ratio[0]:>16}" if ratio else "")
    print(header)
    for key in cols[names[0]]:
        row = f"{key:<24}" + "".join(f"{cols[n].get(key, float('nan')):>22.2f}" for n in names)
        if ratio and key in cols[ratio[0]] and key in cols[ratio[1]] and cols[ratio[0]][key] > 0:
            row += f"{cols[ratio[1]][key] / cols[ratio[0]][key]:>15.1f}x"
        print(row)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100_000, help="points for the edge store")
    ap.add_argument("--local-n", type=int, default=20_000, help="points for the local-mode comparison (0 skips it)")
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--local-queries", type=int, default=30, help="local mode is slow: fewer queries")
    ap.add_argument("--edge-optimize", action="store_true", help="also time EdgeVectorStore.optimize() (segment merge; no HNSW below the indexing threshold)")
    args = ap.parse_args(argv)

    root = Path(tempfile.mkdtemp(prefix="bench-vs-"))
    try:
        print(f"generating {args.n} points, {args.dim}-d, 3 tenants ...", flush=True)
        items, dense, sparse, vocab = make_data(max(args.n, args.local_n), args.dim)
        big = run(
            f"edge N={args.n}",
            lambda: EdgeVectorStore(root / "edge-big", "bench", args.dim),
            items[: args.n], dense[: args.n], sparse[: args.n], vocab, args.queries,
        )
        table(f"Qdrant Edge, N={args.n}", {"edge": big}, None)
        if args.edge_optimize:
            opt = run(
                f"edge+optimize N={args.n}",
                lambda: EdgeVectorStore(root / "edge-opt", "bench", args.dim),
                items[: args.n], dense[: args.n], sparse[: args.n], vocab, args.queries, optimize=True,
            )
            table(f"Qdrant Edge plain vs optimized, N={args.n}", {"edge plain": big, "edge optimized": opt}, ("edge plain", "edge optimized"))
        if args.local_n:
            m = args.local_n
            small = run(
                f"edge N={m}",
                lambda: EdgeVectorStore(root / "edge-small", "bench", args.dim),
                items[:m], dense[:m], sparse[:m], vocab, args.local_queries,
            )
            local = run(
                f"local N={m}",
                lambda: QdrantServerVectorStore("bench", args.dim, path=root / "local"),
                items[:m], dense[:m], sparse[:m], vocab, args.local_queries,
            )
            table(f"Side by side at N={m} (qdrant-client local mode is brute-force Python)", {"edge": small, "local": local}, ("edge", "local"))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
