"""Graph store benchmark: merge throughput and 1-/2-hop neighbourhood latency.

    python benchmarks/bench_graph_store.py                      # LadybugDB, 100k triples
    python benchmarks/bench_graph_store.py --triples 10000
    python benchmarks/bench_graph_store.py --neo4j              # the server in AGENT_MEMORY_NEO4J_URI

Data: synthetic triples over --entities entity names with skewed degrees (a few hubs,
a long tail, like extracted knowledge), 12 relation labels, 5 entity types, one
source per 10 triples, merged in calls of --call-size triples (the store batches inside).
Reports merge seconds and triples/s, exact edge count check, a re-merge of the first
call (idempotence cost), and p50/p95 of neighbourhood(hops=1|2, limit=50) from random
seed entities, and of delete_by_source.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_memory.core.records import Triple  # noqa: E402
from agent_memory.stores.ladybug_graph import LadybugGraphStore  # noqa: E402

TYPES = ("person", "organization", "place", "product", "concept")


def make_triples(n: int, n_entities: int, tenant: str, seed: int = 11) -> list[Triple]:
    rng = random.Random(seed)
    # Skewed like extracted knowledge: 20% of endpoints log-uniform over the ranks (a few
    # hubs hold thousands of relations), the rest uniform (a long tail of rare entities).
    def pick() -> int:
        if rng.random() < 0.2:
            return int(n_entities ** rng.random()) - 1
        return rng.randrange(n_entities)

    out = []
    for i in range(n):
        s, o = pick(), pick()
        if s == o:
            o = (o + 1) % n_entities
        out.append(Triple(
            subject=f"Entity {s}", relation=f"rel_{rng.randrange(12)}", object=f"Entity {o}",
            tenant=tenant, source_id=f"doc-{i // 10}", item_id=f"item-{i // 3}",
            subject_type=TYPES[s % 5], object_type=TYPES[o % 5],
            evidence=f"Entity {s} relates to Entity {o}.", confidence=round(rng.random(), 3),
        ))
    return out


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def timed(fn, *args, **kw) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn(*args, **kw)
    return time.perf_counter() - start, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--triples", type=int, default=100_000)
    ap.add_argument("--entities", type=int, default=20_000)
    ap.add_argument("--call-size", type=int, default=5_000)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--neo4j", action="store_true", help="use AGENT_MEMORY_NEO4J_URI instead of LadybugDB")
    args = ap.parse_args()

    tenant = f"bench-{uuid.uuid4().hex[:8]}"
    tmp = tempfile.TemporaryDirectory(prefix="bench-graph-")
    if args.neo4j:
        from agent_memory.stores.neo4j_graph import Neo4jGraphStore

        store = Neo4jGraphStore(
            os.environ["AGENT_MEMORY_NEO4J_URI"], os.environ.get("AGENT_MEMORY_NEO4J_USER", "neo4j"),
            os.environ.get("AGENT_MEMORY_NEO4J_PASSWORD", "neo4j"),
        )
        backend = f"neo4j ({os.environ['AGENT_MEMORY_NEO4J_URI']})"
    else:
        store = LadybugGraphStore(Path(tmp.name) / "graph")
        backend = "ladybug (embedded)"

    triples = make_triples(args.triples, args.entities, tenant)
    distinct = len({(t.subject, t.subject_type, t.relation, t.object, t.object_type, t.source_id) for t in triples})
    print(f"backend: {backend}; {args.triples} triples ({distinct} distinct), {args.entities} entity names")

    merge_s = 0.0
    for start in range(0, len(triples), args.call_size):
        dt, _ = timed(store.merge_triples, triples[start : start + args.call_size])
        merge_s += dt
    stats = store.stats(tenant)
    print(f"merge: {merge_s:.1f} s, {args.triples / merge_s:,.0f} triples/s; stats {stats}")
    assert stats["relations"] == distinct, f"edge count {stats['relations']} != {distinct} distinct triples"

    dt, _ = timed(store.merge_triples, triples[: args.call_size])
    print(f"re-merge of {args.call_size} existing triples: {dt:.2f} s ({args.call_size / dt:,.0f} triples/s); "
          f"stats unchanged: {store.stats(tenant) == stats}")

    rng = random.Random(5)
    names = store.entity_names(tenant)
    for hops in (1, 2):
        lat, sizes = [], []
        for _ in range(args.queries):
            dt, res = timed(store.neighbourhood, tenant, [rng.choice(names)], hops=hops, limit=50)
            lat.append(dt * 1000)
            sizes.append(len(res))
        print(f"neighbourhood hops={hops} limit=50: p50 {pct(lat, 0.5):.1f} ms, p95 {pct(lat, 0.95):.1f} ms, "
              f"mean result {statistics.mean(sizes):.1f} triples")

    lat = []
    for i in range(min(50, args.triples // 10)):
        dt, _ = timed(store.delete_by_source, tenant, f"doc-{i * 7}")
        lat.append(dt * 1000)
    print(f"delete_by_source: p50 {pct(lat, 0.5):.1f} ms, p95 {pct(lat, 0.95):.1f} ms")

    if args.neo4j:
        store.delete_tenant(tenant)
    store.close()
    tmp.cleanup()


if __name__ == "__main__":
    main()
