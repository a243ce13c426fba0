"""Questions placed in time by the memory itself, not by the calendar: what holds now, and what came before
something the question names.

A user's circumstances change and are told again: "I report to Daniel now" in September, "My new manager is
Fazle" in January. Both answer "Who do I report to these days?" by their words; only the later one by its
time. And "Who was my manager before Fazle?" names an event the memory holds ("My new manager is Fazle",
said in January): its answer was said before that event, and its words are the question's other words, not
the name (which draws the event itself and every passage that mentions Fazle).

Both are reranker bonuses added after the reranker, as the time window's is (agent_memory/retrieval/when.py),
never a filter:

- **Now.** A question that asks about the present ("now", "currently", "these days", 现在, 目前) and names no
  window of its own: each dated candidate gets ``present_recency`` times its place in time among the
  candidates (the newest 1, the oldest 0). "Recently" is not the present: LoCoMo's "What did Melanie paint
  recently?" asks about any time of the conversation.
- **Before.** "... before X?" (English) or "X之前 / X以前 ..." (Chinese) where X is no time the calendar reads
  ("before June" is a window): the anchor is the best-ranked candidate holding at least ``anchor_coverage`` of
  X's keyword terms; the anchor and each candidate dated before it get ``before_anchor`` (the anchor stays
  beside them: when X happened is half the answer). "After X" is left alone: its answer is mostly told with X itself
  (LoCoMo: "What did Melanie do after the road trip to relax?").
"""

from __future__ import annotations

import re
from datetime import datetime

from agent_memory.core.text import ASKED_NOW, has_cjk
from agent_memory.retrieval.rerank.signals import term_coverage
from agent_memory.retrieval.time_windows import DateSlack
from agent_memory.retrieval.types import Candidate, Decision
from agent_memory.retrieval.when import parse_stamp, question_window

_NOW = re.compile(r"\b(?:now|current)\b", re.IGNORECASE)
_BEFORE = re.compile(r"\b(?:before|prior to)\s+(.+?)[\s?？.!]*$", re.IGNORECASE)
_BEFORE_ZH = re.compile(r"^(.+?)(?:之前|以前)")


def asks_now(question: str) -> str | None:
    """The words by which a question asks about the present, if it does."""
    match = ASKED_NOW.search(question) or _NOW.search(question)
    return match.group(0) if match else None


def anchor_phrase(question: str) -> str | None:
    """X of "... before X?" or "X之前 ...", if the question has one."""
    match = _BEFORE_ZH.search(question) if has_cjk(question) else _BEFORE.search(question)
    return match.group(1).strip() if match else None


def _times(candidates: list[Candidate]) -> list[datetime | None]:
    return [parse_stamp(c.item.metadata.get("timestamp") or "") for c in candidates]


def order_in_time(question: str, question_date: str | None, candidates: list[Candidate], *,
                  present_recency: float, before_anchor: float, anchor_coverage: float, top: int,
                  slack: DateSlack, decisions: list[Decision]) -> list[Candidate]:
    """``candidates`` (reranked, best first) with the now and before bonuses added to the scores of the first
    ``top``, re-sorted; unchanged when the question asks neither, names a window of its own, or none is dated.
    Only the first ``top``: time chooses among what the question's words found, it brings up nothing they did
    not (a long history's every earlier turn is "before" an event)."""
    if not candidates or not (present_recency or before_anchor):
        return candidates
    asked_on = parse_stamp(question_date) if question_date else datetime.now()
    if question_window(question, asked_on, slack) is not None:
        return candidates  # a window the calendar reads is the time signal's (agent_memory/retrieval/when.py)
    head = candidates[:top]
    times = _times(head)
    bonus: list[float] | None = None
    if before_anchor and (phrase := anchor_phrase(question)):
        bonus = _before(phrase, head, times, before_anchor, anchor_coverage, decisions)
    elif present_recency and (words := asks_now(question)):
        bonus = _newest(words, times, present_recency, decisions)
    if bonus is None:
        return candidates
    for cand, extra in zip(head, bonus):
        if extra:
            cand.route_scores["timeline"] = extra
            cand.final += extra
    return sorted(candidates, key=lambda c: -c.final)


def _newest(words: str, times: list[datetime | None], weight: float, decisions: list[Decision]) -> list[float] | None:
    dated = [t for t in times if t is not None]
    if len(dated) < 2 or min(dated) == max(dated):
        return None
    first, span = min(dated), (max(dated) - min(dated)).total_seconds()
    decisions.append(Decision("timeline", words, "newest", f"the question asks about the present: the {len(dated)} dated "
                              f"of the best candidates get up to {weight:g}, the newest most"))
    return [weight * (t - first).total_seconds() / span if t is not None else 0.0 for t in times]


def _before(phrase: str, candidates: list[Candidate], times: list[datetime | None], weight: float, coverage: float,
            decisions: list[Decision]) -> list[float] | None:
    covered = term_coverage(phrase, [c.item.text for c in candidates], [c.item.terms for c in candidates])
    anchor = next((i for i, share in enumerate(covered) if share >= coverage and times[i] is not None), None)
    if anchor is None:
        decisions.append(Decision("timeline", phrase, "no anchor", f"none of the best dated candidates holds "
                                  f"{coverage:.0%} of its terms"))
        return None
    until = times[anchor]
    earlier = sum(1 for t in times if t is not None and t < until)
    if not earlier:
        return None
    decisions.append(Decision("timeline", phrase, "before", f"anchored at {candidates[anchor].item.source_id} "
                              f"({until:%Y-%m-%d}): it and the {earlier} candidates said before it get {weight:g}"))
    # Flat, not the later the more: "How many properties did I view before making an offer?" wants every one of
    # them (graded by time, LongMemEval lost one; the updates kind read the same either way).
    return [weight if i == anchor or (t is not None and t < until) else 0.0 for i, t in enumerate(times)]
