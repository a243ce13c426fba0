"""VectorStore over qdrant-client: a real Qdrant server, or qdrant-client's local mode.

Server mode (``url=``) is the production path when AGENT_MEMORY_QDRANT_URL is set.
Local mode (``path=`` or ``location=":memory:"``) is qdrant-client's pure-Python
brute-force engine: correct, handy for tests and tiny data sets, but about a second
per filtered search at 100k points, so the embedded default is Qdrant Edge instead.

Same layout as the Edge store: named dense vector ``dense`` (cosine) and sparse vector
``sparse`` with the IDF modifier, payload indexes on tenant/source_id/kind/created_at.
"""

from __future__ import annotations

import threading
from contextlib import nullcontext
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np
from qdrant_client import QdrantClient, models

from ..errors import DimensionMismatchError, StoreError, StoreUnavailableError
from ..records import MemoryItem, ScoredItem, SearchFilter
from .base import SparseVector
from .qdrant_edge_store import DENSE, SPARSE, _valid_ids, check_batch, filter_is_empty, normalize_id

_BATCH = 256
_SCROLL_PAGE = 512
_INDEXES = (
    ("tenant", models.PayloadSchemaType.KEYWORD),
    ("source_id", models.PayloadSchemaType.KEYWORD),
    ("kind", models.PayloadSchemaType.KEYWORD),
    ("created_at", models.PayloadSchemaType.FLOAT),
)


class QdrantServerVectorStore:
    """Dense + sparse vectors with payloads in a Qdrant collection reached by qdrant-client."""

    def __init__(
        self,
        collection: str,
        dimension: int,
        *,
        url: str | None = None,
        api_key: str | None = None,
        location: str | None = None,
        path: str | Path | None = None,
        timeout: float = 10.0,
    ):
        if dimension <= 0:
            raise ValueError(f"dimension={dimension} must be positive")
        if sum(x is not None for x in (url, location, path)) != 1:
            raise ValueError(f"give exactly one of url={url!r}, location={location!r}, path={path!r}")
        self.dimension = int(dimension)
        self.collection = collection
        self.local = url is None
        self.where = url or location or str(path)
        # Local mode mutates plain Python structures: serialise everything there.
        # Against a server only writes are serialised; concurrent searches are fine.
        self._lock = threading.Lock()
        self._read_guard = self._lock if self.local else None
        try:
            if url is not None:
                # The version probe would cost a round trip; the first real call reports failures.
                self._client = QdrantClient(url=url, api_key=api_key, timeout=timeout, check_compatibility=False)
            elif location is not None:
                self._client = QdrantClient(location=location)
            else:
                Path(path).mkdir(parents=True, exist_ok=True)
                self._client = QdrantClient(path=str(path))
        except Exception as exc:  # local mode: folder locked by another client
            raise StoreUnavailableError(f"cannot open Qdrant at {self.where}: {exc}") from exc
        self._closed = False
        self._ensure_collection()

    # -- setup ---------------------------------------------------------------------

    def _ensure_collection(self) -> None:
        try:
            exists = self._client.collection_exists(self.collection)
            if exists:
                info = self._client.get_collection(self.collection)
                vectors = info.config.params.vectors
                size = vectors[DENSE].size if isinstance(vectors, dict) and DENSE in vectors else None
                if size is None:
                    raise StoreError(f"collection {self.collection!r} at {self.where} has no dense vector named {DENSE!r}")
                if size != self.dimension:
                    raise DimensionMismatchError(
                        f"collection {self.collection!r} at {self.where} holds {size}-d vectors, "
                        f"the embedder produces {self.dimension}-d"
                    )
            else:
                self._client.create_collection(
                    self.collection,
                    vectors_config={DENSE: models.VectorParams(size=self.dimension, distance=models.Distance.COSINE)},
                    sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
                )
            if not self.local:  # local mode has no payload indexes (it would only log a warning)
                schema = info.payload_schema if exists else {}
                for field, kind in _INDEXES:
                    if field not in schema:
                        self._client.create_payload_index(self.collection, field, field_schema=kind, wait=True)
        except StoreError:
            raise
        except Exception as exc:
            raise self._error("open collection", exc) from exc

    def _error(self, what: str, exc: Exception) -> StoreError:
        text = f"Qdrant {what} failed for collection {self.collection!r} at {self.where}: {exc}"
        if _is_connection_error(exc):
            return StoreUnavailableError(text)
        return StoreError(text)

    def _call(self, what: str, fn, *args, write: bool = False, **kwargs):
        if self._closed:
            raise StoreError(f"vector store {self.where}/{self.collection} is closed")
        guard = self._lock if write else (self._read_guard or nullcontext())
        with guard:
            try:
                return fn(*args, **kwargs)
            except Exception as exc:
                raise self._error(what, exc) from exc

    # -- writes --------------------------------------------------------------------

    def upsert(self, items: Sequence[MemoryItem], dense: np.ndarray, sparse: Sequence[SparseVector]) -> None:
        if not items:
            return
        matrix = check_batch(items, dense, sparse, self.dimension)
        points = [
            models.PointStruct(
                id=normalize_id(item.id),
                vector={DENSE: row.tolist(), SPARSE: models.SparseVector(indices=list(sv.indices), values=list(sv.values))},
                payload=item.payload(),
            )
            for item, row, sv in zip(items, matrix, sparse)
        ]
        for start in range(0, len(points), _BATCH):
            self._call("upsert", self._client.upsert, self.collection, points[start : start + _BATCH], wait=True, write=True)

    def delete_by_source(self, tenant: str, source_id: str) -> int:
        flt = qdrant_filter(SearchFilter(tenant=tenant, source_ids=[source_id]))
        n = self._call("count", self._client.count, self.collection, count_filter=flt, exact=True).count
        if n:
            selector = models.FilterSelector(filter=flt)
            self._call("delete", self._client.delete, self.collection, points_selector=selector, wait=True, write=True)
        return n

    def delete_ids(self, ids: Sequence[str]) -> None:
        valid = _valid_ids(ids)
        if valid:
            selector = models.PointIdsList(points=valid)
            self._call("delete", self._client.delete, self.collection, points_selector=selector, wait=True, write=True)

    # -- reads ---------------------------------------------------------------------

    def search_dense(self, vector: np.ndarray, flt: SearchFilter, limit: int) -> list[ScoredItem]:
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if query.shape[0] != self.dimension:
            raise DimensionMismatchError(f"query vector has dimension {query.shape[0]}, the store expects {self.dimension}")
        return self._query(query.tolist(), DENSE, flt, limit)

    def search_sparse(self, vector: SparseVector, flt: SearchFilter, limit: int) -> list[ScoredItem]:
        if not len(vector):
            return []
        query = models.SparseVector(indices=list(vector.indices), values=list(vector.values))
        return self._query(query, SPARSE, flt, limit)

    def _query(self, query, using: str, flt: SearchFilter, limit: int) -> list[ScoredItem]:
        if limit <= 0 or filter_is_empty(flt):
            return []
        result = self._call(
            "query",
            self._client.query_points,
            self.collection,
            query=query,
            using=using,
            query_filter=qdrant_filter(flt),
            limit=limit,
            with_payload=True,
            with_vectors=False,
        )
        return [
            ScoredItem(item=MemoryItem.from_payload(str(p.id), p.payload or {}), score=float(p.score)) for p in result.points
        ]

    def get(self, ids: Sequence[str]) -> list[MemoryItem]:
        valid = _valid_ids(ids)
        if not valid:
            return []
        records = self._call("retrieve", self._client.retrieve, self.collection, valid, with_payload=True, with_vectors=False)
        by_id = {str(r.id): MemoryItem.from_payload(str(r.id), r.payload or {}) for r in records}
        return [by_id[i] for i in dict.fromkeys(valid) if i in by_id]

    def existing_ids(self, ids: Sequence[str]) -> set[str]:
        valid = _valid_ids(ids)
        if not valid:
            return set()
        records = self._call("retrieve", self._client.retrieve, self.collection, valid, with_payload=False, with_vectors=False)
        return {str(r.id) for r in records}

    def ids_for_source(self, tenant: str, source_id: str) -> list[str]:
        return [str(r.id) for r in self._scroll_records(SearchFilter(tenant=tenant, source_ids=[source_id]), False)]

    def count(self, flt: SearchFilter | None = None) -> int:
        if flt is not None and filter_is_empty(flt):
            return 0
        qflt = qdrant_filter(flt) if flt is not None else None
        return int(self._call("count", self._client.count, self.collection, count_filter=qflt, exact=True).count)

    def scroll(self, flt: SearchFilter) -> Iterator[MemoryItem]:
        for record in self._scroll_records(flt, True):
            yield MemoryItem.from_payload(str(record.id), record.payload or {})

    def _scroll_records(self, flt: SearchFilter, with_payload: bool) -> Iterator[models.Record]:
        if filter_is_empty(flt):
            return
        offset = None
        while True:
            records, offset = self._call(
                "scroll",
                self._client.scroll,
                self.collection,
                scroll_filter=qdrant_filter(flt),
                limit=_SCROLL_PAGE,
                offset=offset,
                with_payload=with_payload,
                with_vectors=False,
            )
            yield from records
            if offset is None:
                return

    # -- lifecycle -------------------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._client.close()

    def __enter__(self) -> "QdrantServerVectorStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"QdrantServerVectorStore(where={self.where!r}, collection={self.collection!r}, dimension={self.dimension})"


def qdrant_filter(flt: SearchFilter) -> models.Filter:
    """SearchFilter -> qdrant-client filter; the tenant condition is always there."""
    must: list[models.Condition] = [models.FieldCondition(key="tenant", match=models.MatchValue(value=flt.tenant))]
    if flt.source_ids is not None:
        must.append(models.FieldCondition(key="source_id", match=models.MatchAny(any=list(flt.source_ids))))
    if flt.kinds is not None:
        must.append(models.FieldCondition(key="kind", match=models.MatchAny(any=list(flt.kinds))))
    if flt.created_after is not None or flt.created_before is not None:
        rng = models.Range(gte=flt.created_after, lte=flt.created_before)
        must.append(models.FieldCondition(key="created_at", range=rng))
    return models.Filter(must=must)


def _is_connection_error(exc: BaseException) -> bool:
    """httpx/grpc connection failures arrive wrapped; walk the cause chain."""
    seen = 0
    while exc is not None and seen < 8:
        name = type(exc).__name__
        if name in {"ConnectError", "ConnectTimeout", "ReadTimeout", "ResponseHandlingException", "ConnectionError"}:
            return True
        if isinstance(exc, (ConnectionError, TimeoutError)):
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False
