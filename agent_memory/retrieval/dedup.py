"""De-duplication: overlapping spans of one source, identical content, near-duplicates."""

from __future__ import annotations

import numpy as np

from agent_memory.core.text import keyword_set
from agent_memory.retrieval.spread import is_aggregation
from agent_memory.retrieval.succession import anchor_phrase
from agent_memory.retrieval.types import Candidate, Decision


def deduplicate(candidates: list[Candidate], vectors: np.ndarray | None, near_duplicate: float,
                decisions: list[Decision], spaces: list[str] | None = None,
                new_numbers_distinct: bool = True, words_shared: float = 0.8,
                question_terms: frozenset[str] = frozenset(), longer_span_replaces: bool = False,
                turn_words_shared: float | None = None) -> list[Candidate]:
    """Keep the better-scored of each duplicate pair (candidates arrive best first). Two overlapping
    spans of one source are one: the later is dropped, unless (``longer_span_replaces``) the kept one
    lies mostly inside it and it is mostly new, when it takes the kept one's place (a chunk that is
    mostly the overlap with the one before it, ranked first, would otherwise hide that whole chunk). ``spaces``: the
    embedding space of each row of ``vectors``; rows of two spaces are never compared by cosine.
    A near-duplicate passes the cosine ``near_duplicate``, has at least ``words_shared`` of its keyword
    terms in the kept one, and says nothing more that matters (``says_more``): with
    ``new_numbers_distinct``, no number the kept one lacks; no term of ``question_terms`` (the
    question's keyword terms) the kept one lacks. Between two conversation turns the share is
    ``turn_words_shared`` where given: two turns are two things said, and one that swaps a word of the other
    ("这周末终于听到了林俊杰的现场" beside "… 张学友的现场", "took a pottery class" beside "a tea class") tells
    another fact; a document's chunks keep ``words_shared`` (a list page beside the page it lists)."""
    kept: list[Candidate] = []
    kept_rows: list[int] = []
    # Every pair's cosine at once (one matrix product), rows of two spaces never close: cheaper than
    # a product per candidate against the rows kept so far, which copies them each time.
    sims_all = None
    if vectors is not None and len(candidates) > 1:
        sims_all = np.asarray(vectors, dtype=np.float32) @ np.asarray(vectors, dtype=np.float32).T
        if spaces is not None:
            codes = {s: i for i, s in enumerate(dict.fromkeys(spaces))}
            space_ids = np.array([codes[s] for s in spaces])
            sims_all[space_ids[:, None] != space_ids[None, :]] = 0.0
    # Rows no earlier row comes close to cannot be near-duplicates of a kept one: most rows, told
    # in one comparison instead of a lookup per row (150 candidates: about 2 ms a question).
    # (The lower triangle: the very cells the loop reads, sims_all[row, earlier].)
    close_to_earlier = (np.tril(sims_all >= near_duplicate, k=-1).any(axis=1) if sims_all is not None
                        else None)
    seen_hashes: dict[str, str] = {}
    by_source: dict[tuple[str, str], list[Candidate]] = {}
    for row, cand in enumerate(candidates):
        item = cand.item
        reason = None
        replaced = False
        if item.content_hash and item.content_hash in seen_hashes:
            reason = f"same content as {seen_hashes[item.content_hash]}"
        else:
            group = by_source.get((item.source_id, item.kind), [])
            for at, other in enumerate(group):
                if _overlap(other.item, item) > 0.5:
                    if longer_span_replaces and _mostly_new(item, other.item):
                        # It takes the place (and the rank) of the kept span it holds.
                        place = next(i for i, c in enumerate(kept) if c is other)
                        kept[place], kept_rows[place], group[at] = cand, row, cand
                        decisions.append(Decision("dedup", other.item.id, "replaced",
                                                  f"lies inside {item.id}, the longer span of the same source"))
                        if item.content_hash:
                            seen_hashes[item.content_hash] = item.id
                        replaced = True
                    else:
                        reason = f"overlaps {other.item.id} of the same source"
                    break
            if reason is None and not replaced and sims_all is not None and kept_rows and close_to_earlier[row]:
                sims = sims_all[row, kept_rows]
                # Cosine alone is not enough: some embedders (e5) put distinct passages of one
                # topic above 0.95. A near-duplicate must also say nearly the same words, and its
                # own words: a longer passage that holds a kept short one adds what it lacks.
                close = np.flatnonzero(sims >= near_duplicate)
                for best in close[np.argsort(-sims[close])]:
                    other = kept[int(best)].item
                    shared = words_covered(item.text, by=other.text)
                    needed = (turn_words_shared if turn_words_shared is not None and item.kind == other.kind == "turn"
                              else words_shared)
                    if shared >= needed and not says_more(item.text, other.text, new_numbers_distinct, question_terms):
                        reason = (f"near-duplicate of {other.id} (cosine {sims[best]:.3f},"
                                  f" {shared:.0%} of words shared)")
                        break
        if replaced:
            continue
        if reason:
            decisions.append(Decision("dedup", item.id, "dropped", reason))
            continue
        kept.append(cand)
        kept_rows.append(row)
        by_source.setdefault((item.source_id, item.kind), []).append(cand)
        if item.content_hash:
            seen_hashes[item.content_hash] = item.id
    return kept


def asks_for_other_wordings(question: str) -> bool:
    """Whether the question's answer is likely said in the words of another turn, one word changed: a collection
    ("我都看过谁的现场？": every outing told alike) or what came before X ("我搬到宁波之前住在哪里？": the move
    before it, told in the same words). The pipeline then passes ``turn_words_shared``: such turns are no
    near-duplicates of each other."""
    return is_aggregation(question) or anchor_phrase(question) is not None


def words_covered(text: str, by: str) -> float:
    """Share of ``text``'s distinct keyword terms that ``by`` also has."""
    own, other = keyword_set(text), keyword_set(by)
    if not own:
        return 1.0 if not other else 0.0
    return len(own & other) / len(own)


def new_numbers(text: str, by: str) -> frozenset[str]:
    """The numbers ``text`` holds and ``by`` does not. Two statements one template apart ("the
    family's dinner had 56 people" / "the classmates' dinner had 6 people", "on 7 May" / "on 8
    May") share most words and a cosine above 0.95, and say different things: the number is the
    fact. A passage sent twice keeps its numbers."""
    return frozenset(t for t in keyword_set(text) - keyword_set(by) if any(ch.isdigit() for ch in t))


def says_more(text: str, by: str, numbers: bool, question_terms: frozenset[str]) -> bool:
    """``text`` holds what ``by`` lacks and what matters: a number (when ``numbers``), or a term of
    the question: it answers a part of the question ``by`` does not ("高中同学上个月的运动会的人数是27人"
    beside "高中同学明年三月的运动会的人数是27人", asked about 上个月)."""
    if numbers and new_numbers(text, by=by):
        return True
    return bool((keyword_set(text) & question_terms) - keyword_set(by))


def _mostly_new(longer, kept) -> bool:
    """``longer`` is the longer span and more than half of it lies outside ``kept``."""
    length = longer.end - longer.start
    inter = min(longer.end, kept.end) - max(longer.start, kept.start)
    return length > kept.end - kept.start and inter * 2 < length


def _overlap(a, b) -> float:
    inter = min(a.end, b.end) - max(a.start, b.start)
    shorter = min(a.end - a.start, b.end - b.start)
    return inter / shorter if shorter > 0 and inter > 0 else 0.0
