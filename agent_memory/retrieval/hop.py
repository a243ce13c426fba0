"""The second hop: a search that follows what the first round found (issue 34, item 1).

A multi-hop question names one thing and asks about another that only a passage names: "Who was
the first president of the association which published Journal of Psychotherapy Integration?" —
the journal's paragraph names the association; the association's paragraph names its first
president. The links (agent_memory/retrieval/links.py) reach the second paragraph only when it is the *page*
of the name (its title); MuSiQue's second paragraphs often are not, and conversations have no
pages at all. This route asks again: for each of the best first-round passages, the names it
mentions that the question does not (its bridges, those in the sentences that share the question's
words first), each with the question's words the passage does not hold (what is left to find), are
searched by keyword; the first of these hop texts is also read by meaning, against the candidates'
stored vectors (a paragraph that says "Finnish" and not "Finland" is found by meaning).
What the searches find gets a hop score (anchor rank and hit rank both discount it), joins the
candidates if it was not among them, and the candidates are reranked once more with it.
"""

from __future__ import annotations

import logging
import re
from concurrent.futures import Executor, Future
from contextlib import contextmanager

import numpy as np

from agent_memory.core.entities import normalize_name
from agent_memory.core.errors import StoreError
from agent_memory.core.records import ScoredItem
from agent_memory.core.text import STOPWORDS, all_cjk, content_words, has_cjk, keyword_set, keyword_terms
from agent_memory.index.triples.base import GENERIC  # the type of a noun phrase that names no entity
from agent_memory.retrieval.config import RetrievalConfig
from agent_memory.retrieval.pages import mentioned_names, naming_sentence_overlap
from agent_memory.retrieval.rerank import Reranker
from agent_memory.retrieval.routes import Query, _content_filter, passes
from agent_memory.retrieval.types import Candidate, Decision

log = logging.getLogger(__name__)


def bridge_names(text: str, question: str, asked: frozenset[str], own: str, limit: int) -> list[str]:
    """The names ``text`` mentions that add to the question: not a name the question holds (or whose
    words it holds), not the passage's own title or words of it ("Kestrel" of "Kestrel Dynamics"), not
    a span across a sentence end, a number or one that starts with a function word ("It was ..."), a
    name (``_a_name``), only the longest of overlapping spans; those named in a sentence that shares a
    word with the question first, then in order of mention. A name's sentences are read only until
    ``limit`` names of such sentences are found (a passage names a hundred spans at 100k items, cold)."""
    lowered, title = question.lower(), own.lower()
    spans = [n for n in mentioned_names(text)
             if f" {n.lower()} " not in f" {title} " and n.lower() not in lowered and not _SENTENCE_BREAK.search(n)
             and not n.isdigit() and n.split()[0].lower() not in STOPWORDS and _a_name(n)]
    kept = _longest_adding(spans, asked, separable="\x00" not in text)
    relevant: list[str] = []
    others: list[str] = []
    for name in (n for n in spans if n in kept):
        if len(relevant) >= limit:
            break
        (relevant if naming_sentence_overlap(text, name, asked, own) > 0 else others).append(name)
    return (relevant + others)[:limit]


def _longest_adding(spans: list[str], asked: frozenset[str], separable: bool) -> set[str]:
    """Those of ``spans`` (distinct) whose keyword terms add to ``asked`` and that are no part of
    another such span. Longest first, so a span inside one already kept is dropped before its terms
    are read: keyword_set runs jieba on a Chinese span, and a Chinese passage names hundreds of
    them, most inside a longer one (the pairwise test and the segmenting of every span took most of
    the hop's time at 11k items). ``separable``: no span holds a NUL, so the kept spans are searched
    joined by NULs, in one C-level find that no match spans two of. A span is part of another as
    whole words ("Mississippi" is no part of "Plaquemine Mississippian"); Chinese, written without
    spaces, as characters."""
    kept: set[str] = set()
    joined = ""  # the kept spans, each between NUL and spaces: " span " finds whole words
    known = frozenset("".join(asked)) | _STOPWORD_CHARS
    for span in sorted(spans, key=len, reverse=True):  # only a longer span can hold another
        needle = span if has_cjk(span) else f" {span} "
        if (needle in joined) if separable else any(needle in f" {k} " for k in kept):
            continue
        if _adds(span, asked, known):
            kept.add(span)
            joined += "\x00 " + span + " "
    return kept


_STOPWORD_CHARS = frozenset("".join(STOPWORDS))


def _adds(span: str, asked: frozenset[str], known: frozenset[str]) -> bool:
    """``keyword_set(span)`` is not empty and not within ``asked``. A Chinese span with a character
    that no term of ``asked`` and no stopword holds (``known``) says so without jieba: its words
    are pieces of it, and the one holding that character is a term and not one of ``asked``."""
    if all_cjk(span) and not known.issuperset(span):
        return True
    terms = keyword_set(span)
    return bool(terms) and not terms <= asked


def unanswered(question: str, text: str, terms: str | None = None) -> str:
    """The question's content words that ``text`` does not hold (stemmed match), in order: what is
    left to find once the passage is read ("first president" of "Who was the first president of the
    association which published the journal?", when the journal's passage names its publisher).
    ``terms``: the text's keyword set as stored with its item (``MemoryItem.terms``), when it has one:
    an anchor new to this process is then not segmented (a Chinese passage: jieba over all of it)."""
    held = frozenset(terms.split()) if terms is not None else keyword_set(text)
    return " ".join(w for w in content_words(question) if _stem_of(w) not in held)


def _stem_of(word: str) -> str:
    terms = keyword_terms(word)
    return terms[0] if terms else word


_SENTENCE_BREAK = re.compile(r"[.!?。！？]\s|[:;,，：；]")
# The lower-case words a name holds between its capitalized ones ("Bank of England", "Guns and
# Roses", "Ludwig van Beethoven"); any other ("Plaquemine Mississippian culture in Hinds") makes the
# span a stretch of a sentence, which, kept as the longest span, hid the names inside it.
_NAME_JOINERS = frozenset({"of", "the", "and", "&", "de", "del", "della", "der", "den", "des", "di", "da", "do",
                           "du", "la", "le", "van", "von", "y", "for", "on", "upon", "at", "a", "an", "n'"})
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f]")


def _a_name(span: str) -> bool:
    """A span that reads as a name: its parentheses closed ("Pocahontas Mounds (22 HI 500" is not),
    its inner lower-case words joiners only, not a code of numbers and capitals, and written in
    Latin letters or Chinese (a name in a script whose letters are all capitals, as Cherokee "ᏔᎾᏏ",
    is a gloss, not a bridge)."""
    if span.count("(") != span.count(")") or not (_LATIN.search(span) or has_cjk(span)):
        return False
    if all_cjk(span):
        return True
    words = span.split()
    if any(w.isdigit() for w in words) and all(w.isdigit() or w.isupper() for w in words):
        return False  # a code or a date ("22 HI 500", "22 HI"), not a name ("2014 FIFA World Cup" is)
    if len(words) == 1 and len(span) <= 2:
        return False  # "HI", "US": too short to search by
    return all(w[0].isupper() or w[0].isdigit() or w.lower() in _NAME_JOINERS or has_cjk(w[0]) for w in words[1:-1])


def _closest(candidates: list[Candidate], space: str, vector: np.ndarray, flt, limit: int) -> list[ScoredItem]:
    """The ``limit`` candidates (with a stored vector in ``space``) closest to ``vector``, best first."""
    pool = [c for c in candidates if c.vector is not None and c.vector_space == space and passes(c.item, flt)]
    if not pool:
        return []
    cosines = np.vstack([c.vector for c in pool]) @ np.asarray(vector, dtype=np.float32)
    return [ScoredItem(item=pool[i].item, score=float(cosines[i])) for i in np.argsort(-cosines)[:limit]]


def _below_their_anchors(ranked: list[Candidate], leads: dict[str, str], signal: float) -> list[Candidate]:
    """The hop lifts a hit at most to right below the passage whose bridge found it, never past it:
    the passage that named the bridge is half of the answer (and, when the question asks for that
    name, all of it: "who organized ...?" names the organizer, whose other notes must not push it
    out). A hit that ranked above its anchor without the hop's bonus keeps its own place."""
    final = {c.item.id: c.final for c in ranked}
    for cand in ranked:
        anchor = leads.get(cand.item.id)
        if anchor in final and cand.final >= final[anchor]:
            own = cand.final - signal * cand.route_scores.get("hop", 0.0)
            cand.final = max(own, final[anchor] - 1e-6)
    return sorted(ranked, key=lambda c: -c.final)


class SecondHop:
    """Searches again from the best candidates' bridge names; reranks with the hop score."""

    def __init__(self, services, reranker: Reranker, config: RetrievalConfig) -> None:
        self.services = services
        self.reranker = reranker
        self.config = config
        # Set by the pipeline (its route threads): the hop texts read by meaning are embedded there
        # while this thread runs the keyword searches (the model releases the GIL; the searches hold it).
        self.pool: Executor | None = None

    def follow(self, query: Query, ranked: list[Candidate], decisions: list[Decision], similarity,
               spaces: list[str], found: list[dict] | None = None) -> list[Candidate]:
        """``found`` (debug): one row per hit of the hop's searches, for the dump. With hop_rounds > 1
        the hop starts again from the new top (a passage found by one hop leads to the next: 3 and 4
        hops), until the top hop_top have all been followed."""
        followed: set[str] = set()
        strengths: dict[str, float] = {}
        leads: dict[str, str] = {}  # hit id -> the id of the passage whose bridge found it
        for _ in range(self.config.hop_rounds):
            # As the links: the best passages of the kinds that name things (document chunks; a
            # conversation's capitalized words are its speakers and its greetings).
            kinds = self.config.hop_kinds
            eligible = [(rank, c) for rank, c in enumerate(ranked) if c.item.kind in kinds][: self.config.hop_top]
            anchors = [(rank, c) for rank, c in eligible if c.item.id not in followed]
            if not anchors:
                break
            followed.update(c.item.id for _, c in anchors)
            if not self._round(query, ranked, anchors, strengths, leads, decisions, spaces, found):
                break
            ranked = self.reranker.rerank(query.text, ranked, similarity, terms_query=query.terms_text)
            if self.config.hop_below_anchor:
                ranked = _below_their_anchors(ranked, leads, self.config.hop_signal)
        return ranked

    def _round(self, query: Query, ranked: list[Candidate], anchors: list[tuple[int, Candidate]],
               strengths: dict[str, float], leads: dict[str, str], decisions: list[Decision], spaces: list[str],
               found: list[dict] | None) -> bool:
        """One hop from ``anchors``; True when it scored anything."""
        cfg = self.config
        asked = keyword_set(query.text)
        by_id = {c.item.id: c for c in ranked}
        reasons: dict[str, str] = {}
        searches: list[tuple[int, Candidate, str, str]] = []  # (anchor rank, anchor, bridge, hop text)
        for rank, anchor in anchors:
            own = str(anchor.item.metadata.get("title") or "")
            rest = unanswered(query.text, anchor.item.text, anchor.item.terms)
            bridges = bridge_names(anchor.item.text, query.text, asked, own, cfg.hop_bridges * 4)
            for bridge in self._named(query.tenant, bridges)[: cfg.hop_bridges]:
                searches.append((rank, anchor, bridge, f"{bridge} {rest}".strip()))
        texts = list(dict.fromkeys(text for *_, text in searches))
        embedded = {text: self._embedding(text, spaces)
                    for text in (texts[: cfg.hop_dense_texts or None] if cfg.hop_dense else [])}
        # Every keyword search first, then the readings by meaning: their embeddings are done by then.
        # Each distinct text once (two anchors may name one bridge).
        flt = _content_filter(query.flt, [k for k in cfg.hop_kinds if k in ("chunk", "turn")])
        lists = {text: [self._by_keyword(text, flt)] for text in texts}
        for text, pending in embedded.items():
            if pending is not None:
                lists[text].append(self._by_meaning(pending, ranked, flt))
        found_by = {text: _best_ranks(hit_lists) for text, hit_lists in lists.items()}
        for (rank, anchor, bridge, text) in searches:
            for h_rank, hit in found_by[text]:
                item = hit.item
                if item.source_id == anchor.item.source_id or not passes(item, query.flt):
                    continue
                # Only what the hop's search puts near its top counts: its later hits are the
                # first round's again (they share the question's words, not the bridge).
                strength = 1.0 / (rank + 1) / (1.0 + h_rank) ** 2
                why = f"found by {bridge!r}, named in {anchor.item.source_id}"
                if found is not None:
                    found.append({"rank": len(found) + 1, "id": item.id, "source_id": item.source_id,
                                  "kind": item.kind, "score": round(strength, 5),
                                  "text": f"[{bridge}] {item.text[:140]}"})
                if strength <= strengths.get(item.id, 0.0):
                    continue
                if item.id not in by_id:
                    by_id[item.id] = Candidate(item=item)
                    ranked.append(by_id[item.id])
                    decisions.append(Decision("hop", item.source_id, "added", why))
                strengths[item.id] = strength
                leads[item.id] = anchor.item.id
                reasons[item.id] = why
        if not reasons:
            return False
        for hop_rank, (item_id, strength) in enumerate(sorted(strengths.items(), key=lambda p: -p[1]), start=1):
            cand = by_id[item_id]
            cand.route_scores["hop"] = strength
            cand.route_ranks["hop"] = hop_rank
            if item_id in reasons:
                cand.note = cand.note or reasons[item_id]
        return True

    def _named(self, tenant: str, bridges: list[str]) -> list[str]:
        """The bridges that are names. A capital says so in a script that has capitals; a Chinese span
        (every jieba word is a candidate there) counts only as a named entity of the tenant's graph:
        "合唱团明年三月的音乐会" is a phrase, and following it brought in every note of the choir."""
        cjk = [b for b in bridges if has_cjk(b)]
        if not cjk:
            return bridges
        try:
            named = {normalize_name(e.name) for e in self.services.graph.find_entities(tenant, cjk)
                     if e.type != GENERIC}
        except StoreError:
            raise
        except Exception as exc:  # noqa: BLE001 - without the graph, no Chinese bridges
            log.warning("second hop: entity lookup failed: %s", exc)
            named = set()
        return [b for b in bridges if not has_cjk(b) or normalize_name(b) in named]

    def _embedding(self, text: str, spaces: list[str]) -> Future | None:
        """The hop text's vector, in the space a passage written like it is stored in (ingestion's
        rule: a bridge and what it leads to are written in one language, and the multilingual model
        costs seven times the English one a text); None when the question has no such space."""
        own = self.services.embedder.space_for(text)
        if own not in spaces:
            return None
        if self.pool is None:
            done: Future = Future()
            done.set_result(self.services.embedder.embed_query(text, [own]))
            return done
        return self.pool.submit(self.services.embedder.embed_query, text, [own])

    def _by_keyword(self, text: str, flt) -> list[ScoredItem]:
        """The hop text's keyword search."""
        with _optional("keyword"):
            sparse = self.services.sparse_encoder.encode_query(text)
            return self.services.vectors.search_sparse(sparse, flt, self.config.hop_limit) if len(sparse) else []
        return []

    def _by_meaning(self, pending: Future, ranked: list[Candidate], flt) -> list[ScoredItem]:
        """The hop text read by meaning (its vector from ``_embedding``): among the candidates, or
        (``hop_dense_scope`` "store") searched in the store."""
        with _optional("meaning"):
            vector = pending.result()
            if self.config.hop_dense_scope == "store":
                return self.services.vectors.search_dense(vector, flt, self.config.hop_limit)
            [(space, query_vector)] = vector.items()
            return _closest(ranked, space, query_vector, flt, self.config.hop_limit)
        return []


@contextmanager
def _optional(what: str):
    """A hop search that fails is logged and skipped: the second hop is optional and the first round
    stands. A store that is down is the caller's 503, as in the first round."""
    try:
        yield
    except StoreError:
        raise
    except Exception as exc:  # noqa: BLE001 - any other failure leaves the hop without these hits
        log.warning("second hop search (%s) failed: %s", what, exc)


def _best_ranks(lists: list[list[ScoredItem]]) -> list[tuple[int, ScoredItem]]:
    """Each item of ``lists`` with its best rank in any of them, best first (the earlier list's item
    first on a tie)."""
    out: dict[str, tuple[int, ScoredItem]] = {}
    for hits in lists:
        for rank, hit in enumerate(hits):
            if hit.item.id not in out or rank < out[hit.item.id][0]:
                out[hit.item.id] = (rank, hit)
    return sorted(out.values(), key=lambda p: p[0])
