"""Succession: questions placed in time by the memory itself, not by the calendar. What holds now (what was said
last), and what came before something the question names.

A user's circumstances change and are told again: "I report to Daniel now" in September, "My new manager is
Fazle" in January. Both answer "Who do I report to these days?" by their words; only the later one by its
time. And "Who was my manager before Fazle?" names an event the memory holds ("My new manager is Fazle",
said in January): its answer was said before that event, and its words are the question's other words, not
the name (which draws the event itself and every passage that mentions Fazle).

Both are reranker bonuses added after the reranker (and its links and hop), on its best ``succession_top``
candidates only (the assistant's turns among them excepted), never a filter; time is counted in days, so that a
session ingested as a transcript (one time) and appended message by message (a time each) reads alike:

- **Now.** A question that asks about the present ("now", "currently", "these days", 现在, 目前) and names no
  window the calendar reads (agent_memory/retrieval/when.py): each dated candidate gets ``present_recency`` times
  its place in time among them (the newest 1, the oldest 0). "Recently" is not the present: LoCoMo's "What did
  Melanie paint recently?" asks about any time of the conversation. 最近 is, where no 了 or 过 marks the event
  finished ("我最近用哪款手机？").
- **Before.** "... before X?" (English) or "X之前 / X以前 ..." (Chinese) where X is no time the calendar reads
  ("before June" is a window): the anchor is the best-ranked candidate holding at least ``anchor_coverage`` of
  X's keyword terms; the anchor and each candidate said on an earlier day get ``before_anchor`` (the anchor stays
  beside them: when X happened is half the answer). Where the memory is dated, X is a time, not what the
  question asks about: the reranker's term coverage reads the question without it (``terms_question``). "After
  X" is left alone: its answer is mostly told with X itself (LoCoMo: "What did Melanie do after the road trip to
  relax?").
"""

from __future__ import annotations

import re
from datetime import date

from agent_memory.core.roles import speaker_role
from agent_memory.core.text import ASKED_NOW, has_cjk
from agent_memory.retrieval.rerank.signals import term_coverage
from agent_memory.retrieval.types import Candidate, Decision
from agent_memory.retrieval.when import said_on

_NOW = re.compile(r"\b(?:now|current)\b", re.IGNORECASE)
# 最近 is "lately" (a state that holds) unless the question marks a finished event with 了 or 过: "我最近用哪款手机？"
# asks what holds, "他最近一次出去玩去了哪座城市？" about an outing.
_LATELY_ZH = re.compile(r"最近")
_FINISHED_ZH = re.compile(r"[了过]")
_BEFORE = re.compile(r"\b(?:before|prior to)\s+(.+?)[\s?？.!]*$", re.IGNORECASE)
_BEFORE_ZH = re.compile(r"^(.+?)(?:之前|以前)")


def asks_now(question: str) -> str | None:
    """The words by which a question asks about the present, if it does."""
    match = ASKED_NOW.search(question) or _NOW.search(question)
    if match is None and not _FINISHED_ZH.search(question):
        match = _LATELY_ZH.search(question)
    return match.group(0) if match else None


def anchor_phrase(question: str) -> str | None:
    """X of "... before X?" or "X之前 ...", if the question has one."""
    match = _BEFORE_ZH.search(question) if has_cjk(question) else _BEFORE.search(question)
    return match.group(1).strip() if match else None


def _days(candidates: list[Candidate]) -> list[date | None]:
    """The day each candidate was said (``said_on``)."""
    return [said_on(c.item) for c in candidates]


def without_anchor(question: str) -> str:
    """The question without its "before X" (X之前): what it asks about, X being a time."""
    if has_cjk(question):
        return _BEFORE_ZH.sub(" ", question, count=1)
    return _BEFORE.sub(" ", question, count=1)


def terms_question(question: str, candidates: list[Candidate], *, before_anchor: float, calendar_window: bool,
                   decisions: list[Decision]) -> str | None:
    """What the reranker's term coverage reads of a "before X" question when its memory is dated: the question
    without X. X is when, not what: "Who was my manager before Fazle Newcombe?" shares "Fazle Newcombe" with the
    event and every passage that names him, and not with the answer, said before him. None (the question as it
    is) for any other question, and where no candidate is dated (documents: X is then what the question asks
    about, "released before Donna Tartt was born"). ``calendar_window``: whether the question names a window the
    calendar reads ("before June"), which is the time signal's."""
    if not before_anchor or calendar_window or not (phrase := anchor_phrase(question)):
        return None
    if not any(_days(candidates)):
        return None
    decisions.append(Decision("succession", phrase, "not a term", "the question names it as a time: left out of its "
                              "term coverage"))
    return without_anchor(question)


def order_in_time(question: str, candidates: list[Candidate], *, present_recency: float, before_anchor: float,
                  anchor_coverage: float, top: int, calendar_window: bool,
                  decisions: list[Decision]) -> list[Candidate]:
    """``candidates`` (reranked, best first) with the now and before bonuses added to the scores of the first
    ``top``, re-sorted; unchanged when the question asks neither, names a window the calendar reads
    (``calendar_window``: that is the time signal's, agent_memory/retrieval/when.py), or none is dated.
    Only the first ``top``: time chooses among what the question's words found, it brings up nothing they did
    not (a long history's every earlier turn is "before" an event)."""
    if not candidates or not (present_recency or before_anchor) or calendar_window:
        return candidates
    head = candidates[:top]
    days = _days(head)
    bonus: list[float] | None = None
    if before_anchor and (phrase := anchor_phrase(question)):
        bonus = _before(phrase, head, days, before_anchor, anchor_coverage, decisions)
    elif present_recency and (words := asks_now(question)):
        bonus = _newest(words, days, present_recency, decisions)
    if bonus is None:
        return candidates
    for cand, extra in zip(head, bonus):
        if extra and not _assistant(cand):
            cand.route_scores["succession"] = extra
            cand.final += extra
    return sorted(candidates, key=lambda c: -c.final)


def _assistant(candidate: Candidate) -> bool:
    """Whether the candidate is an assistant's turn, which gets no bonus of time: what holds and what came before are
    what the user told ("My new manager is Fazle."); the assistant's "Okay, noted." beside it, among the best ten by
    its neighbour's and its session's share, took a place in the prompt with the bonus (updates kind, held out on
    seeds 13 and 14: +1 to +3 points in each of eight cells, at 200 and 300 tokens, both languages)."""
    return candidate.item.kind == "turn" and speaker_role(candidate.item.metadata.get("speaker")) == "assistant"


def _newest(words: str, days: list[date | None], weight: float, decisions: list[Decision]) -> list[float] | None:
    dated = [d for d in days if d is not None]
    if len(dated) < 2 or min(dated) == max(dated):
        return None
    first, span = min(dated), (max(dated) - min(dated)).days
    decisions.append(Decision("succession", words, "newest", f"the question asks about the present: the {len(dated)} dated "
                              f"of the best candidates get up to {weight:g}, the newest most"))
    return [weight * (d - first).days / span if d is not None else 0.0 for d in days]


def _before(phrase: str, candidates: list[Candidate], days: list[date | None], weight: float, coverage: float,
            decisions: list[Decision]) -> list[float] | None:
    covered = term_coverage(phrase, [c.item.text for c in candidates], [c.item.terms for c in candidates])
    anchor = next((i for i, share in enumerate(covered) if share >= coverage and days[i] is not None), None)
    if anchor is None:
        decisions.append(Decision("succession", phrase, "no anchor", f"none of the best dated candidates holds "
                                  f"{coverage:.0%} of its terms"))
        return None
    until = days[anchor]
    earlier = sum(1 for d in days if d is not None and d < until)
    if not earlier:
        return None
    decisions.append(Decision("succession", phrase, "before", f"anchored at {candidates[anchor].item.source_id} "
                              f"({until:%Y-%m-%d}): it and the {earlier} candidates said on earlier days get {weight:g}"))
    # Flat, not the later the more: "How many properties did I view before making an offer?" wants every one of
    # them, and on the updates kind's recorded rankings (seed 12) flat placed as many answers in a prompt's room.
    return [weight if i == anchor or (d is not None and d < until) else 0.0 for i, d in enumerate(days)]
