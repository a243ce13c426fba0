"""The relevance gate of the working-memory view (the "recent" section of a session-aware prompt).

An agent's live thread needs its last exchange whatever it asks next, so the session's newest turns
are always placed. An older turn of the view takes room from recall for a question that is not about
the live thread (LoCoMo dev inside the last session: 0.889 against 0.911 without a session at 1,800
tokens, with the view's 8 turns placed unconditionally), so it is placed only when the question
reaches it: its archived copy ranks among the best passages of this question's recall (it would be
placed as a passage anyway, so showing it in thread order costs no room), or, for a turn recall did not
see at all (not yet archived: archival runs off the request path), it holds enough of the question's
words.
"""

from __future__ import annotations

from agent_memory.core.records import MemoryItem
from agent_memory.core.text import keyword_set
from agent_memory.retrieval.config_parts import RecentView
from agent_memory.retrieval.types import Candidate, Decision


def gate_recent(recent: list[MemoryItem], ranked: list[Candidate], question: str, budget: int, view: RecentView,
                decisions: list[Decision], seen: set[str] | frozenset[str] = frozenset()) -> list[MemoryItem]:
    """The turns of ``recent`` (oldest first) to place: the newest ``view.always``, the older ones whose
    archived copy ranks within ``ranked``'s best budget / ``view.rank_tokens``, and the older ones recall
    did not see at all (their source id not in ``seen``, every candidate recall found) that hold the
    question's words. Each one left out is recorded in ``decisions``."""
    if not recent:
        return recent
    newest = recent[-view.always:] if view.always else []
    older = recent[: len(recent) - len(newest)]
    within = max(1, budget // view.rank_tokens) if view.rank_tokens else 0
    ranked_sources = {c.item.source_id for c in ranked[:within] if c.item.kind == "turn"}
    terms = keyword_set(question)
    kept = []
    for item in older:
        if item.source_id in ranked_sources:
            kept.append(item)
            continue
        # Recall had its say on a turn it saw (ranked beyond what fits): words matching in passing (a
        # speaker's name, a common verb) are no reason to place it over a better passage.
        shared = len(terms & keyword_set(item.text)) if terms and item.source_id not in seen else 0
        if shared and shared >= view.min_terms * len(terms):
            kept.append(item)
            continue
        why = ((f"recalled, but not among the best {within} passages" if within else "recalled: placed among the "
                "passages if it ranks within what fits") if item.source_id in seen
               else f"not recalled, and holding {shared} of the question's {len(terms)} terms")
        decisions.append(Decision("recent", item.source_id, "dropped", f"older turn of the view {why}"))
    return kept + newest
