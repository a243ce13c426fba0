"""VectorStore over qdrant-client: a real Qdrant server, or qdrant-client's local mode.

Server mode (``url=``) is the production path when AGENT_MEMORY_QDRANT_URL is set.
Local mode (``path=`` or ``location=":memory:"``) is qdrant-client's pure-Python
brute-force engine: correct, handy for tests and tiny data sets, but about a second
per filtered search at 100k points, so the embedded default is Qdrant Edge instead.

Same layout as the Edge store: named dense vectors ``dense`` and ``context`` (cosine; a
collection created before ``context`` existed gets it on open) and sparse vector ``sparse``
with the IDF modifier, payload indexes on tenant/source_id/kind/created_at. A server's keyword weighting
counts deleted points until its vacuum optimizer rebuilds their segments: the driver creates a collection
with a low vacuum threshold, and gc waits for the vacuum (``qdrant_server_vacuum.py``). The
contract itself (batches, filters, paging, lifecycle) is shared in ``qdrant_common.py``
(its argument checks and filter conditions in ``qdrant_inputs.py``).
"""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

from qdrant_client import QdrantClient, models
from qdrant_client.http.exceptions import UnexpectedResponse

from agent_memory.core.errors import BackupError, DimensionMismatchError, StoreError, StoreUnavailableError
from agent_memory.core.records import SearchFilter
from agent_memory.core.sparse import SparseVector
from agent_memory.stores.qdrant_common import (
    CONTEXT,
    DENSE,
    INDEXED_FIELDS,
    SCROLL_PAGE,
    SENTENCES,
    SPARSE,
    QdrantStore,
)
from agent_memory.stores.qdrant_inputs import filter_conditions
from agent_memory.stores.qdrant_server_vacuum import (
    deleted_counted,
    low_threshold_is_safe,
    vacuum_config,
    wait_for_vacuum,
)

_SCHEMA = {"keyword": models.PayloadSchemaType.KEYWORD, "float": models.PayloadSchemaType.FLOAT}
_MAX_SIM = models.MultiVectorConfig(comparator=models.MultiVectorComparator.MAX_SIM)


class QdrantServerVectorStore(QdrantStore):
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
        vacuum_share: float | None = None,
        vacuum_wait_s: float = 30.0,
    ):
        """``vacuum_share`` (a server only; settings.qdrant_vacuum_deleted_share): a collection this creates
        has the server vacuum a segment once more than this share of its points are deleted, so that keyword
        weights stop counting them (None or 1: the server's own settings). A collection that exists keeps
        its settings (qdrant_server_vacuum.py says why). ``vacuum_wait_s``: how long
        :meth:`refresh_keyword_weights` waits for the server's vacuum."""
        super().__init__(dimension)
        if sum(x is not None for x in (url, location, path)) != 1:
            raise ValueError(f"give exactly one of url={url!r}, location={location!r}, path={path!r}")
        self.collection = collection
        self.local = url is None
        self.where = url or location or str(path)
        self.vacuum_share = vacuum_share if vacuum_share is not None and vacuum_share < 1 else None
        self.vacuum_wait_s = vacuum_wait_s
        # Local mode mutates plain Python structures: serialise everything there.
        # Against a server only writes are serialised; concurrent searches are fine.
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
                if CONTEXT not in vectors:
                    # A collection from before turn-context vectors: add the named vector (no point is rewritten).
                    self._add_vector_name(CONTEXT, models.DenseVectorConfig(size=self.dimension,
                                                                            distance=models.Distance.COSINE))
                if SENTENCES not in vectors:  # likewise for sentence vectors (agent_memory/index/sentences.py)
                    self._add_vector_name(SENTENCES, models.DenseVectorConfig(
                        size=self.dimension, distance=models.Distance.COSINE, multivector_config=_MAX_SIM))
            else:
                self._client.create_collection(
                    self.collection,
                    vectors_config={**{name: models.VectorParams(size=self.dimension, distance=models.Distance.COSINE)
                                       for name in (DENSE, CONTEXT)},
                                    SENTENCES: models.VectorParams(size=self.dimension, distance=models.Distance.COSINE,
                                                                   multivector_config=_MAX_SIM)},
                    sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
                    optimizers_config=vacuum_config(self.vacuum_share) if self._vacuums() else None,
                )
            if not self.local:  # local mode has no payload indexes (it would only log a warning)
                schema = info.payload_schema if exists else {}
                for field, kind in INDEXED_FIELDS:
                    if field not in schema:
                        self._client.create_payload_index(self.collection, field, field_schema=_SCHEMA[kind], wait=True)
        except StoreError:
            raise
        except Exception as exc:
            raise self._error("open collection", exc) from exc

    def _vacuums(self) -> bool:
        """Whether a collection this creates gets the vacuum threshold: a server (local mode has no optimizers)
        whose release vacuums safely (``qdrant_server_vacuum.low_threshold_is_safe``)."""
        return not self.local and self.vacuum_share is not None and low_threshold_is_safe(self._client, self.where)

    def _add_vector_name(self, name: str, config: models.DenseVectorConfig) -> None:
        try:
            self._client.create_vector_name(self.collection, name, models.DenseVectorNameConfig(dense=config))
        except UnexpectedResponse as exc:
            if exc.status_code != 404:
                raise
            # Before Qdrant 1.18 a server has no endpoint for it (found against a real 1.16.3): say so, not "404".
            raise StoreError(
                f"collection {self.collection!r} at {self.where} was made before the named vector {name!r} existed, "
                f"and this Qdrant server cannot add a named vector to a collection (Qdrant 1.18 added it): upgrade "
                f"the server to 1.18 or later, or move the data dir's collection aside and ingest again") from None

    def _error(self, what: str, exc: Exception) -> StoreError:
        text = f"Qdrant {what} failed for collection {self.collection!r} at {self.where}: {exc}"
        if _is_connection_error(exc):
            return StoreUnavailableError(text)
        return StoreError(text)

    def _call(self, what: str, fn, *args, **kwargs):
        # Writes already hold the (reentrant) lock; reads take it only in local mode.
        with self._read_guard or nullcontext():
            try:
                return fn(*args, **kwargs)
            except Exception as exc:
                raise self._error(what, exc) from exc

    # -- the primitives QdrantStore builds on ------------------------------------

    def _point(self, point_id: str, dense: list[float], sparse: SparseVector, payload: dict,
               context: list[float] | None, sentences: list[list[float]] | None) -> models.PointStruct:
        vectors = {DENSE: dense, SPARSE: self._sparse(sparse)}
        if context is not None:
            vectors[CONTEXT] = context
        if sentences is not None:
            vectors[SENTENCES] = sentences
        return models.PointStruct(id=point_id, vector=vectors, payload=payload)

    def _sparse(self, vector: SparseVector) -> models.SparseVector:
        return models.SparseVector(indices=list(vector.indices), values=list(vector.values))

    def _upsert_points(self, points: list) -> None:
        self._call("upsert", self._client.upsert, self.collection, points, wait=True)

    def _update_vectors(self, points: dict[str, dict[str, list[float]]]) -> None:
        self._call("update vectors", self._client.update_vectors, self.collection,
                   [models.PointVectors(id=i, vector=v) for i, v in points.items()], wait=True)

    def _delete_by_filter(self, flt: SearchFilter) -> None:
        selector = models.FilterSelector(filter=qdrant_filter(flt))
        self._call("delete", self._client.delete, self.collection, points_selector=selector, wait=True)

    def _delete_points(self, ids: list[str]) -> None:
        selector = models.PointIdsList(points=ids)
        self._call("delete", self._client.delete, self.collection, points_selector=selector, wait=True)

    def _set_metadata(self, ids: list[str], values: dict) -> None:
        self._call("set payload", self._client.set_payload, self.collection, payload=values, points=ids,
                   key="metadata", wait=True)  # the key: a nested path, the other metadata keys stay

    def _nearest(self, query, using: str, flt: SearchFilter, limit: int) -> list:
        return self._call("query", self._client.query_points, self.collection, query=query, using=using,
                          query_filter=qdrant_filter(flt), limit=limit, with_payload=True, with_vectors=False).points

    def _nearest_best(self, query: list[float], flt: SearchFilter, limit: int, with_payload: bool) -> list:
        # Both searches in one request, their lists merged here. One formula query over the two prefetches
        # (``max``, as Edge runs it) does this on the server, but the servers this driver meets refuse it:
        # Qdrant 1.15 to 1.19 have no max expression (a 400 on every question, found against a real 1.16.3).
        where = qdrant_filter(flt)
        dense, sentences = self._call("query", self._client.query_batch_points, self.collection, requests=[
            models.QueryRequest(query=query, using=DENSE, filter=where, limit=limit, with_payload=with_payload),
            models.QueryRequest(query=[query], using=SENTENCES, filter=where, limit=limit, with_payload=with_payload),
        ])
        best: dict = {}
        for hit in [*dense.points, *sentences.points]:  # a point's better score: its own vector or a sentence
            if hit.id not in best or hit.score > best[hit.id].score:
                best[hit.id] = hit
        return sorted(best.values(), key=lambda h: (-float(h.score), str(h.id)))[:limit]

    def _retrieve(self, ids: list[str], with_payload: bool) -> list:
        return self._call("retrieve", self._client.retrieve, self.collection, ids, with_payload=with_payload,
                          with_vectors=False)

    def _nearest_among(self, query: list, using: str, ids: list[str]) -> list:
        return self._call("query", self._client.query_points, self.collection, query=query, using=using,
                          query_filter=models.Filter(must=[models.HasIdCondition(has_id=ids)]), limit=len(ids),
                          with_payload=False, with_vectors=False).points

    def _retrieve_vectors(self, ids: list[str], names: list[str]) -> list:
        return self._call("retrieve", self._client.retrieve, self.collection, ids, with_payload=False, with_vectors=names)

    def _count(self, flt: SearchFilter | None) -> int:
        qflt = qdrant_filter(flt) if flt is not None else None
        return self._call("count", self._client.count, self.collection, count_filter=qflt, exact=True).count

    def _facet(self, key: str, flt: SearchFilter | None, limit: int) -> list:
        where = qdrant_filter(flt) if flt is not None else None
        return [hit.value for hit in self._call("facet", self._client.facet, self.collection, key,
                                                 facet_filter=where, limit=limit).hits]

    def _scroll_page(self, flt: SearchFilter, offset, with_payload: bool | list[str]):
        return self._call("scroll", self._client.scroll, self.collection, scroll_filter=qdrant_filter(flt),
                          limit=SCROLL_PAGE, offset=offset, with_payload=with_payload, with_vectors=False)

    def _close(self) -> None:
        self._client.close()

    # -- maintenance ---------------------------------------------------------------

    def refresh_keyword_weights(self) -> int:
        """A server: when the keyword weighting still counts deleted points, wait up to ``vacuum_wait_s`` for
        the server's optimizers to vacuum the segments past the collection's threshold (``vacuum_share`` for
        a collection this created). It asks for nothing more: changing the threshold now would stop a vacuum
        under way, which on Qdrant 1.16.3 brought deleted points back. Returns how many deleted points were
        counted when called: 0 where none were, or where the server's telemetry does not say (it waits then
        all the same). Local mode counts the live points only at once: 0."""
        if self.local or self._closed:
            return 0
        counted = deleted_counted(self._client, self.collection)
        if counted == 0:
            return 0
        try:
            wait_for_vacuum(self._client, self.collection, self.vacuum_wait_s)
        except StoreError:
            raise
        except Exception as exc:
            raise self._error("collection info", exc) from exc
        return counted or 0

    def snapshot_to(self, path: Path) -> None:
        """Local mode: every point, with its vectors and payload, written to a new local store at ``path``
        while the lock keeps writes out. A server's collection is copied by the server's own snapshots."""
        if not self.local:
            raise BackupError(f"the vectors are on a Qdrant server ({self.where}): take a snapshot of collection "
                              f"{self.collection!r} with the server's snapshot API (POST /collections/"
                              f"{self.collection}/snapshots); `agent-memory backup` copies an embedded data dir")
        with self._lock:
            self._check_open()
            copy = QdrantServerVectorStore(self.collection, self.dimension, path=Path(path))
            try:
                if copy.count():
                    raise StoreError(f"collection {self.collection!r}: the copy at {path} holds points already")
                offset = None
                while True:
                    records, offset = self._call("scroll", self._client.scroll, self.collection, limit=SCROLL_PAGE,
                                                 offset=offset, with_payload=True, with_vectors=True)
                    if records:
                        copy._upsert_points([models.PointStruct(id=r.id, vector=r.vector, payload=r.payload)
                                             for r in records])
                    if offset is None:
                        break
            finally:
                copy.close()

    def drop(self) -> None:
        """Local mode: remove the collection with all it holds, then close (reindex). A server's collections
        are shared with other processes and stay."""
        if not self.local:
            raise StoreError(f"collection {self.collection!r} is on a Qdrant server ({self.where}): not dropped")
        with self._lock:
            self._call("delete collection", self._client.delete_collection, self.collection)
        self.close()

    def __repr__(self) -> str:
        return f"QdrantServerVectorStore(where={self.where!r}, collection={self.collection!r}, dimension={self.dimension})"


def qdrant_filter(flt: SearchFilter) -> models.Filter:
    """SearchFilter -> qdrant-client filter (conditions from :func:`filter_conditions`)."""
    return models.Filter(must=filter_conditions(
        flt,
        equals=lambda key, value: models.FieldCondition(key=key, match=models.MatchValue(value=value)),
        any_of=lambda key, values: models.FieldCondition(key=key, match=models.MatchAny(any=values)),
        between=lambda key, low, high: models.FieldCondition(key=key, range=models.Range(gte=low, lte=high)),
        dates=lambda key, low, high: models.FieldCondition(key=key, range=models.DatetimeRange(gte=low, lte=high)),
    ))


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
