"""What clearing deleted points out of a Qdrant Edge collection's keyword weighting costs.

    python benchmarks/bench_edge_vacuum.py                  # 10k and 100k points, 1% and 10% deleted
    python benchmarks/bench_edge_vacuum.py --n 10000 --share 0.01

A deleted point keeps counting in the IDF of the keyword (sparse) route until its segment is rebuilt
(optimize) or the shard is reopened. For each size and share deleted (whole sources, as a forget does)
this times: the delete, optimize() (the vacuum, its thresholds set to vacuum any deleted point), a reopen (close + load), the store's own reopen
(refresh_keyword_weights) and a keyword search's p50 and max while the vacuum runs in another thread (the
max is the vacuum's length: it holds the interpreter lock); it checks that the scores after the vacuum and
after refresh_keyword_weights equal those of the shard opened again.
Data: bench_vector_store.make_data (384-d random vectors, Zipf text of ~40 tokens, 3 tenants).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_vector_store import make_data  # noqa: E402

from agent_memory.core.records import SearchFilter  # noqa: E402
from agent_memory.core.sparse import SparseEncoder  # noqa: E402
from agent_memory.stores.qdrant_edge_store import EdgeVectorStore  # noqa: E402

DIM = 384


def keyword_scores(store, queries) -> list:
    return [[(h.item.id, round(h.score, 4)) for h in store.search_sparse(q, SearchFilter(tenant="t0"), 10)]
            for q in queries]


def vacuum_any_deleted(config_file: Path) -> None:
    """Edge's defaults vacuum a segment once 20% of its 1000+ vectors are deleted: optimize() would do nothing
    here; with both at 0 it rebuilds every segment holding a deleted point."""
    config = json.loads(config_file.read_text())
    config["optimizers"].update(deleted_threshold=0.0, vacuum_min_vector_number=0)
    config_file.write_text(json.dumps(config))


def run(n: int, share: float) -> dict:
    items, dense, sparse, vocab = make_data(n, DIM)
    queries = SparseEncoder().encode_queries([" ".join(vocab[[3, 40, 400]]), " ".join(vocab[[1, 7, 90]])])
    folder = Path(tempfile.mkdtemp(prefix="bench-vacuum-"))
    try:
        store = EdgeVectorStore(folder, "c", DIM)
        for start in range(0, n, 2048):
            store.upsert(items[start:start + 2048], dense[start:start + 2048], sparse[start:start + 2048])
        store.close()
        vacuum_any_deleted(folder / "c" / "edge_config.json")
        store = EdgeVectorStore(folder, "c", DIM)
        sources = sorted({(i.tenant, i.source_id) for i in items})
        gone = sources[: max(1, int(len(sources) * share))]
        t = time.perf_counter()
        for tenant, source in gone:
            store.delete_by_source(tenant, source)
        delete_s = time.perf_counter() - t
        info = store._shard.info()
        stale = info.indexed_vectors_count - info.points_count
        during: list[float] = []
        done = threading.Event()

        def search_while_vacuuming() -> None:
            while not done.is_set():
                t0 = time.perf_counter()
                store.search_sparse(queries[0], SearchFilter(tenant="t0"), 10)
                during.append(time.perf_counter() - t0)

        reader = threading.Thread(target=search_while_vacuuming)
        reader.start()
        t = time.perf_counter()
        store.optimize()
        optimize_s = time.perf_counter() - t
        done.set()
        reader.join()
        vacuumed = keyword_scores(store, queries)
        t = time.perf_counter()
        store.optimize()
        idle_s = time.perf_counter() - t
        store.close()
        t = time.perf_counter()
        store = EdgeVectorStore(folder, "c", DIM)
        reopen_s = time.perf_counter() - t
        same = keyword_scores(store, queries) == vacuumed
        for tenant, source in sources[len(gone): 2 * len(gone)]:  # as many again, cleared by the store's own reopen
            store.delete_by_source(tenant, source)
        t = time.perf_counter()
        store.refresh_keyword_weights()
        refresh_s = time.perf_counter() - t
        refreshed = keyword_scores(store, queries)
        store.close()
        store = EdgeVectorStore(folder, "c", DIM)
        same = same and keyword_scores(store, queries) == refreshed
        store.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return {"n": n, "deleted": stale, "delete_s": delete_s, "optimize_s": optimize_s, "optimize_idle_s": idle_s,
            "reopen_s": reopen_s, "refresh_keyword_weights_s": refresh_s, "search_during_p50_ms": 1000 * statistics.median(during) if during else None,
            "search_during_max_ms": 1000 * max(during) if during else None,
            "searches_during": len(during), "scores_equal_reopen": same}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--share", type=float, nargs="*", default=[0.01, 0.1])
    args = parser.parse_args(argv)
    for n in args.n:
        for share in args.share:
            row = run(n, share)
            print(" ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()), flush=True)


if __name__ == "__main__":
    main()
