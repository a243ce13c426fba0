"""Evidence recall inside a bounded prompt.

A prompt cites passages as lines starting with ``[S:<source_id>] ``; a passage runs on
until the next ``[S:`` line or a ``## `` section header. An evidence item is present
when its source ID is cited and at least 80% of its words (``agent_memory.core.text.words``:
lower-cased ``\\w+``, jieba for Chinese) occur in the text cited under that ID. Words
are matched as a multiset, so a fragment that repeats a few common words cannot stand
in for the whole item.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from agent_memory.core.citations import decode_id
from agent_memory.core.text import words
from agent_memory.evaluation.datasets import Question

PRESENT_THRESHOLD = 0.8
_TAG = re.compile(r"^\[S:([^\]\n]*)\] ?(.*)$")
_QUESTION_HEADER = re.compile(r"^##\s*(question|query|user question)\b", re.IGNORECASE)


def parse_citations(prompt: str) -> dict[str, str]:
    """source_id → the text cited under it (several citations of one ID are concatenated)."""
    cited: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in prompt.splitlines():
        match = _TAG.match(line)
        if match:
            current = cited.setdefault(decode_id(match.group(1).strip()), [])
            current.append(match.group(2))
        elif line.startswith("## "):
            current = None
        elif current is not None:
            current[-1] += "\n" + line
    return {sid: "\n".join(parts) for sid, parts in cited.items()}


def cited_ids(prompt: str) -> list[str]:
    """Cited source IDs in order of first citation."""
    return list(dict.fromkeys(decode_id(m.group(1).strip()) for line in prompt.splitlines()
                              if (m := _TAG.match(line))))


def word_coverage(evidence_text: str, passage_text: str) -> float:
    """Share of the evidence's words (with multiplicity) found in the passage."""
    need = Counter(words(evidence_text))
    total = sum(need.values())
    if total == 0:
        return 1.0
    have = Counter(words(passage_text))
    return sum(min(n, have[w]) for w, n in need.items()) / total


def prompt_context(prompt: str, question: str = "") -> str:
    """The prompt minus its question section(s) and the question string itself.

    An answer that only appears because the question quotes it must not count as a hit.
    """
    kept: list[str] = []
    skipping = False
    for line in prompt.splitlines():
        if line.startswith("## "):
            skipping = bool(_QUESTION_HEADER.match(line))
            if skipping:
                continue
        if not skipping:
            kept.append(line)
    text = "\n".join(kept)
    if question.strip():
        text = text.replace(question.strip(), " ")
    return text


@dataclass
class Score:
    soft: float
    strict: bool
    present: list[bool] = field(default_factory=list)
    answer_in_prompt: bool | None = None


def score_evidence(question: Question, prompt: str) -> Score:
    """Soft = fraction of evidence items present; strict = all present."""
    cited = parse_citations(prompt)
    present = [
        ev.source_id in cited and word_coverage(ev.text, cited[ev.source_id]) >= PRESENT_THRESHOLD
        for ev in question.evidence
    ]
    soft = sum(present) / len(present) if present else 0.0
    return Score(soft=soft, strict=bool(present) and all(present), present=present)


def answer_in_context(answers: list[str], prompt: str, question: str = "", *, ignore_case: bool = True) -> bool:
    """Any answer in the context: verbatim (CMRC), or case-insensitive whole words (English)."""
    context = prompt_context(prompt, question)
    if ignore_case:
        context = context.lower()
    for answer in answers:
        needle = answer.strip().lower() if ignore_case else answer.strip()
        if not needle:
            continue
        if ignore_case:
            # Whole-word match, so "no" is not found inside "known".
            pattern = (r"\b" if needle[0].isalnum() else "") + re.escape(needle) + (r"\b" if needle[-1].isalnum() else "")
            if re.search(pattern, context):
                return True
        elif needle in context:
            return True
    return False


def score_question(dataset: str, question: Question, prompt: str) -> Score:
    """The per-question score of one dataset's metric (see the eval README)."""
    if dataset == "cmrc":
        # A hit when any gold answer appears verbatim in the context; soft = strict = hit.
        hit = answer_in_context(question.answers, prompt, question.text, ignore_case=False)
        return Score(soft=float(hit), strict=hit, present=[hit], answer_in_prompt=hit)
    score = score_evidence(question, prompt)
    if dataset == "hotpotqa":
        score.answer_in_prompt = answer_in_context(question.answers, prompt, question.text)
    return score
