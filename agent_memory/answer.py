"""Answers from the assembled prompt, with citations checked against the passages in it.

The LLM may only cite the source IDs of the passages and facts the prompt actually holds
(never the instruction line's example, the question, or tag-like text inside a passage,
which assembly neutralizes anyway): any other ID is invented, so it is stripped from the
answer and counted. Without an LLM (or when the
LLM call fails) the answer falls back to retrieval-only: the prompt and the best
supporting passages, which a calling agent can still use.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass, field
from typing import Any

from agent_memory.core.citations import TAG, split_tag, tag, tag_ids
from agent_memory.core.errors import LLMError
from agent_memory.retrieval.render import TITLES
from agent_memory.retrieval.types import relevance

FACTS_TITLE = TITLES["facts"]

log = logging.getLogger(__name__)

# One bracket may hold several IDs: "[S:a]", "[S:a, S:b]", "[S:a; b]" (citations.split_tag).
MARKER = TAG
SYSTEM_PROMPT = (
    "You answer questions from the memory given in the user's message, and from nothing else. "
    "After each claim, cite the passage it comes from with its tag exactly as written, e.g. [S:some-id]. "
    "Never invent a tag. If the memory does not contain the answer, say so briefly."
)
TOP_PASSAGES = 5


def prompt_ids(prompt: str) -> list[str]:
    """Every source ID tagged in the prompt, in order of first appearance."""
    return tag_ids(prompt)


def known_ids(result) -> set[str]:
    """The IDs an answer may cite: the passages placed in the prompt and the sources of its
    known facts (their lines, written by assembly, end with the fact's tag)."""
    # Both come from what assembly placed, never from the prompt's text: the question, its date
    # and request instructions are caller text, and may imitate a "Known facts" section.
    return {p.source_id for p in result.passages} | set(getattr(result, "fact_source_ids", ()))


def check_citations(text: str, known: set[str]) -> tuple[str, list[str], list[str]]:
    """(answer with unknown markers removed, cited known IDs in order, unknown IDs in order)."""
    cited: dict[str, None] = {}
    unknown: list[str] = []

    def replace(match: re.Match) -> str:
        keep = []
        for sid in split_tag(match.group(1)):
            if sid in known:
                keep.append(sid)
                cited.setdefault(sid, None)
            else:
                unknown.append(sid)
        return "".join(tag(sid) for sid in keep)

    cleaned = MARKER.sub(replace, text)
    if unknown:
        # A removed marker leaves "word  ." or "word ." behind: tidy the spacing it left.
        cleaned = re.sub(r"[ \t]+([.,;:!?])", r"\1", cleaned)
        cleaned = re.sub(r"[ \t]{2,}", " ", cleaned).strip()
    return cleaned, list(cited), unknown


def citation_passages(source_id: str, result) -> list[str]:
    """The prompt text behind one tag: its passages, else the prompt lines carrying it (facts)."""
    texts = [p.text for p in result.passages if p.source_id == source_id]
    if texts:
        return texts
    marker = tag(source_id)
    return [line.replace(marker, "").strip(" -") for line in result.prompt.splitlines() if marker in line]


RELEVANCE_DOC = ("Relevance from 0 to 1, higher is better: the logistic of the reranker's score, which adds "
                 "up standardized signals (each one's z-score over this question's candidates). 0.5 is a "
                 "candidate as good as this question's average one; 0.9 is about 2.2 standard deviations "
                 "above it. Comparable within one answer, a rough guide across questions.")


def passages_out(result, limit: int = TOP_PASSAGES) -> list[dict[str, Any]]:
    ranked = sorted(result.passages, key=lambda p: p.score, reverse=True)[:limit]
    return [{"source_id": p.source_id, "text": p.text, "kind": p.kind, "score": round(float(p.score), 5),
             "relevance": relevance(p.score), "tokens": p.tokens, "section": p.section} for p in ranked]


@dataclass
class Answer:
    mode: str
    answer: str | None
    citations: list[dict[str, Any]] = field(default_factory=list)
    unknown_citations: list[str] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_ms: float = 0.0
    model: str | None = None
    llm_error: str | None = None


class Answerer:
    def __init__(self, llm) -> None:
        self.llm = llm

    def answer(self, result, *, max_tokens: int = 512) -> Answer:
        if self.llm is None:
            return Answer("retrieval-only", None, prompt_tokens=result.total_tokens)
        messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": result.prompt}]
        started = time.perf_counter()
        try:
            reply = self.llm.complete(messages, max_tokens=max_tokens)
        except LLMError as exc:
            # Graceful fallback: the memory is still useful to the caller; the reason is reported.
            log.warning("LLM answer failed, falling back to retrieval-only: %s", exc)
            return Answer("retrieval-only", None, prompt_tokens=result.total_tokens, llm_error=str(exc),
                          llm_ms=round((time.perf_counter() - started) * 1000, 2))
        llm_ms = round((time.perf_counter() - started) * 1000, 2)
        text, cited, unknown = check_citations(reply.text, known_ids(result))
        citations = [{"source_id": sid, "passages": citation_passages(sid, result)} for sid in cited]
        return Answer("llm", text, citations, unknown, reply.usage.prompt_tokens, reply.usage.completion_tokens,
                      llm_ms, reply.model)
