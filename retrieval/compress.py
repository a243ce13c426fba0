"""Query-focused compression: keep the sentences that carry the question's terms, entities and numbers.

Sentences are kept whole and in their original order; gaps are marked with " … ", so a
compressed passage is never silently truncated mid-sentence.
"""

from __future__ import annotations

import re

from agent_memory.text import keyword_terms, split_sentences
from agent_memory.tokens import TokenCounter

_NUMBER = re.compile(r"\d")
_ENDS_SENTENCE = re.compile(r"[.!?。！？；;:…][\"'”’)\]]*$")
GAP = " … "


def compress(text: str, question: str, max_tokens: int, counter: TokenCounter,
             entities: list[str] | None = None) -> str:
    """The best sentences within ``max_tokens``; "" when not even one sentence fits."""
    sentences = split_sentences(text)
    if not sentences:
        return ""
    q_terms = set(keyword_terms(question))
    ents = [e.lower() for e in (entities or []) if e]
    question_has_number = bool(_NUMBER.search(question))

    def score(index: int) -> float:
        sentence = sentences[index]
        lowered = sentence.lower()
        words = set(keyword_terms(sentence))
        s = float(len(words & q_terms))
        s += sum(1.5 for e in ents if e in lowered)
        if _NUMBER.search(sentence):
            s += 0.5 if not question_has_number else 1.0
        return s - 0.01 * index  # earlier sentences win ties: they usually set the context

    order = sorted(range(len(sentences)), key=score, reverse=True)
    chosen: list[int] = []
    for index in order:
        if score(index) <= 0 and chosen:
            break
        candidate = sorted(chosen + [index])
        if counter.count(_join(sentences, candidate)) <= max_tokens:
            chosen = candidate
    return _join(sentences, chosen) if chosen else ""


def _join(sentences: list[str], indices: list[int]) -> str:
    text = ""
    previous = -1
    for index in indices:
        if text:
            if index != previous + 1:
                text += " " + GAP.strip() + " "
            elif not _ENDS_SENTENCE.search(sentences[previous]):
                text += "\n\n"  # a heading or list line: keep it a unit of its own
            else:
                text += " "
        text += sentences[index]
        previous = index
    if indices and indices[0] > 0:
        text = GAP.strip() + " " + text
    if indices and indices[-1] < len(sentences) - 1:
        text = text + " " + GAP.strip()
    return text
