"""Entity writes into LadybugDB as the graph grows: MERGE on the key beside the store's key lookup
+ CREATE + update, side by side on the same database at each size.

    python benchmarks/bench_graph_writes.py                         # grows a fresh graph to 400k entities
    python benchmarks/bench_graph_writes.py --graph /tmp/copy/graph # measures on a copy of a real graph

At each size a batch of --batch new entities and a batch of the same number of known ones (their
source lists extended) are written once with the Cypher ``MERGE ... ON CREATE / ON MATCH`` that the
Neo4j driver uses, and once (other keys, same shapes) with ``LadybugGraphStore._merge_entities``.
Each write runs in its own transaction after a checkpoint; the ratio MERGE / store is printed per size. Never point
--graph at a live data dir: both paths write into it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_memory.core.records import Triple  # noqa: E402
from agent_memory.stores import cypher  # noqa: E402
from agent_memory.stores.ladybug_graph import LadybugGraphStore  # noqa: E402


def entity_rows(tag: str, n: int) -> list[dict]:
    triples = [Triple(subject=f"{tag} subject {i}", relation="r", object=f"{tag} object {i}", tenant="bench",
                      source_id=f"bench/{tag}/{i // 10}", item_id=f"{tag}-{i}", evidence="-", confidence=0.5)
               for i in range(n // 2)]
    return cypher.prepare(triples).entities


def timed_write(store: LadybugGraphStore, write, rows: list[dict]) -> float:
    store._execute("CHECKPOINT", {})  # neither path pays for the other's (or the fill's) write-ahead log
    started = time.perf_counter()
    store._transaction(lambda: write(rows))
    return time.perf_counter() - started


def measure(store: LadybugGraphStore, batch: int, round_no: int) -> dict:
    merge = lambda rows: store._execute(store._q.merge_entities, {"rows": rows})  # noqa: E731
    out = {}
    for name, write in (("merge", merge), ("store", store._merge_entities)):
        new = entity_rows(f"{name}{round_no}", batch)
        t_new = timed_write(store, write, new)
        for row in new:
            row["source_ids"] = ["bench/other"]
        t_known = timed_write(store, write, new)
        out[name] = (t_new, t_known)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", type=Path, help="a COPY of a data dir's graph (default: a fresh one, grown here)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[25_000, 100_000, 400_000],
                    help="entity counts to grow a fresh graph to (ignored with --graph)")
    ap.add_argument("--batch", type=int, default=1000)
    args = ap.parse_args()
    tmp = None
    if args.graph is None:
        tmp = tempfile.TemporaryDirectory(prefix="bench-graph-writes-")
        path = Path(tmp.name) / "graph"
    else:
        path = args.graph
    store = LadybugGraphStore(path)
    sizes = [None] if args.graph is not None else args.sizes
    print(f"{'entities':>9} | {'MERGE new / known (s)':>22} | {'store new / known (s)':>22} | MERGE ÷ store")
    grown = 0
    for round_no, size in enumerate(sizes):
        while size is not None and grown < size:  # grow with the store's own writes (fast path)
            step = min(50_000, size - grown)
            rows = entity_rows(f"fill{grown}", step)
            store._transaction(lambda rows=rows: store._merge_entities(rows))
            grown += step
        count = store._execute("MATCH (e:Entity) RETURN count(*) AS n", {})[0]["n"]
        result = measure(store, args.batch, round_no)
        (m_new, m_known), (s_new, s_known) = result["merge"], result["store"]
        print(f"{count:>9} | {m_new:>10.3f} / {m_known:<9.3f} | {s_new:>10.3f} / {s_known:<9.3f} | "
              f"{(m_new + m_known) / max(s_new + s_known, 1e-9):.1f}x")
    store.close()
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
