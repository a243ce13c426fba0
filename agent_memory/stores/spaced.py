"""One VectorStore over one collection per embedding space (see ``agent_memory/core/embedding_spaces.py``).

Every item lives in exactly one space, the one its text was embedded in. Reads and deletes go to
every space; a dense search takes the question's vector per space and merges the hits by
calibrated similarity, so that a MiniLM cosine and an e5 cosine are compared on one scale. The
keyword route's BM25 scores are merged by score: a term's IDF is counted in its own space's
collection, where texts of its language live. Backend-agnostic: the stores underneath are any
drivers that pass the vector-store contract.
"""

from __future__ import annotations

import itertools
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from agent_memory.core.records import MemoryItem, ScoredItem, SearchFilter
from agent_memory.core.sparse import SparseVector
from agent_memory.stores.base import KeywordWeightsUpkeep, VectorStore

# How long this process trusts what it read of which spaces a tenant's items occupy (seconds).
OCCUPANCY_TTL_S = 10.0
Calibrate = Callable[[str, np.ndarray, str, str], np.ndarray]  # space, cosines, question lang, passage lang


class SpacedVectorStore:
    def __init__(self, stores: Mapping[str, VectorStore], default: str, calibrate: Calibrate,
                 lang_of_space: Callable[[str], str | None] = lambda space: None,
                 occupancy_ttl_s: float = OCCUPANCY_TTL_S) -> None:
        self.stores = dict(stores)
        self.lang_of_space = lang_of_space
        self.default = default
        self.calibrate = calibrate
        self.dimension = self.stores[default].dimension
        self.occupancy_ttl_s = occupancy_ttl_s
        # tenant (None: any) -> (when read, the spaces that held its items then)
        self._occupied: dict[str | None, tuple[float, set[str]]] = {}
        # tenant -> (when read, space -> the speakers of its turns there)
        self._speakers: dict[str, tuple[float, dict[str, set[str]]]] = {}
        self._occupied_lock = threading.Lock()

    # -- which spaces hold anything ----------------------------------------------------------------

    def occupied_spaces(self, tenant: str | None = None) -> list[str]:
        """Spaces that hold at least one item (of ``tenant``, when given): the question is embedded
        only into these, so a tenant of English texts alone never pays for the multilingual model
        (22-56 ms a question). What this process wrote is known at once; what another process (an
        API replica, a worker) wrote is seen within ``occupancy_ttl_s``, when the stores are asked
        again."""
        now = time.monotonic()
        with self._occupied_lock:
            known = self._occupied.get(tenant)
        if known is None or now - known[0] > self.occupancy_ttl_s:
            flt = SearchFilter(tenant=tenant) if tenant is not None else None
            known = (now, {name for name, store in self.stores.items() if store.count(flt) > 0})
            with self._occupied_lock:
                self._occupied[tenant] = known
        return [name for name in self.stores if name in known[1]] or [self.default]

    def _mark_occupied(self, name: str, tenants: Iterable[str]) -> None:
        with self._occupied_lock:
            for tenant in [None, *tenants]:
                if tenant in self._occupied:
                    self._occupied[tenant][1].add(name)

    def speakers(self, tenant: str) -> dict[str, set[str]]:
        """The speakers of the tenant's turns, per space their turns live in: a question that names
        one is embedded without the name in those spaces (agent_memory/retrieval/speakers.py), known before any
        route answers. One facet per space over an indexed payload field, kept like the occupied
        spaces: what this process wrote at once, what others wrote within ``occupancy_ttl_s``."""
        now = time.monotonic()
        with self._occupied_lock:
            known = self._speakers.get(tenant)
        if known is None or now - known[0] > self.occupancy_ttl_s:
            known = (now, {name: self.stores[name].speakers(tenant) for name in self.occupied_spaces(tenant)})
            with self._occupied_lock:
                self._speakers[tenant] = known
        return {name: set(found) for name, found in known[1].items()}

    def _mark_speakers(self, name: str, items: Iterable[MemoryItem]) -> None:
        with self._occupied_lock:
            for item in items:
                speaker = item.metadata.get("speaker") if item.kind == "turn" else None
                if speaker and item.tenant in self._speakers:
                    self._speakers[item.tenant][1].setdefault(name, set()).add(str(speaker))

    def space_of(self, ids: Sequence[str]) -> dict[str, str]:
        """Item ID → the space its vector lives in."""
        out: dict[str, str] = {}
        for name, store in self.stores.items():
            for item_id in store.existing_ids(ids):
                out[item_id] = name
        return out

    # -- writes ------------------------------------------------------------------------------------

    def upsert(self, items: Sequence[MemoryItem], dense: np.ndarray, sparse: Sequence[SparseVector],
               spaces: Sequence[str] | None = None, context: Sequence | None = None, *,
               sentences: Sequence | None = None, may_move: Iterable[str] | None = None) -> None:
        """Each item into its space, with its context vector (or None) when ``context`` is given and
        its sentence vectors (or None, agent_memory/index/sentences.py) when ``sentences`` is.

        ``may_move``: the IDs that another space may hold, looked for there and deleted, so that an
        item never lives in two spaces. An ID hashes its item's text, so one ID changes space only
        when what is embedded beside that text (a document title, a speaker) changed language, or
        when the routing rule changed (``reindex``): the ingestion passes the items of sources it
        re-writes (those the catalog knew), and nothing for new ones; None (the default, for callers
        that cannot tell) looks for every item."""
        spaces = list(spaces) if spaces is not None else [self.default] * len(items)
        dense = np.asarray(dense, dtype=np.float32)
        contexts = list(context) if context is not None else [None] * len(items)
        blocks = list(sentences) if sentences is not None else [None] * len(items)
        for name in dict.fromkeys(spaces):
            rows = [i for i, s in enumerate(spaces) if s == name]
            self.stores[name].upsert([items[i] for i in rows], dense[rows], [sparse[i] for i in rows],
                                     context=[contexts[i] for i in rows], sentences=[blocks[i] for i in rows])
            self._mark_occupied(name, {items[i].tenant for i in rows})
            self._mark_speakers(name, [items[i] for i in rows])
        if len(self.stores) == 1:
            return
        movable = None if may_move is None else set(may_move)
        # An item re-embedded into another space (its text changed language share) leaves the old one.
        for name, store in self.stores.items():
            others = [items[i].id for i, s in enumerate(spaces)
                      if s != name and (movable is None or items[i].id in movable)]
            if others:
                stale = store.existing_ids(others)
                if stale:
                    store.delete_ids(sorted(stale))

    def set_context(self, contexts: Mapping[str, tuple[str, np.ndarray]]) -> None:
        """Replace stored turns' context vectors: item ID → (its space, the vector), payload untouched."""
        for name in dict.fromkeys(space for space, _ in contexts.values()):
            self.stores[name].set_vectors({i: {"context": v} for i, (s, v) in contexts.items() if s == name})

    def delete_by_source(self, tenant: str, source_id: str) -> int:
        return sum(store.delete_by_source(tenant, source_id) for store in self.stores.values())

    def delete_where(self, flt: SearchFilter) -> int:
        return sum(store.delete_where(flt) for store in self.stores.values())

    def delete_ids(self, ids: Sequence[str]) -> None:
        for store in self.stores.values():
            store.delete_ids(ids)

    def update_metadata(self, updates: Mapping[str, Mapping[str, Any]]) -> int:
        """Each item lives in one space; every store skips the IDs it does not hold."""
        return sum(store.update_metadata(updates) for store in self.stores.values())

    # -- search ------------------------------------------------------------------------------------

    def search_dense(self, vector: Mapping[str, np.ndarray] | np.ndarray, flt: SearchFilter,
                     limit: int) -> list[ScoredItem]:
        """``vector``: the question per space (or one array: the default space). Scores come back
        calibrated when more than one space answers; alone, a space keeps its cosines."""
        query, answering = self._answering(vector, flt)
        if len(answering) == 1:
            return self.stores[answering[0]].search_dense(query[answering[0]], flt, limit)
        # Each space ranks without payloads; only the merged best ``limit`` are read. Reading each
        # space's own best ``limit`` read twice the payloads the merge keeps (250 hits over two
        # spaces at 2k items: 10.8 ms that way, 7.7 this way).
        best = self._merged_ranking(query, answering, flt, limit)
        items: dict[str, MemoryItem] = {}
        for name in answering:
            wanted = [point for _, space, point in best if space == name]
            if wanted:
                items.update((i.id, i) for i in self.stores[name].get(wanted))
        # A point deleted between the two reads is left out, as a later search would.
        return [ScoredItem(item=items[point], score=score) for score, _, point in best if point in items]

    def rank_dense(self, vector: Mapping[str, np.ndarray] | np.ndarray, flt: SearchFilter,
                   limit: int) -> list[tuple[str, float]]:
        """``search_dense``'s IDs and scores, no payload read."""
        query, answering = self._answering(vector, flt)
        if len(answering) == 1:
            return self.stores[answering[0]].rank_dense(query[answering[0]], flt, limit)
        return [(point, score) for score, _, point in self._merged_ranking(query, answering, flt, limit)]

    def _answering(self, vector: Mapping[str, np.ndarray] | np.ndarray,
                   flt: SearchFilter) -> tuple[Mapping[str, np.ndarray], list[str]]:
        """The question per space, and the spaces that hold the tenant's items and have its vector."""
        query = vector if isinstance(vector, Mapping) else {self.default: vector}
        return query, [s for s in self.occupied_spaces(flt.tenant) if s in query]

    def _merged_ranking(self, query: Mapping[str, np.ndarray], answering: list[str], flt: SearchFilter,
                        limit: int) -> list[tuple[float, str, str]]:
        """The best ``limit`` of every answering space as (calibrated score, space, point ID)."""
        ranked: list[tuple[float, str, str]] = []
        for name in answering:
            found = self.stores[name].rank_dense(query[name], flt, limit)
            calibrated = self.calibrate(name, np.array([score for _, score in found], dtype=np.float64),
                                        getattr(query, "lang", "en"), self.lang_of_space(name) or "en")
            ranked += [(float(c), name, point) for (point, _), c in zip(found, calibrated)]
        return sorted(ranked, key=lambda row: -row[0])[:limit]

    def search_sparse(self, vector: SparseVector, flt: SearchFilter, limit: int) -> list[ScoredItem]:
        spaces = self.occupied_spaces(flt.tenant)
        if len(spaces) == 1:
            return self.stores[spaces[0]].search_sparse(vector, flt, limit)
        hits = [h for name in spaces for h in self.stores[name].search_sparse(vector, flt, limit)]
        return sorted(hits, key=lambda h: -h.score)[:limit]

    # -- reads -------------------------------------------------------------------------------------

    def get(self, ids: Sequence[str]) -> list[MemoryItem]:
        if len(self.stores) == 1:
            return self.stores[self.default].get(ids)
        found = {i.id: i for store in self.stores.values() for i in store.get(ids)}
        return [found[i] for i in ids if i in found]

    def stored_vectors(self, ids: Sequence[str], names: Sequence[str] = ("dense", "context"),
                       ) -> dict[str, tuple[str, dict[str, np.ndarray]]]:
        """Item ID → (its space, its named dense vectors among ``names``: ``dense``, and ``context``
        for a turn), read in one batched retrieve per space; an ID no space holds is absent."""
        out: dict[str, tuple[str, dict[str, np.ndarray]]] = {}
        for name, store in self.stores.items():
            for item_id, vectors in store.get_vectors(ids, names).items():
                out[item_id] = (name, vectors)
        return out

    def score_ids(self, vectors: Mapping[str, np.ndarray], ids: Sequence[str],
                  using: str = "context") -> dict[str, tuple[str, float]]:
        """Item ID → (its space, the cosine of its named vector ``using`` with the question's vector
        in that space), scored by each space's store; only spaces in ``vectors`` are asked, and an
        item without that vector is absent."""
        out: dict[str, tuple[str, float]] = {}
        for name in self.occupied_spaces():
            if name in vectors:
                out.update((i, (name, score)) for i, score in self.stores[name].score_ids(vectors[name], ids, using).items())
        return out

    def existing_ids(self, ids: Sequence[str]) -> set[str]:
        return set().union(*(store.existing_ids(ids) for store in self.stores.values()))

    def ids_for_source(self, tenant: str, source_id: str) -> list[str]:
        return [i for store in self.stores.values() for i in store.ids_for_source(tenant, source_id)]

    def count(self, flt: SearchFilter | None = None) -> int:
        return sum(store.count(flt) for store in self.stores.values())

    def scroll(self, flt: SearchFilter) -> Iterator[MemoryItem]:
        return itertools.chain.from_iterable(store.scroll(flt) for store in self.stores.values())

    def tenants(self) -> set[str]:
        return set().union(*(store.tenants() for store in self.stores.values()))

    def source_points(self, flt: SearchFilter) -> Iterator[tuple[str, str]]:
        return itertools.chain.from_iterable(store.source_points(flt) for store in self.stores.values())

    def snapshot_to(self, path: Path) -> None:
        """Every space's collection copied under ``path`` (the caller holds writes still)."""
        for store in self.stores.values():
            store.snapshot_to(path)

    def refresh_keyword_weights(self) -> int:
        """Every space's keyword weighting counts its live points only (upkeep: ``agent-memory gc``)."""
        return sum(store.refresh_keyword_weights() for store in self.stores.values()
                   if isinstance(store, KeywordWeightsUpkeep))

    def drop(self) -> list[str]:
        """Close every space's collection and remove it with all it holds; the collections' names."""
        names = []
        for store in self.stores.values():
            store.drop()
            names.append(store.collection)
        return names

    def close(self) -> None:
        for store in self.stores.values():
            store.close()
