"""Copy a data dir whose Qdrant Edge collections were created with one layout into a new data dir whose
collections are created the way the driver creates them now (``--in-memory`` or ``--on-disk``), point for
point: the same IDs, vectors, sparse vectors and payloads; the catalog, graph and caches copied as files.
Two copies made by this script differ only in the layout, so a latency difference between them is the
layout's (a copy's points are in the source's scroll order, not its ingestion order: compare copy to copy).

    python benchmarks/copy_edge_store.py /tmp/s100k /tmp/s100k-inmem --in-memory
    python benchmarks/copy_edge_store.py /tmp/s100k /tmp/s100k-ondisk --on-disk
    python benchmarks/bench_scale.py --sizes 100000 --questions 100 --encode-sample 16 --data-dir /tmp/s100k-inmem --out F
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

import qdrant_edge as qe

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_memory.stores.qdrant_edge_store import EdgeVectorStore  # noqa: E402

EDGE = "qdrant-edge"
SKIP = {EDGE, "owner.lock", "ingest.lock"}


def copy_collection(source: Path, target_root: Path, in_memory: bool) -> int:
    dimension = json.loads((source / "edge_config.json").read_text(encoding="utf-8"))["vectors"]["dense"]["size"]
    with EdgeVectorStore(target_root, source.name, dimension, in_memory=in_memory):
        pass  # created with the driver's layout and payload indexes
    old, new = qe.EdgeShard.load(str(source)), qe.EdgeShard.load(str(target_root / source.name))
    copied, offset = 0, None
    try:
        while True:
            records, offset = old.scroll(qe.ScrollRequest(offset=offset, limit=512, with_payload=True, with_vector=True))
            if records:
                new.update(qe.UpdateOperation.upsert_points([qe.Point(r.id, r.vector, r.payload) for r in records]))
                copied += len(records)
            if not records or offset is None:
                break
        new.optimize()
        new.flush()
    finally:
        old.close()
        new.close()
    return copied


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", type=Path)
    parser.add_argument("target", type=Path)
    layout = parser.add_mutually_exclusive_group(required=True)
    layout.add_argument("--in-memory", action="store_true")
    layout.add_argument("--on-disk", action="store_true")
    args = parser.parse_args()
    if args.target.exists():
        parser.error(f"{args.target} exists")
    (args.target / EDGE).mkdir(parents=True)
    for entry in args.source.iterdir():
        if entry.name not in SKIP:
            (shutil.copytree if entry.is_dir() else shutil.copy2)(entry, args.target / entry.name)
    for collection in sorted((args.source / EDGE).iterdir()):
        started = time.perf_counter()
        n = copy_collection(collection, args.target / EDGE, args.in_memory)
        print(f"{collection.name}: {n} points in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
