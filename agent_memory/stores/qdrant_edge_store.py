"""VectorStore on Qdrant Edge: Qdrant's own engine, in-process, persisted under a path.

Layout: one Edge shard per collection (= per embedding model) at ``<path>/<collection>``,
with a named dense vector ``dense`` (cosine), a named dense vector ``context`` (cosine: a
turn read after the turn it answers, on turn points only) and a named sparse vector
``sparse`` whose IDF modifier makes keyword scores BM25 over the whole collection. A shard
created before ``context`` existed gets it on open (its old turns lack it until
``agent-memory reindex``; the reranker embeds theirs on demand meanwhile).

Search is exact (plain index): no HNSW graph is built, because on a 2-core machine the
build costs minutes at 100k points while exact search over keyword-indexed filters
stays at a few ms at 5k and tens of ms at 100k (see benchmarks/bench_vector_store.py).

A deleted point keeps counting in the keyword weighting until the shard is loaded again; once the deleted
share passes ``reopen_share`` the shard is reopened in the background (edge_reload.py).
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import qdrant_edge as qe

from agent_memory.core.diskspace import check_free
from agent_memory.core.errors import DimensionMismatchError, StoreError, StoreUnavailableError
from agent_memory.core.records import SearchFilter
from agent_memory.core.sparse import SparseVector
from agent_memory.stores.edge_reload import Debounced, SwapGuard
from agent_memory.stores.qdrant_common import (  # noqa: F401 - re-exported: older imports name them here
    CONTEXT,
    DENSE,
    INDEXED_FIELDS,
    SCROLL_PAGE,
    SENTENCES,
    SPARSE,
    QdrantStore,
)
from agent_memory.stores.qdrant_inputs import (  # noqa: F401 - re-exported: older imports name them here
    check_batch,
    filter_conditions,
    filter_is_empty,
    normalize_id,
    valid_ids,
)
from agent_memory.stores.snapshots import copy_tree

_CONFIG_FILE = "edge_config.json"
# Indexing threshold in KB of vectors per segment (~650k 384-d float32 vectors): optimize()
# merges and vacuums segments but does not build HNSW below that, so search stays exact.
_INDEXING_THRESHOLD_KB = 1_000_000
_MAX_SIM = qe.MultiVectorConfig(qe.MultiVectorComparator.MaxSim)
_SCHEMA = {"keyword": qe.PayloadSchemaType.Keyword, "float": qe.PayloadSchemaType.Float}
# The scores of the two prefetches (DENSE, SENTENCES) in the dense search's formula query; a point one
# of them did not return takes the default, below any cosine.
BEST_OF = ("$score[0]", "$score[1]")
NOT_FOUND = -2.0
# What a new shard takes on disk at once, beyond the reserve every write keeps free: measured (du) on a fresh
# data dir holding one note, each collection took 46.3 MiB on tmpfs, where the in-memory payload storage
# persists into a 32 MB page at once (on ext4 its files stay sparse, under 1 MB, until written). Touching a
# page the filesystem cannot back kills the process with SIGBUS: a new collection is refused before.
NEW_SHARD_MB = 48


class EdgeVectorStore(QdrantStore):
    """Dense + sparse vectors with payloads in an embedded Qdrant Edge shard."""

    _write_batch = 512

    def __init__(self, path: str | Path, collection: str, dimension: int, *, in_memory: bool = True,
                 reserve_mb: int = 0, reopen_share: float | None = None):
        """``reserve_mb``: the free space every write keeps (settings.min_free_mb); creating a shard needs
        ``NEW_SHARD_MB`` more, or is refused (0: no check). ``reopen_share``: the share of deleted points the
        keyword weighting may still count before a delete has the shard reopened in the background
        (settings.edge_reopen_deleted_share; None: only :meth:`refresh_keyword_weights` does)."""
        super().__init__(dimension)  # the lock serialises writes: Edge serialises nothing for us
        self.collection = collection
        self.reserve_mb = reserve_mb
        # A new shard's payloads and sparse index in memory: read from mmap'd files, a cold tenant's
        # keyword search took 500-775 major page faults (54-81 ms) where the OS keeps little page cache.
        self.in_memory = in_memory
        self.path = Path(path) / collection
        self.where = str(self.path)
        self.reopen_share = reopen_share
        self._guard = SwapGuard()
        self._reopener = Debounced(self.refresh_keyword_weights, f"reopening Qdrant Edge shard {collection}")
        self._lost: Exception | None = None  # why a reopen left no shard open
        self._shard = self._open()

    # -- opening -----------------------------------------------------------------

    def _config(self) -> qe.EdgeConfig:
        # Off (None): Edge's defaults, as every shard before the setting was created (payloads on disk, "cold").
        on_disk = False if self.in_memory else None
        return qe.EdgeConfig(
            vectors={**{name: qe.EdgeVectorParams(size=self.dimension, distance=qe.Distance.Cosine)
                        for name in (DENSE, CONTEXT)},
                     SENTENCES: qe.EdgeVectorParams(size=self.dimension, distance=qe.Distance.Cosine,
                                                    multivector_config=_MAX_SIM)},
            sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf, on_disk=on_disk)},
            on_disk_payload=on_disk,
            optimizers=qe.EdgeOptimizersConfig(indexing_threshold=_INDEXING_THRESHOLD_KB),
        )

    def _open(self) -> qe.EdgeShard:
        config_file = self.path / _CONFIG_FILE
        try:
            if config_file.exists():
                existing = self._stored_dimension(config_file)
                if existing is not None and existing != self.dimension:
                    raise DimensionMismatchError(
                        f"collection {self.collection!r} at {self.path} holds {existing}-d vectors, "
                        f"the embedder produces {self.dimension}-d"
                    )
                shard = qe.EdgeShard.load(str(self.path))
            else:
                check_free(self.path.parent, self.reserve_mb, f"creating the vector collection {self.collection!r}",
                           need_mb=NEW_SHARD_MB, needed_for="a new collection's memory-mapped files")
                self.path.mkdir(parents=True, exist_ok=True)
                shard = qe.EdgeShard.create(str(self.path), self._config())
        except StoreError:  # a dimension mismatch, a disk too full for a new shard: already worded
            raise
        except Exception as exc:  # the binding raises plain Exception for runtime errors
            if "WouldBlock" in str(exc):
                raise StoreUnavailableError(f"Qdrant Edge shard {self.path} is locked by another process or store: {exc}") from exc
            raise StoreUnavailableError(f"cannot open Qdrant Edge shard at {self.path}: {exc}{open_advice(exc, self.path)}") from exc
        stored = self._stored_vectors(config_file) if config_file.exists() else {CONTEXT, SENTENCES}
        if CONTEXT not in stored:
            # A shard from before turn-context vectors: add the named vector (no point is rewritten).
            shard.update(qe.UpdateOperation.create_dense_vector(CONTEXT, self.dimension, qe.Distance.Cosine))
        if SENTENCES not in stored:  # likewise for sentence vectors (agent_memory/index/sentences.py)
            shard.update(qe.UpdateOperation.create_dense_vector(SENTENCES, self.dimension, qe.Distance.Cosine,
                                                                multivector_config=_MAX_SIM))
        existing_indexes = set(shard.info().payload_schema)
        for field, kind in INDEXED_FIELDS:
            if field not in existing_indexes:
                shard.update(qe.UpdateOperation.create_field_index(field, _SCHEMA[kind]))
        return shard

    @staticmethod
    def _stored_vectors(config_file: Path) -> set[str]:
        try:
            return set(json.loads(config_file.read_text(encoding="utf-8"))["vectors"])
        except (OSError, ValueError, KeyError, TypeError):
            return {CONTEXT, SENTENCES}  # unreadable config: do not try to change a shard we cannot read

    @staticmethod
    def _stored_dimension(config_file: Path) -> int | None:
        try:
            data = json.loads(config_file.read_text(encoding="utf-8"))
            return int(data["vectors"][DENSE]["size"])
        except (OSError, ValueError, KeyError, TypeError):
            return None  # unreadable config: let EdgeShard.load judge compatibility

    # -- the primitives QdrantStore builds on ------------------------------------

    def _point(self, point_id: str, dense: list[float], sparse: SparseVector, payload: dict,
               context: list[float] | None, sentences: list[list[float]] | None) -> qe.Point:
        vectors = {DENSE: dense, SPARSE: self._sparse(sparse)}
        if context is not None:
            vectors[CONTEXT] = context
        if sentences is not None:
            vectors[SENTENCES] = sentences
        return qe.Point(point_id, vectors, payload)

    def _sparse(self, vector: SparseVector) -> qe.SparseVector:
        return qe.SparseVector(list(vector.indices), list(vector.values))

    def _upsert_points(self, points: list) -> None:
        self._update(qe.UpdateOperation.upsert_points(points))

    def _update_vectors(self, points: dict[str, dict[str, list[float]]]) -> None:
        self._update(qe.UpdateOperation.update_vectors([qe.PointVectors(i, v) for i, v in points.items()]))

    def _delete_by_filter(self, flt: SearchFilter) -> None:
        self._update(qe.UpdateOperation.delete_points_by_filter(edge_filter(flt)))
        self._after_delete()

    def _delete_points(self, ids: list[str]) -> None:
        self._update(qe.UpdateOperation.delete_points(ids))
        self._after_delete()

    def _set_metadata(self, ids: list[str], values: dict) -> None:
        self._update(qe.UpdateOperation.set_payload(ids, values, "metadata"))  # the key: a nested path

    def _update(self, op: qe.UpdateOperation) -> None:
        try:
            self._shard.update(op)
        except Exception as exc:
            raise StoreError(f"Qdrant Edge update failed on {self.path}: {exc}") from exc

    def _nearest(self, query, using: str, flt: SearchFilter, limit: int) -> list:
        request = qe.QueryRequest(limit=limit, query=qe.Query.Nearest(query, using=using), filter=edge_filter(flt),
                                  with_payload=True, with_vector=False)
        try:
            with self._guard.reading():
                return self._shard.query(request)
        except Exception as exc:
            raise StoreError(f"Qdrant Edge query failed on {self.path}: {exc}") from exc

    def _nearest_best(self, query: list[float], flt: SearchFilter, limit: int, with_payload: bool) -> list:
        where = edge_filter(flt)
        prefetches = [qe.Prefetch(limit=limit, query=qe.Query.Nearest(query, using=DENSE), filter=where),
                      qe.Prefetch(limit=limit, query=qe.Query.Nearest([query], using=SENTENCES), filter=where)]
        best = qe.Formula(qe.Expression.Max([qe.Expression.Variable(v) for v in BEST_OF]),
                          defaults={v: NOT_FOUND for v in BEST_OF})
        request = qe.QueryRequest(limit=limit, query=best, prefetches=prefetches, with_payload=with_payload,
                                  with_vector=False)
        try:
            with self._guard.reading():
                return self._shard.query(request)
        except Exception as exc:
            raise StoreError(f"Qdrant Edge query failed on {self.path}: {exc}") from exc

    def _retrieve(self, ids: list[str], with_payload: bool) -> list:
        with self._guard.reading():
            return self._shard.retrieve(ids, with_payload, False)

    def _nearest_among(self, query: list, using: str, ids: list[str]) -> list:
        request = qe.QueryRequest(limit=len(ids), query=qe.Query.Nearest(query, using=using),
                                  filter=qe.Filter(must=[qe.HasIdCondition(set(ids))]), with_payload=False,
                                  with_vector=False)
        try:
            with self._guard.reading():
                return self._shard.query(request)
        except Exception as exc:
            raise StoreError(f"Qdrant Edge query failed on {self.path}: {exc}") from exc

    def _retrieve_vectors(self, ids: list[str], names: list[str]) -> list:
        try:
            with self._guard.reading():
                return self._shard.retrieve(ids, False, names)
        except Exception as exc:
            raise StoreError(f"Qdrant Edge retrieve failed on {self.path}: {exc}") from exc

    def _count(self, flt: SearchFilter | None) -> int:
        request = qe.CountRequest(exact=True, filter=edge_filter(flt) if flt is not None else None)
        with self._guard.reading():
            return self._shard.count(request)

    def _facet(self, key: str, flt: SearchFilter | None, limit: int) -> list:
        where = edge_filter(flt) if flt is not None else None
        try:
            with self._guard.reading():
                hits = self._shard.facet(qe.FacetRequest(key, limit=limit, filter=where)).hits
            return [hit.value for hit in hits]
        except Exception as exc:
            raise StoreError(f"Qdrant Edge facet failed on {self.path}: {exc}") from exc

    def _scroll_page(self, flt: SearchFilter, offset, with_payload: bool | list[str]):
        request = qe.ScrollRequest(offset=offset, limit=SCROLL_PAGE, filter=edge_filter(flt),
                                   with_payload=with_payload, with_vector=False)
        with self._guard.reading():
            return self._shard.scroll(request)

    def _close(self) -> None:
        self._reopener.stop()  # the next open loads the shard afresh anyway
        if self._lost is not None:
            return
        try:
            self._shard.flush()
        finally:
            self._shard.close()

    def _check_open(self) -> None:
        super()._check_open()
        if self._lost is not None:
            raise StoreUnavailableError(f"Qdrant Edge shard {self.path} could not be reopened after deletes: "
                                        f"{self._lost}; restart the process{open_advice(self._lost, self.path)}")

    # -- maintenance ---------------------------------------------------------------

    def _after_delete(self) -> None:
        """Under the write lock, after a delete: past ``reopen_share``, a reopen once deletes have settled."""
        if self.reopen_share is not None and self.reopen_share < 1 and self.deleted_share() >= self.reopen_share:
            self._reopener.request()

    def _deleted_counted(self) -> tuple[int, int]:
        """How many deleted points the keyword weighting still counts, of how many it counts."""
        info = self._shard.info()
        return max(0, info.indexed_vectors_count - info.points_count), info.indexed_vectors_count

    def deleted_share(self) -> float:
        """The share of the points the keyword weighting counts that are deleted (0: it counts the live ones)."""
        self._check_open()
        with self._guard.reading():
            deleted, counted = self._deleted_counted()
        return deleted / counted if counted else 0.0

    def refresh_keyword_weights(self) -> int:
        """Reopen the shard when the keyword weighting still counts deleted points, so that a keyword search
        scores as a fresh collection of the live points would; writes wait, and reads wait for the new shard
        (0.16 s at 10k points, 0.84 s at 100k). Returns how many deleted points were counted (0: nothing done)."""
        with self._lock:
            if self._closed or self._lost is not None:
                return 0
            counted, _ = self._deleted_counted()
            if not counted:
                return 0
            with self._guard.swapping():
                try:
                    self._shard.flush()
                    self._shard.close()
                    self._shard = self._load_again()
                except Exception as exc:  # the binding raises plain Exception for runtime errors
                    self._lost = exc
                    raise StoreUnavailableError(f"Qdrant Edge shard {self.path} could not be reopened: {exc}") from exc
            return counted

    def _load_again(self) -> qe.EdgeShard:
        try:
            return qe.EdgeShard.load(str(self.path))
        except Exception:  # once more: the lock of the shard just closed may be released a moment late
            time.sleep(0.05)
            return qe.EdgeShard.load(str(self.path))

    def optimize(self) -> bool:
        """Merge segments and drop deleted points (blocking; call it from maintenance, not per request)."""
        with self._lock:
            self._check_open()
            return bool(self._shard.optimize())

    def flush(self) -> None:
        with self._lock:
            self._check_open()
            self._shard.flush()

    def snapshot_to(self, path: Path) -> None:
        """The shard's files at ``path/<collection>``: Qdrant Edge has no snapshot call, so its pending writes
        are flushed and its files copied while the lock keeps writes out (reads go on; they write nothing).
        The copy is the shard as it is, its write-ahead log and the pages of deleted points included."""
        target = Path(path) / self.collection
        with self._lock:
            self._check_open()
            if target.exists():
                raise StoreError(f"Qdrant Edge shard {self.collection}: the copy's folder {target} exists already")
            try:
                self._shard.flush()
                copy_tree(self.path, target)
            except OSError as exc:
                raise StoreError(f"copying Qdrant Edge shard {self.collection} to {target} failed: {exc}") from exc
            except Exception as exc:  # the binding raises plain Exception for runtime errors
                raise StoreError(f"Qdrant Edge flush failed on {self.path}: {exc}") from exc

    def drop(self) -> None:
        """Close the shard and remove its folder: a collection no embedding space reads any more (reindex)."""
        self.close()
        shutil.rmtree(self.path)

    def __repr__(self) -> str:
        return f"EdgeVectorStore(path={str(self.path)!r}, dimension={self.dimension})"


def open_advice(exc: Exception, path: Path) -> str:
    """What to do about a shard that does not open, as the end of its error: free space, fix permissions, or
    (anything else: its files are damaged or incomplete) restore a backup or rebuild the collection."""
    text = str(exc).lower()
    if "no space" in text or "disk full" in text:
        return ": free disk space where the data dir is, then run the command again"
    if "permission denied" in text or "read-only" in text:
        return f": check the permissions of {path} and the files under it: this process must be able to write them"
    return (f": its files are damaged or incomplete. Restore the data dir from a backup (the whole folder, copied "
            f"while nothing ran); or move {path} aside, run `agent-memory check --repair` (it marks every source "
            "whose items are gone) and ingest again the files it lists")


def edge_filter(flt: SearchFilter) -> qe.Filter:
    """SearchFilter -> Edge filter (conditions from :func:`filter_conditions`)."""
    return qe.Filter(must=filter_conditions(
        flt,
        equals=lambda key, value: qe.FieldCondition(key, match=qe.MatchValue(value)),
        any_of=lambda key, values: qe.FieldCondition(key, match=qe.MatchAny(values)),
        between=lambda key, low, high: qe.FieldCondition(key, range=qe.RangeFloat(gte=low, lte=high)),
        dates=lambda key, low, high: qe.FieldCondition(key, range=qe.RangeDateTime(gte=low, lte=high)),
    ))
