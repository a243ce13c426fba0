"""GraphStore on LadybugDB (embedded, maintained fork of Kuzu), persisted under a directory.

One process owns the database (a second opener fails), and LadybugDB admits one writer
at a time, so every call goes through one connection under one lock. Each batch of a
merge and each delete runs in an explicit transaction: a failure leaves no half batch.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any, Iterable, Sequence

import ladybug

from agent_memory.core.entities import normalize_name
from agent_memory.core.errors import StoreError, StoreUnavailableError
from agent_memory.core.records import Triple
from agent_memory.stores import cypher, cypher_statements
from agent_memory.stores.base import EntityRecord
from agent_memory.stores.snapshots import copy_file

log = logging.getLogger(__name__)

# MERGE on the key joins the batch against a scan of the whole entity table in LadybugDB: 1,000
# rows took 0.43 s at 38k entities and 1.6-2.2 s at 365k (the 100k-item scale run), so graph
# writes grew with the graph. Looking the keys up (an index seek each), then creating the new
# entities and updating the known ones, takes 0.01 + 0.07 + 0.05 s at 365k.
_EXISTING_KEYS = "UNWIND $keys AS k MATCH (e:Entity {key: k}) RETURN e.key AS key"
_CREATE_ENTITIES = (
    "UNWIND $rows AS r CREATE (e:Entity {key: r.key, tenant: r.tenant, name: r.name, normalized: r.normalized,"
    " type: r.type, source_ids: r.source_ids})"
)
_ADD_ENTITY_SOURCES = ("UNWIND $rows AS r MATCH (e:Entity {key: r.key}) SET e.source_ids = "
                       + cypher_statements.LADYBUG.list_union.format(a="e.source_ids", b="r.source_ids"))


class LadybugGraphStore(cypher.Runner):
    """Entities and relations in an embedded LadybugDB database at ``path`` (a file it creates)."""

    def __init__(self, path: str | Path, *, batch_size: int = cypher.BATCH_SIZE) -> None:
        self.path = Path(path)
        self.batch_size = batch_size
        self._q = cypher_statements.build_queries(cypher_statements.LADYBUG)
        self._lock = threading.RLock()
        self._names: dict[tuple[str, str], list[dict[str, Any]]] | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = self._open()
            self._conn = ladybug.Connection(self._db)
        except RuntimeError as exc:
            raise StoreUnavailableError(f"cannot open LadybugDB graph at {self.path}: {exc}") from exc
        for statement in cypher_statements.LADYBUG.schema:
            self._execute(statement, {})

    def _open(self) -> ladybug.Database:
        """The database, its write-ahead log replayed. A process killed while it appended to the log
        (an ingest job under SIGKILL, the OOM killer) leaves a torn last record, and a strict replay
        then refuses the whole graph ("Checksum verification failed", "Reading past the end of the
        file ....wal"). Only the transaction in flight can be torn: the log is appended in order,
        and what a killed process had written is on disk. So the log is replayed up to the torn
        record, after a copy of it is kept beside the graph and a warning names both. The catalog
        records a source only after its graph writes, so the next ingest writes the lost
        transaction's source again."""
        try:
            return ladybug.Database(str(self.path))
        except RuntimeError as exc:
            wal = self._wal(self.path)
            if not wal.exists() or "wal" not in str(exc).lower():
                raise
            kept = wal.with_name(f"{wal.name}.torn-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")
            try:
                shutil.copy2(wal, kept)
            except OSError as copy_failed:  # a full disk: say so rather than replay without the copy
                raise StoreUnavailableError(
                    f"LadybugDB graph at {self.path}: its write-ahead log ends in a torn record ({exc}), and no copy "
                    f"of it could be kept at {kept} before replaying ({copy_failed}); free space and open again"
                ) from copy_failed
            log.warning("LadybugDB graph at %s: its write-ahead log ends in a torn record (%s); replayed up to "
                        "it, the log as found kept at %s", self.path, exc, kept)
            return ladybug.Database(str(self.path), throw_on_wal_replay_failure=False)

    # -- plumbing -----------------------------------------------------------------

    def _execute(self, query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        if self._conn is None:
            raise StoreError(f"LadybugDB graph at {self.path} is closed")
        try:
            result = self._conn.execute(query, params)
        except RuntimeError as exc:
            raise StoreError(f"LadybugDB query failed ({exc}): {query[:120]}") from exc
        columns = result.get_column_names()
        rows = []
        while result.has_next():
            rows.append(dict(zip(columns, result.get_next())))
        return rows

    def read(self, query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        with self._lock:
            return self._execute(query, params)

    def _transaction(self, work) -> Any:
        with self._lock:
            self._execute("BEGIN TRANSACTION", {})
            try:
                out = work()
            except BaseException:
                self._execute("ROLLBACK", {})
                raise
            self._execute("COMMIT", {})
            return out

    # -- GraphStore ---------------------------------------------------------------

    def merge_triples(self, triples: Iterable[Triple]) -> int:
        """Upsert entities and relations; returns the number of distinct triples merged."""
        batch = cypher.prepare(triples)
        try:
            for rows in cypher.chunks(batch.entities, self.batch_size):
                self._transaction(lambda rows=rows: self._merge_entities(rows))
            for rows in cypher.chunks(batch.relations, self.batch_size):
                self._transaction(lambda rows=rows: self._execute(self._q.merge_relations, {"rows": rows}))
        except BaseException:
            with self._lock:
                self._names = None  # earlier batches may have committed: rebuild from the database
            raise
        self._index_merged(batch.entities)
        return len(batch.relations)

    def _merge_entities(self, rows: list[dict[str, Any]]) -> None:
        """What ``merge_entities`` does, in three index-driven statements (see _EXISTING_KEYS); the
        caller's transaction and the store's lock keep another writer out between them."""
        existing = {row["key"] for row in self._execute(_EXISTING_KEYS, {"keys": [r["key"] for r in rows]})}
        new = [r for r in rows if r["key"] not in existing]
        if new:
            self._execute(_CREATE_ENTITIES, {"rows": new})
        if len(new) < len(rows):
            self._execute(_ADD_ENTITY_SOURCES, {"rows": [r for r in rows if r["key"] in existing]})

    def _write_rows(self, query: str, rows: list[dict[str, Any]]) -> None:
        for chunk in cypher.chunks(rows, self.batch_size):
            self._transaction(lambda chunk=chunk: self._execute(query, {"rows": chunk}))

    def delete_by_source(self, tenant: str, source_id: str) -> int:
        """Remove the source's relations, then entities no other source supports; returns relations removed."""
        return self.delete_by_sources(tenant, [source_id])

    def delete_by_sources(self, tenant: str, source_ids: Sequence[str]) -> int:
        """``delete_by_source`` of several sources in one transaction; returns the relations removed."""
        with self._lock:
            self._names = None
            return self._transaction(lambda: cypher.delete_sources(self._execute, self._q, tenant, source_ids))

    def delete_tenant(self, tenant: str) -> int:
        """Remove everything of one tenant; returns entities removed."""

        def work() -> int:
            self._execute(self._q.delete_tenant_relations, {"tenant": tenant})
            return int(self._execute(self._q.delete_tenant_entities, {"tenant": tenant})[0]["n"])

        with self._lock:
            self._names = None
            return self._transaction(work)

    # -- entity-name index ----------------------------------------------------------
    # LadybugDB indexes primary keys only, so "normalized IN $names" scans every entity
    # (about 20 ms per question at 30k entities, twice per question: lookup and seeds).
    # This process owns the database, so an in-memory index of names stays coherent: one
    # scan builds it on first use, merges extend it, deletes drop it for a rebuild.

    def _name_index(self) -> dict[tuple[str, str], list[dict[str, Any]]]:
        with self._lock:
            if self._names is None:
                index: dict[tuple[str, str], list[dict[str, Any]]] = {}
                for row in self._execute(self._q.all_entities, {}):
                    row["source_ids"] = list(row["source_ids"] or [])
                    index.setdefault((row["tenant"], row["normalized"]), []).append(row)
                self._names = index
            return self._names

    def _index_merged(self, rows: list[dict[str, Any]]) -> None:
        with self._lock:
            if self._names is None:
                return
            for row in rows:
                entries = self._names.setdefault((row["tenant"], row["normalized"]), [])
                known = next((e for e in entries if e["key"] == row["key"]), None)
                if known is None:
                    entries.append({**row, "source_ids": list(row["source_ids"])})
                else:
                    known["source_ids"] += [s for s in row["source_ids"] if s not in known["source_ids"]]

    def _indexed(self, tenant: str, names: Iterable[str]) -> list[dict[str, Any]]:
        norms = sorted({n for n in (normalize_name(x) for x in names) if n})
        index = self._name_index()
        return [row for n in norms for row in index.get((tenant, n), ())]

    def seed_keys(self, tenant: str, normalized_names) -> list[str]:
        return [row["key"] for row in self._indexed(tenant, normalized_names)]

    def find_entities(self, tenant: str, names) -> list[EntityRecord]:
        rows = sorted(self._indexed(tenant, names), key=lambda r: (r["normalized"], r["type"]))
        return [cypher.row_to_entity(r) for r in rows]

    def snapshot_to(self, path: Path) -> None:
        """The database file at ``path``: LadybugDB has no backup call, so a checkpoint folds the write-ahead
        log into the file, which is copied while the lock keeps writes out (a log left, written since, goes
        beside it). The copy is the file as it is, the pages of deleted relations included."""
        target = Path(path)
        with self._lock:
            if self._conn is None:
                raise StoreError(f"LadybugDB graph at {self.path} is closed")
            wal, copied_wal = self._wal(self.path), self._wal(target)
            if target.exists() or copied_wal.exists():
                raise StoreError(f"LadybugDB graph: the copy's file {target} exists already")
            self._execute("CHECKPOINT", {})
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                copy_file(self.path, target)
                if wal.exists() and wal.stat().st_size:
                    copy_file(wal, copied_wal)
            except OSError as exc:
                raise StoreError(f"copying the LadybugDB graph to {target} failed: {exc}") from exc

    @staticmethod
    def _wal(path: Path) -> Path:
        return path.with_name(path.name + ".wal")

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._db.close()
                self._conn = None

    def __enter__(self) -> "LadybugGraphStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
