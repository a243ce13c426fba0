"""Links between pages: the multi-hop bridge.

The pages of the entities the best passages name (agent_memory/retrieval/pages.py) get a link score and join the
candidates, and the candidates are reranked once more: "Which band formed the group behind the album
2014 S/S?" names the album; the album's page names the band; the band's page holds the answer.
"""

from __future__ import annotations

from agent_memory.core.text import keyword_set
from agent_memory.retrieval.config import RetrievalConfig
from agent_memory.retrieval.pages import Pages, naming_sentence_overlap
from agent_memory.retrieval.rerank import Reranker
from agent_memory.retrieval.routes import Query, passes
from agent_memory.retrieval.types import Candidate, Decision


def spread(candidates: list[Candidate], by_source: dict[str, float], signal: str) -> None:
    """Give a source-level score to every candidate of that source (the page, not one chunk)."""
    if not by_source:
        return
    for cand in candidates:
        value = by_source.get(cand.item.source_id)
        if value is not None and value > cand.route_scores.get(signal, 0.0):
            cand.route_scores[signal] = value


class LinkFollower:
    """Follows the links of the reranked candidates and reranks them with the link score
    (``similarity``: the pipeline's similarity signals for this question)."""

    def __init__(self, pages: Pages, reranker: Reranker, config: RetrievalConfig) -> None:
        self.pages = pages
        self.reranker = reranker
        self.config = config

    def follow(self, query: Query, ranked: list[Candidate], decisions: list[Decision],
               similarity) -> list[Candidate]:
        """Pages of the entities the best passages name get a link score (every candidate chunk
        of the page; its lead chunk joins the candidates if none is there), then the candidates
        are reranked with it. With link_rounds > 1 this repeats from the new top, so a chain of
        pages is walked a page per round, until the top passages' pages have all been followed."""
        followed: set[str] = set()
        for round_ in range(self.config.link_rounds):
            anchors = [c for c in ranked if c.item.kind == "chunk"][: self.config.link_top]
            if not anchors or (round_ and all(c.item.source_id in followed for c in anchors)):
                break
            followed.update(c.item.source_id for c in anchors)
            ranked = self._round(query, ranked, anchors, decisions, similarity)
        return ranked

    def _round(self, query: Query, ranked: list[Candidate], anchors: list[Candidate],
               decisions: list[Decision], similarity) -> list[Candidate]:
        present = {c.item.source_id for c in ranked}
        strengths: dict[str, float] = {}
        reasons: dict[str, str] = {}
        match = self.config.link_sentence_match
        asked = keyword_set(query.text) if match else frozenset()
        for rank, anchor in enumerate(anchors):
            # A page the question itself names is the surest start of a bridge, wherever it ranks.
            base = max(1.0 / (rank + 1), anchor.route_scores.get("graph", 0.0) if self.config.link_from_pages else 0.0)
            found = self.pages.named_in(query.tenant, anchor.item.text, exclude={anchor.item.source_id})
            for name, items in list(found.items())[: self.config.link_names]:
                strength = base
                if match:
                    # The sentence that names the page says how it relates; one that shares the
                    # question's words ("employs", "spouse") is the relation asked about.
                    shared = naming_sentence_overlap(anchor.item.text, name, asked, anchor.item.source_id)
                    strength = base * (1.0 + match * min(1.0, shared / 2))
                for item in items:
                    if not passes(item, query.flt) or strengths.get(item.source_id, 0.0) >= strength:
                        continue
                    why = f"page of {name!r}, named in {anchor.item.source_id}"
                    if item.source_id not in present:
                        present.add(item.source_id)
                        ranked.append(Candidate(item=item))
                        decisions.append(Decision("links", item.source_id, "added", why))
                    strengths[item.source_id] = strength
                    reasons.setdefault(item.source_id, why)
        if not strengths:
            return ranked
        spread(ranked, strengths, "links")
        for cand in ranked:
            if not cand.note and cand.item.source_id in reasons:
                cand.note = reasons[cand.item.source_id]
        return self.reranker.rerank(query.text, ranked, similarity, terms_query=query.terms_text)
