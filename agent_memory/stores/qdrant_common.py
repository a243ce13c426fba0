"""What the two Qdrant drivers share: the point layout, the tie order of hits, and every read,
write and paging loop of the VectorStore contract (the checks of its arguments and the filter's
conditions are ``qdrant_inputs.py``).

A driver (``qdrant_edge_store.EdgeVectorStore`` embedded, ``qdrant_server_store.
QdrantServerVectorStore`` over qdrant-client) supplies only the few primitives its client
spells differently (the ``_`` methods at the end of :class:`QdrantStore`) and the filter
constructors; the contract above them is written once here.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from agent_memory.core.errors import DimensionMismatchError, StoreError
from agent_memory.core.records import MemoryItem, ScoredItem, SearchFilter
from agent_memory.core.sparse import SparseVector
from agent_memory.stores.qdrant_inputs import (
    check_batch,
    check_context,
    check_sentences,
    filter_is_empty,
    normalize_id,
    valid_ids,
)

DENSE = "dense"
SPARSE = "sparse"
# A turn read after the turn it answers (agent_memory/index/context.py), in the turn's own space: the
# reranker's turn_context signal reads it with the candidates instead of re-embedding it.
# Every turn point carries one; other kinds do not (their context is their own text: ``dense``).
CONTEXT = "context"
# The single sentences of a long turn (agent_memory/index/sentences.py), a multivector scored by its best row
# (MaxSim): a fact said in passing inside a long request is found by the sentence that says it.
# Only such turns carry one; ``search_dense`` scores a point by the better of ``dense`` and this.
SENTENCES = "sentences"
SCROLL_PAGE = 512
# Payload fields with an index, by kind ("keyword" or "float"): every filter uses them.
SPEAKER_KEY = "metadata.speaker"  # the speaker directory (``speakers``) is a facet over it
INDEXED_FIELDS = (("tenant", "keyword"), ("source_id", "keyword"), ("kind", "keyword"), ("created_at", "float"),
                  (SPEAKER_KEY, "keyword"))
# Distinct speakers a tenant's directory reads at most: a question is matched against every one.
SPEAKER_LIMIT = 10_000
# Distinct tenants ``tenants`` reads at most (a facet over the indexed field, not a scroll of every point).
TENANT_LIMIT = 100_000


# Points of equal score come back in the engine's internal order, which differs between two stores holding
# the same items (two ingestions of one corpus recalled different items at a tie on the cut: 3 of 40 LoCoMo
# prompts differed). Ties are broken by point ID, and a tie that reaches past the cut is read whole (more
# hits asked for until the last one scores below the cut), so equal stores answer alike.
TIE_MARGIN = 16
MAX_TIE_FETCH = 4096


def by_score_then_id(fetch: Callable[[int], list], limit: int) -> list:
    """The ``limit`` best of ``fetch(n)``'s hits, best first, equal scores in point-ID order."""
    n = limit + TIE_MARGIN
    while True:
        hits = sorted(fetch(n), key=lambda h: (-float(h.score), str(h.id)))
        if len(hits) < n or len(hits) <= limit or n >= MAX_TIE_FETCH \
                or float(hits[-1].score) < float(hits[limit - 1].score):
            return hits[:limit]
        n = min(n * 4, MAX_TIE_FETCH)


class QdrantStore:
    """The VectorStore contract over a driver's primitives. ``self._lock`` serialises writes."""

    dimension: int
    where: str
    _write_batch = 256

    def __init__(self, dimension: int) -> None:
        if dimension <= 0:
            raise ValueError(f"dimension={dimension} must be positive")
        self.dimension = int(dimension)
        # Reentrant: a driver's read primitive may take it again under a write (local mode guards reads).
        self._lock = threading.RLock()
        self._closed = False

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"vector store {self.where} is closed")

    # -- writes --------------------------------------------------------------------

    def upsert(self, items: Sequence[MemoryItem], dense: np.ndarray, sparse: Sequence[SparseVector],
               context: Sequence | None = None, sentences: Sequence | None = None) -> None:
        if not items:
            return
        matrix = check_batch(items, dense, sparse, self.dimension)
        contexts = check_context(items, context, self.dimension)
        blocks = check_sentences(items, sentences, self.dimension)
        points = [self._point(normalize_id(item.id), row.tolist(), sv, item.payload(), ctx, block)
                  for item, row, sv, ctx, block in zip(items, matrix, sparse, contexts, blocks)]
        with self._lock:
            self._check_open()
            for start in range(0, len(points), self._write_batch):
                self._upsert_points(points[start : start + self._write_batch])

    def set_vectors(self, vectors: Mapping[str, Mapping[str, Sequence[float]]]) -> None:
        """Replace named dense vectors of stored points (point ID → name → vector), leaving their
        other vectors and their payload as they are (a turn's context after its previous turn changed)."""
        points = {}
        for item_id, named in vectors.items():
            checked = {}
            for name, row in named.items():
                row = np.asarray(row, dtype=np.float32).reshape(-1)
                if row.shape[0] != self.dimension:
                    raise DimensionMismatchError(f"{name} vector of {item_id} has dimension {row.shape[0]}, "
                                                 f"the store expects {self.dimension}")
                checked[name] = row.tolist()
            points[normalize_id(item_id)] = checked
        if not points:
            return
        with self._lock:
            self._check_open()
            self._update_vectors(points)

    def delete_by_source(self, tenant: str, source_id: str) -> int:
        return self.delete_where(SearchFilter(tenant=tenant, source_ids=[source_id]))

    def delete_where(self, flt: SearchFilter) -> int:
        if filter_is_empty(flt):
            return 0
        with self._lock:
            self._check_open()
            n = self._count(flt)
            if n:
                self._delete_by_filter(flt)
        return n

    def delete_ids(self, ids: Sequence[str]) -> None:
        valid = valid_ids(ids)
        if valid:
            with self._lock:
                self._check_open()
                self._delete_points(valid)

    def update_metadata(self, updates: Mapping[str, Mapping[str, Any]]) -> int:
        # An ID that is not a UUID cannot be stored, so it is skipped like any ID not stored.
        by_id = {valid: dict(values) for item_id, values in updates.items() if values
                 for valid in valid_ids([item_id])}
        if not by_id:
            return 0
        with self._lock:
            self._check_open()
            present = {str(r.id) for r in self._retrieve(list(by_id), False)}
            # One payload write per distinct set of values (a citation raises many items to the same value).
            groups: dict[str, tuple[dict[str, Any], list[str]]] = {}
            for item_id in sorted(present):
                values = by_id[item_id]
                groups.setdefault(json.dumps(values, sort_keys=True, default=str), (values, []))[1].append(item_id)
            for values, ids in groups.values():
                self._set_metadata(ids, values)
        return len(present)

    # -- reads ---------------------------------------------------------------------

    def search_dense(self, vector: np.ndarray, flt: SearchFilter, limit: int) -> list[ScoredItem]:
        return [ScoredItem(item=MemoryItem.from_payload(str(h.id), h.payload or {}), score=float(h.score))
                for h in self._dense_hits(vector, flt, limit, with_payload=True)]

    def rank_dense(self, vector: np.ndarray, flt: SearchFilter, limit: int) -> list[tuple[str, float]]:
        return [(str(h.id), float(h.score)) for h in self._dense_hits(vector, flt, limit, with_payload=False)]

    def _dense_hits(self, vector: np.ndarray, flt: SearchFilter, limit: int, *, with_payload: bool) -> list:
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if query.shape[0] != self.dimension:
            raise DimensionMismatchError(f"query vector has dimension {query.shape[0]}, the store expects {self.dimension}")
        if limit <= 0 or filter_is_empty(flt):
            return []
        self._check_open()
        # A point's score: the better of its own vector and its best sentence (a long turn's). Edge runs
        # it as one formula query (payloads read for the winners only: at 100k items as fast as the dense
        # search alone); the server driver merges two lists, as servers before Qdrant 1.20 have no max.
        return by_score_then_id(lambda n: self._nearest_best(query.tolist(), flt, n, with_payload), limit)

    def search_sparse(self, vector: SparseVector, flt: SearchFilter, limit: int) -> list[ScoredItem]:
        if not len(vector):
            return []  # a query of stopwords only matches nothing
        return self._search(self._sparse(vector), SPARSE, flt, limit)

    def _search(self, query, using: str, flt: SearchFilter, limit: int) -> list[ScoredItem]:
        if limit <= 0 or filter_is_empty(flt):
            return []
        self._check_open()
        hits = by_score_then_id(lambda n: self._nearest(query, using, flt, n), limit)
        return [ScoredItem(item=MemoryItem.from_payload(str(h.id), h.payload or {}), score=float(h.score))
                for h in hits]

    def get(self, ids: Sequence[str]) -> list[MemoryItem]:
        valid = valid_ids(ids)
        if not valid:
            return []
        self._check_open()
        by_id = {str(r.id): MemoryItem.from_payload(str(r.id), r.payload or {}) for r in self._retrieve(valid, True)}
        return [by_id[i] for i in dict.fromkeys(valid) if i in by_id]

    def get_vectors(self, ids: Sequence[str], names: Sequence[str] = (DENSE, CONTEXT)) -> dict[str, dict[str, np.ndarray]]:
        """The named dense vectors of the points ``ids`` (one batched read); a point without one of
        ``names`` (a chunk has no ``context``) just lacks that key; a missing point is absent."""
        valid = valid_ids(ids)
        if not valid:
            return {}
        self._check_open()
        out: dict[str, dict[str, np.ndarray]] = {}
        for record in self._retrieve_vectors(valid, list(names)):
            stored = record.vector if isinstance(record.vector, dict) else {}
            out[str(record.id)] = {name: np.asarray(stored[name], dtype=np.float32) for name in names if stored.get(name)}
        return out

    def score_ids(self, vector: np.ndarray, ids: Sequence[str], using: str = CONTEXT) -> dict[str, float]:
        """Cosine of ``vector`` with the named vector ``using`` of each point in ``ids``, computed by
        the store (no vector leaves it: for a few hundred candidates this is ~1 ms where reading their
        vectors back into Python costs tens); a point without that vector is absent."""
        valid = valid_ids(ids)
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if query.shape[0] != self.dimension:
            raise DimensionMismatchError(f"query vector has dimension {query.shape[0]}, the store expects {self.dimension}")
        if not valid:
            return {}
        self._check_open()
        rows = [query.tolist()] if using == SENTENCES else query.tolist()  # a multivector query
        return {str(h.id): float(h.score) for h in self._nearest_among(rows, using, valid)}

    def existing_ids(self, ids: Sequence[str]) -> set[str]:
        valid = valid_ids(ids)
        if not valid:
            return set()
        self._check_open()
        return {str(r.id) for r in self._retrieve(valid, False)}

    def ids_for_source(self, tenant: str, source_id: str) -> list[str]:
        return [str(r.id) for r in self._scroll_records(SearchFilter(tenant=tenant, source_ids=[source_id]), False)]

    def count(self, flt: SearchFilter | None = None) -> int:
        if flt is not None and filter_is_empty(flt):
            return 0
        self._check_open()
        return int(self._count(flt))

    def speakers(self, tenant: str) -> set[str]:
        self._check_open()
        found = map(str, self._facet(SPEAKER_KEY, SearchFilter(tenant=tenant, kinds=["turn"]), SPEAKER_LIMIT))
        return {name for name in found if name}

    def scroll(self, flt: SearchFilter) -> Iterator[MemoryItem]:
        for record in self._scroll_records(flt, True):
            yield MemoryItem.from_payload(str(record.id), record.payload or {})

    def tenants(self) -> set[str]:
        self._check_open()
        return {str(value) for value in self._facet("tenant", None, TENANT_LIMIT) if value}

    def source_points(self, flt: SearchFilter) -> Iterator[tuple[str, str]]:
        for record in self._scroll_records(flt, ["source_id"]):
            yield str((record.payload or {}).get("source_id", "")), str(record.id)

    def _scroll_records(self, flt: SearchFilter, with_payload: bool | list[str]) -> Iterator:
        if filter_is_empty(flt):
            return
        offset = None
        while True:
            self._check_open()
            records, offset = self._scroll_page(flt, offset, with_payload)
            yield from records
            if offset is None:
                return

    def refresh_keyword_weights(self) -> int:
        """Make the keyword weighting count the live points only; returns how many deleted points it counted.
        Local mode counts the live points at once: nothing to do (Qdrant Edge: ``EdgeVectorStore``; a Qdrant
        server: ``QdrantServerVectorStore``)."""
        return 0

    # -- lifecycle -------------------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- what a driver supplies ------------------------------------------------------

    def _point(self, point_id: str, dense: list[float], sparse: SparseVector, payload: dict,
               context: list[float] | None, sentences: list[list[float]] | None) -> Any:
        raise NotImplementedError

    def _sparse(self, vector: SparseVector) -> Any:
        raise NotImplementedError

    def _upsert_points(self, points: list) -> None:
        raise NotImplementedError

    def _update_vectors(self, points: dict[str, dict[str, list[float]]]) -> None:
        raise NotImplementedError

    def _delete_by_filter(self, flt: SearchFilter) -> None:
        raise NotImplementedError

    def _delete_points(self, ids: list[str]) -> None:
        raise NotImplementedError

    def _set_metadata(self, ids: list[str], values: dict[str, Any]) -> None:
        """Set ``values``' keys inside the ``metadata`` object of these points' payloads."""
        raise NotImplementedError

    def _nearest(self, query, using: str, flt: SearchFilter, limit: int) -> list:
        raise NotImplementedError

    def _nearest_best(self, query: list[float], flt: SearchFilter, limit: int, with_payload: bool) -> list:
        """Scored points, with their payloads when asked: the ``limit`` best by the better of
        ``query``'s cosine with ``DENSE`` and its best cosine with a row of ``SENTENCES`` (a point
        without sentences: DENSE)."""
        raise NotImplementedError

    def _retrieve(self, ids: list[str], with_payload: bool) -> list:
        raise NotImplementedError

    def _nearest_among(self, query: list, using: str, ids: list[str]) -> list:
        """Scored points (no payload) of ``ids`` against ``query`` on the named vector ``using``."""
        raise NotImplementedError

    def _retrieve_vectors(self, ids: list[str], names: list[str]) -> list:
        """Records (no payload) with the named vectors ``names``, as a dict in ``record.vector``."""
        raise NotImplementedError

    def _count(self, flt: SearchFilter | None) -> int:
        raise NotImplementedError

    def _scroll_page(self, flt: SearchFilter, offset, with_payload: bool | list[str]) -> tuple[list, Any]:
        """A page of records; ``with_payload``: all of it, none, or the payload keys named."""
        raise NotImplementedError

    def _facet(self, key: str, flt: SearchFilter | None, limit: int) -> list:
        """The distinct values of the indexed payload ``key`` among the points ``flt`` selects (None: all)."""
        raise NotImplementedError

    def _close(self) -> None:
        raise NotImplementedError
