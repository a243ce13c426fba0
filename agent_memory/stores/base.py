"""The seams between the pipelines and the stores.

Every implementation must pass the matching contract suite in ``tests/integration``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Protocol, Sequence, runtime_checkable

import numpy as np

from agent_memory.core.records import MemoryItem, ScoredItem, SearchFilter, Triple
from agent_memory.core.sparse import SparseVector


@runtime_checkable
class VectorStore(Protocol):
    """Dense + sparse vectors with payloads, always filtered by tenant.

    ``search_sparse`` must apply IDF (server-side modifier or equivalent), so that the
    scores behave like BM25 over the collection.
    """

    dimension: int

    def upsert(self, items: Sequence[MemoryItem], dense: np.ndarray, sparse: Sequence[SparseVector],
               context: Sequence | None = None, sentences: Sequence | None = None) -> None:
        """``context``: per item, its turn-context vector (the named vector ``context``) or None.
        ``sentences``: per item, the vectors of its single sentences (an (n, dimension) array, the
        multivector ``sentences``) or None."""
        ...

    def set_vectors(self, vectors: Mapping[str, Mapping[str, Sequence[float]]]) -> None:
        """Replace named dense vectors of stored points (ID → name → vector); payloads untouched."""
        ...

    def delete_by_source(self, tenant: str, source_id: str) -> int: ...

    def delete_where(self, flt: SearchFilter) -> int:
        """Every item the filter matches (its tenant always applies); returns how many were removed."""
        ...

    def delete_ids(self, ids: Sequence[str]) -> None: ...

    def update_metadata(self, updates: Mapping[str, Mapping[str, Any]]) -> int:
        """Merge keys into stored items' metadata (item ID -> {key: value}); vectors, text and the other
        keys stay. IDs not stored are skipped. Returns how many items were updated."""
        ...

    def search_dense(self, vector: np.ndarray, flt: SearchFilter, limit: int) -> list[ScoredItem]:
        """A point scores the better of its own vector's cosine and its best sentence vector's."""
        ...

    def rank_dense(self, vector: np.ndarray, flt: SearchFilter, limit: int) -> list[tuple[str, float]]:
        """``search_dense``'s point IDs and scores, best first, with no payload read: a caller that
        merges several stores' hits reads the payloads of the winners only (``get``)."""
        ...

    def search_sparse(self, vector: SparseVector, flt: SearchFilter, limit: int) -> list[ScoredItem]: ...

    def get(self, ids: Sequence[str]) -> list[MemoryItem]: ...

    def get_vectors(self, ids: Sequence[str], names: Sequence[str] = ("dense", "context")) -> dict[str, dict[str, np.ndarray]]:
        """Point ID → its named dense vectors among ``names`` (a point lacking one lacks the key)."""
        ...

    def score_ids(self, vector: np.ndarray, ids: Sequence[str], using: str = "context") -> dict[str, float]:
        """Point ID → cosine of ``vector`` with its named vector ``using``, computed by the store
        (``sentences``: with its best sentence vector)."""
        ...

    def existing_ids(self, ids: Sequence[str]) -> set[str]: ...

    def ids_for_source(self, tenant: str, source_id: str) -> list[str]: ...

    def count(self, flt: SearchFilter | None = None) -> int: ...

    def speakers(self, tenant: str) -> set[str]:
        """The distinct speakers (``metadata.speaker``) of the tenant's turns."""
        ...

    def scroll(self, flt: SearchFilter) -> Iterator[MemoryItem]: ...

    def tenants(self) -> set[str]:
        """The tenants that hold at least one point."""
        ...

    def source_points(self, flt: SearchFilter) -> Iterator[tuple[str, str]]:
        """(source ID, point ID) of every point ``flt`` selects, read a page at a time with the source ID as
        the only payload and no vector: what ``agent-memory check`` compares with the catalog."""
        ...

    def snapshot_to(self, path: Path) -> None:
        """Copy what this store holds to ``path``, the folder a store opened there reads it from as it is (the
        equivalent of the folder this one was opened at); the caller holds other writers still. A store on a
        server raises BackupError naming the server's own backup tool."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class KeywordWeightsUpkeep(Protocol):
    """A vector store whose keyword (IDF) weighting may still count deleted points until it is refreshed."""

    def refresh_keyword_weights(self) -> int:
        """Count the live points only from now on; returns how many deleted points were still counted."""
        ...


@dataclass
class EntityRecord:
    name: str
    normalized: str
    type: str = "entity"
    tenant: str = "default"
    source_ids: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)


@runtime_checkable
class GraphStore(Protocol):
    """Entities and relations with provenance (source IDs) and a tenant on everything."""

    def merge_triples(self, triples: Iterable[Triple]) -> int: ...

    def delete_by_source(self, tenant: str, source_id: str) -> int: ...

    def delete_by_sources(self, tenant: str, source_ids: Sequence[str]) -> int:
        """``delete_by_source`` of many sources at once (one transaction): relations removed."""
        ...

    def delete_tenant(self, tenant: str) -> int:
        """Every entity and relation of the tenant; returns the entities removed."""
        ...

    def source_subjects(self, tenant: str, source_id: str) -> list[str]:
        """The names of the subjects of the source's relations."""
        ...

    def sources_subjects(self, tenant: str, source_ids: Sequence[str]) -> list[str]:
        """``source_subjects`` of many sources at once."""
        ...

    def update_validity(self, tenant: str, subjects: Sequence[str], functional: Mapping[str, Sequence[str]]) -> int:
        """Mark the named subjects' functional facts replaced by newer ones superseded (agent_memory/core/updates.py)."""
        ...

    def subject_facts(self, tenant: str, subjects: Sequence[str]) -> list[dict[str, Any]]:
        """The named subjects' relations as rows (key, subject_key, subject, relation, object_key, object,
        source_id, valid_from, valid_to, superseded_by)."""
        ...

    def mark_superseded(self, tenant: str, changes: Sequence[Mapping[str, Any]]) -> int:
        """Write ``valid_to``/``superseded_by`` of relations by key (an LLM's judgement, updates.py); never deletes."""
        ...

    def superseded_count(self, tenant: str) -> int: ...

    def neighbourhood(self, tenant: str, entities: Sequence[str], hops: int = 1, limit: int = 50) -> list[Triple]: ...

    def find_entities(self, tenant: str, names: Sequence[str]) -> list[EntityRecord]: ...

    def entity_names(self, tenant: str, limit: int | None = None) -> list[str]: ...

    def stats(self, tenant: str | None = None) -> dict[str, int]: ...

    def fact_sources(self, tenant: str | None = None) -> dict[str, dict[str, int]]:
        """Tenant → source ID → how many relations it holds (of ``tenant`` alone when given): what
        ``agent-memory check`` compares with the catalog."""
        ...

    def snapshot_to(self, path: Path) -> None:
        """Copy the graph to ``path``, where a store opened there reads it as it is; the caller holds other
        writers still. A store on a server raises BackupError naming the server's own backup tool."""
        ...

    def close(self) -> None: ...
