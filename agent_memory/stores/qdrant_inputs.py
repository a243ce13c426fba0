"""What a Qdrant driver makes of a VectorStore call's arguments before its client sees them:
point IDs checked and made canonical, an upsert batch's vectors checked against the store's
dimension, a SearchFilter turned into ``must`` conditions.

Pure functions of the arguments, with no store or client: the contract in ``qdrant_common.py``
calls them, and each driver builds its filter with ``filter_conditions`` and its own constructors.
Its own file so that the contract there reads as reads, writes and paging only.
"""

from __future__ import annotations

import re
import uuid
from typing import Any, Callable, Sequence

import numpy as np

from agent_memory.core import metafilter
from agent_memory.core.errors import DimensionMismatchError, StoreError
from agent_memory.core.records import MemoryItem, SearchFilter
from agent_memory.core.sparse import SparseVector


def normalize_id(item_id: str) -> str:
    """Canonical UUID string (Qdrant hands IDs back as lower-case UUIDs)."""
    try:
        return str(uuid.UUID(str(item_id)))
    except ValueError as exc:
        raise StoreError(f"point id {item_id!r} is not a UUID string") from exc


# The form Qdrant hands IDs back in: taken as it is. Parsing every ID into a uuid.UUID and back
# cost about 3 ms a question (some 1,300 IDs: hits, candidates' vectors, turn-context scores).
_CANONICAL_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def valid_ids(ids: Sequence[str]) -> list[str]:
    out = []
    for i in ids:
        if isinstance(i, str) and _CANONICAL_UUID.fullmatch(i):
            out.append(i)
            continue
        try:
            out.append(str(uuid.UUID(str(i))))
        except ValueError:
            continue  # an ID that is not a UUID cannot be stored, so it does not exist
    return out


def check_context(items: Sequence[MemoryItem], context: Sequence | None, dimension: int) -> list:
    """One context vector (or None) per item, each a float32 list of ``dimension`` values."""
    if context is None:
        return [None] * len(items)
    if len(context) != len(items):
        raise StoreError(f"upsert needs one context vector (or None) per item: items={len(items)}, context={len(context)}")
    out = []
    for row in context:
        if row is None:
            out.append(None)
            continue
        row = np.asarray(row, dtype=np.float32).reshape(-1)
        if row.shape[0] != dimension:
            raise DimensionMismatchError(f"context vectors have dimension {row.shape[0]}, the store expects {dimension}")
        out.append(row.tolist())
    return out


def check_sentences(items: Sequence[MemoryItem], sentences: Sequence | None, dimension: int) -> list:
    """Per item, its sentence vectors as a list of float32 rows of ``dimension`` values, or None."""
    if sentences is None:
        return [None] * len(items)
    if len(sentences) != len(items):
        raise StoreError(f"upsert needs one block of sentence vectors (or None) per item: items={len(items)}, "
                         f"sentences={len(sentences)}")
    out = []
    for block in sentences:
        if block is None or len(block) == 0:
            out.append(None)
            continue
        block = np.asarray(block, dtype=np.float32)
        if block.ndim != 2 or block.shape[1] != dimension:
            raise DimensionMismatchError(f"sentence vectors have shape {block.shape}, the store expects (n, {dimension})")
        out.append(block.tolist())
    return out


def check_batch(items: Sequence[MemoryItem], dense: np.ndarray, sparse: Sequence[SparseVector], dimension: int) -> np.ndarray:
    """Validate an upsert batch; returns the dense matrix as float32 (n, dimension)."""
    dense = np.asarray(dense, dtype=np.float32)
    if dense.ndim == 1 and len(items) == 1:
        dense = dense.reshape(1, -1)
    if dense.ndim != 2 or dense.shape[0] != len(items) or len(sparse) != len(items):
        raise StoreError(
            f"upsert needs one dense row and one sparse vector per item: items={len(items)}, "
            f"dense shape={dense.shape}, sparse={len(sparse)}"
        )
    if dense.shape[1] != dimension:
        raise DimensionMismatchError(f"dense vectors have dimension {dense.shape[1]}, the store expects {dimension}")
    return dense


def filter_is_empty(flt: SearchFilter) -> bool:
    """An explicit empty list of sources or kinds matches nothing."""
    return (flt.source_ids is not None and len(flt.source_ids) == 0) or (flt.kinds is not None and len(flt.kinds) == 0)


def filter_conditions(flt: SearchFilter, *, equals: Callable[[str, Any], Any], any_of: Callable[[str, list], Any],
                      between: Callable[[str, float | None, float | None], Any],
                      dates: Callable[[str, str | None, str | None], Any]) -> list:
    """The ``must`` conditions of a SearchFilter, built with a client's constructors; the
    tenant condition is always there. ``dates`` takes RFC 3339 UTC bounds (metafilter normalizes them)."""
    must = [equals("tenant", flt.tenant)]
    if flt.source_ids is not None:
        must.append(any_of("source_id", list(flt.source_ids)))
    if flt.kinds is not None:
        must.append(any_of("kind", list(flt.kinds)))
    if flt.created_after is not None or flt.created_before is not None:
        must.append(between("created_at", flt.created_after, flt.created_before))
    for kind, key, value, high in metafilter.conditions(flt.metadata):  # the item's own metadata keys
        must.append(equals(key, value) if kind == "eq" else any_of(key, value) if kind == "in"
                    else dates(key, value, high) if kind == "dates" else between(key, value, high))
    return must
