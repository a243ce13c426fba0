"""Recall routes. Each returns scored items for one query; none knows about the others.

A route never raises for "nothing found"; a failing route is reported by the pipeline and
the others still answer.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from agent_memory.core import metafilter
from agent_memory.core.embedding_spaces import QueryVectors
from agent_memory.core.records import MemoryItem, ScoredItem, SearchFilter, Triple
from agent_memory.core.sparse import SparseVector
from agent_memory.core.text import content_words
from agent_memory.retrieval.config import RetrievalConfig
from agent_memory.retrieval.pages import Pages, mentioned_names
from agent_memory.stores.base import GraphStore, VectorStore


@dataclass
class Query:
    text: str
    tenant: str
    session_id: str | None
    flt: SearchFilter
    dense: np.ndarray | None = None
    sparse: SparseVector | None = None
    entities: list[str] = field(default_factory=list)
    # Speakers of the tenant's turns that the question names ("What has Melanie painted?"), per
    # space their turns live in, from the tenant's speaker directory (agent_memory/retrieval/speakers.py).
    speakers: dict[str, list[str]] = field(default_factory=dict)
    # What the reranker's term coverage reads where it is not ``text`` (agent_memory/retrieval/succession.py).
    terms_text: str | None = None


@dataclass
class RouteOutput:
    hits: list[ScoredItem] = field(default_factory=list)
    facts: list[Triple] = field(default_factory=list)
    # Scores that belong to a whole source (an entity's page), not to the one item returned:
    # every candidate chunk of that source carries them into the reranker.
    sources: dict[str, float] = field(default_factory=dict)
    # Why a hit got its score, by item ID, where a route decides more than one number says (the debug dump's).
    notes: dict[str, str] = field(default_factory=dict)


class Route(Protocol):
    name: str
    # A route that reads the question's dense vectors waits for them; the others start while the
    # question is embedded (agent_memory/retrieval/pipeline.py).
    needs_dense: bool

    def recall(self, query: Query, limit: int) -> RouteOutput: ...


def _content_filter(flt: SearchFilter, kinds: list[str]) -> SearchFilter:
    wanted = [k for k in kinds if flt.kinds is None or k in flt.kinds]
    return dataclasses.replace(flt, kinds=wanted or ["__none__"])  # every other condition carries over


class DenseRoute:
    name = "dense"
    needs_dense = True

    def __init__(self, vectors: VectorStore) -> None:
        self.vectors = vectors

    def recall(self, query: Query, limit: int) -> RouteOutput:
        flt = _content_filter(query.flt, ["chunk", "turn"])
        return RouteOutput(self.vectors.search_dense(query.dense, flt, limit))


class SpeakerRoute:
    """The turns of the speakers a question names, by meaning: the dense search again, filtered to
    those speakers' turns. The reranker already bets on these turns (``speaker_named``); in a memory
    that also holds other conversations and documents they can fall below the dense route's limit
    (one LoCoMo conversation beside LongMemEval's haystack and the HotpotQA pages: "What would
    Caroline's political leaning likely be?" finds its turn second among the conversation's turns
    and not at all among the 250 best of the mixed memory, under election pages). A question that
    names no speaker of the tenant costs nothing."""

    name = "speakers"
    needs_dense = True

    def __init__(self, vectors: VectorStore) -> None:
        self.vectors = vectors

    def recall(self, query: Query, limit: int) -> RouteOutput:
        if not query.speakers or "speaker" in (query.flt.metadata or {}):  # the caller's own speaker filter wins
            return RouteOutput()
        # Only the spaces that hold their turns: a tenant with Chinese documents beside an English
        # conversation searches one space, not two.
        dense = QueryVectors({s: query.dense[s] for s in query.speakers if s in query.dense}, query.dense.lang)
        if not dense:
            return RouteOutput()
        names = sorted({name for names in query.speakers.values() for name in names})
        flt = dataclasses.replace(query.flt, metadata={**(query.flt.metadata or {}), "speaker": names})
        return RouteOutput(self.vectors.search_dense(dense, _content_filter(flt, ["turn"]), limit))


class KeywordRoute:
    name = "keyword"
    needs_dense = False

    def __init__(self, vectors: VectorStore) -> None:
        self.vectors = vectors

    def recall(self, query: Query, limit: int) -> RouteOutput:
        if query.sparse is None or not len(query.sparse):
            return RouteOutput()
        flt = _content_filter(query.flt, ["chunk", "turn"])
        return RouteOutput(self.vectors.search_sparse(query.sparse, flt, limit))


class SummaryRoute:
    """Document and conversation summaries: the live session's ranked by the question
    (agent_memory/retrieval/live_summaries.py), then stored ones by meaning."""

    name = "summaries"
    needs_dense = True

    def __init__(self, vectors, session_summaries=None, stored: bool = True, ranker=None) -> None:
        self.vectors = vectors
        self.stored = stored  # also search stored (ingested) summaries
        # session_summaries(tenant, session_id) -> the live session's compaction summaries, newest first
        self.session_summaries = session_summaries
        self.ranker = ranker  # a LiveSummaryRanker; None: the live summaries newest first, each scored 1.0

    def recall(self, query: Query, limit: int) -> RouteOutput:
        flt = _content_filter(query.flt, ["summary"])
        hits = self.vectors.search_dense(query.dense, flt, limit) if self.stored else []
        notes: dict[str, str] = {}
        if self.session_summaries is not None and query.session_id:
            # The conversation in progress comes first: it is what the question most likely continues.
            found = self.session_summaries(query.tenant, query.session_id)
            if self.ranker is None:
                live = [ScoredItem(item=i, score=1.0) for i in found]
            else:
                ranked = self.ranker.rank(query.text, query.dense, found)
                live = [ScoredItem(item=r.item, score=r.score) for r in ranked]
                notes = {r.item.id: r.why for r in ranked[:limit]}
            hits = live[:limit] + hits[: max(0, limit - len(live))]
        return RouteOutput(hits, notes=notes)


class RecentRoute:
    """The last turns of the given session, newest scored highest."""

    name = "recent"
    needs_dense = False

    def __init__(self, recent_turns) -> None:
        # recent_turns(tenant, session_id, n) -> list[MemoryItem], oldest first
        self.recent_turns = recent_turns

    def recall(self, query: Query, limit: int) -> RouteOutput:
        if not query.session_id:
            return RouteOutput()
        items = self.recent_turns(query.tenant, query.session_id, limit)
        n = len(items)
        return RouteOutput([ScoredItem(item=item, score=(i + 1) / n) for i, item in enumerate(items)])


class GraphRoute:
    """Entities of the question → their pages, their 1-2 hop neighbourhood (facts plus the
    items behind them), and the pages of the neighbours the best facts name.

    Hit scores lie in [0, 1]: a page of an entity the question names scores 1, a neighbour's
    page 0.5, an item behind facts up to 0.5 by how many good facts it carries. The
    reranker reads them as its graph signal.
    """

    name = "graph"
    needs_dense = False

    def __init__(self, graph: GraphStore, vectors: VectorStore, config: RetrievalConfig,
                 pages: Pages | None = None) -> None:
        self.graph = graph
        self.vectors = vectors
        self.pages = pages
        self.max_seeds = config.graph_seeds
        self.hops = config.graph_hops
        self.neighbour_pages = config.graph_neighbour_pages
        self.page_score = config.graph_page_score
        self.neighbour_page_score = config.graph_neighbour_page_score
        self.facts_score = config.graph_facts_score

    def recall(self, query: Query, limit: int) -> RouteOutput:
        scores: dict[str, float] = {}
        items: dict[str, MemoryItem] = {}
        page_scores: dict[str, float] = {}  # by source: the whole page carries its score

        def add(item: MemoryItem, score: float) -> None:
            if passes(item, query.flt) and score > scores.get(item.id, 0.0):
                scores[item.id] = score
                items[item.id] = item

        if self.pages is not None:
            named = [*query.entities, *mentioned_names(query.text)]
            for found in self.pages.of_names(query.tenant, named).values():
                for item in found:
                    add(item, self.page_score)
                    page_scores[item.source_id] = self.page_score
        ranked = self._facts(query, limit)
        behind = list(dict.fromkeys(t.item_id for t in ranked if t.item_id))
        fact_items = {i.id: i for i in self.vectors.get(behind)} if behind else {}
        ranked = [t for t in ranked if t.item_id in fact_items and passes(fact_items[t.item_id], query.flt)]
        # Items behind the best facts, scored by how many good facts they carry.
        weight: dict[str, float] = {}
        for rank, triple in enumerate(ranked):
            weight[triple.item_id] = weight.get(triple.item_id, 0.0) + 1.0 / (rank + 1)
        top = max(weight.values(), default=1.0)
        for item_id, w in weight.items():
            add(fact_items[item_id], self.facts_score * w / top)
        if self.pages is not None and ranked:
            asked = {e.lower() for e in query.entities}
            neighbours = [n for t in ranked for n in (t.subject, t.object) if n.lower() not in asked]
            neighbours = list(dict.fromkeys(neighbours))[: self.neighbour_pages]
            for found in self.pages.of_names(query.tenant, neighbours).values():
                for item in found:
                    add(item, self.neighbour_page_score)
                    page_scores.setdefault(item.source_id, self.neighbour_page_score)
        best = sorted(scores, key=lambda k: (-scores[k], k))[:limit]
        returned = {items[i].source_id for i in best}
        return RouteOutput(hits=[ScoredItem(item=items[i], score=scores[i]) for i in best], facts=ranked[:limit],
                           sources={s: v for s, v in page_scores.items() if s in returned})

    def _facts(self, query: Query, limit: int) -> list[Triple]:
        if not query.entities:
            return []
        # Longest names first (see entities_in_question): each seed costs two lookups, and the
        # specific names carry the question; "film" or "American" add cost, not evidence.
        seeds = query.entities[: self.max_seeds]
        triples = self.graph.neighbourhood(query.tenant, seeds, hops=self.hops, limit=limit * 4)
        if query.flt.source_ids is not None:
            allowed = set(query.flt.source_ids)
            triples = [t for t in triples if t.source_id in allowed]
        return _rank_facts(triples, query) if triples else []


def passes(item: MemoryItem, flt: SearchFilter) -> bool:
    """The filter applied in Python, for items reached without a store query (graph, neighbours)."""
    if item.tenant != flt.tenant:
        return False
    if flt.source_ids is not None and item.source_id not in flt.source_ids:
        return False
    if flt.kinds is not None and item.kind not in flt.kinds:
        return False
    if flt.created_after is not None and item.created_at < flt.created_after:
        return False
    if flt.created_before is not None and item.created_at > flt.created_before:
        return False
    return metafilter.matches(item.metadata, flt.metadata)


@functools.lru_cache(maxsize=1)
def _words():
    return content_words


def _rank_facts(triples: list[Triple], query: Query) -> list[Triple]:
    """Facts touching the question's entities and words first; ties keep graph order."""
    q_words = set(_words()(query.text))
    q_entities = {e.lower() for e in query.entities}

    def score(t: Triple) -> float:
        s = 0.0
        if t.subject.lower() in q_entities or t.object.lower() in q_entities:
            s += 2.0
        fact_words = set(_words()(f"{t.subject} {t.relation} {t.object}"))
        s += len(fact_words & q_words) / (1 + len(fact_words))
        return s + 0.1 * t.confidence

    seen = set()
    unique = []
    for t in triples:
        key = (t.subject.lower(), t.relation.lower(), t.object.lower())
        if key not in seen:
            seen.add(key)
            unique.append(t)
    return sorted(unique, key=score, reverse=True)
