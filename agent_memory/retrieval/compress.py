"""Query-focused compression: keep the sentences that carry the question's terms, entities and numbers.

Sentences are kept whole and in their original order; gaps are marked with " … ", so a
compressed passage is never silently truncated mid-sentence. A compressed passage always
holds its best sentence whole (issue 34: a short Chinese message came out as ``… 。 …``, its
tag kept and every word gone): a piece with no word (a stray "。") is never a sentence of its
own, a clause that ends at ";" / "；" / "؛" runs on into the next one (Chinese sentences end at
。！？), and a text of one sentence is returned whole, never cut: the caller places it or drops it.
"""

from __future__ import annotations

import re

from agent_memory.core.sentence_scoring import Mark, SentenceWeights, score_sentences
from agent_memory.core.text import CLAUSE_ENDS, SENTENCE_ENDS, SPACE_ENDED_SCRIPTS, keyword_terms, split_sentences
from agent_memory.core.tokens import TokenCounter
from agent_memory.retrieval.config_parts import CompressionWeights

_NUMBER = re.compile(r"\d")
_WORDLIKE = re.compile(r"\w")
_CLAUSE_END = re.compile(f"[;；{CLAUSE_ENDS}][\"'”’)\\]]*$")
_ENDS_SENTENCE = re.compile(f"[.!?。！？；;:…{SENTENCE_ENDS}{CLAUSE_ENDS}][\"'”’)\\]]*$")
# A letter of a script whose sentences a space parts (Thai, Lao): two such sentences are joined again by a space.
_SPACE_ENDED_LETTER = re.compile(f"[{SPACE_ENDED_SCRIPTS}]")
GAP = " … "


def sentence_units(text: str) -> list[str]:
    """The sentences compression chooses among: ``split_sentences``' pieces, with a piece that holds no
    word joined to the one before it and a clause ending at a semicolon joined to the one after it."""
    units: list[str] = []
    join_next = False
    for piece in split_sentences(text):
        if units and (join_next or not _WORDLIKE.search(piece)):
            units[-1] = _glue(units[-1], piece)
        else:
            units.append(piece)
        join_next = bool(_CLAUSE_END.search(piece))
    if len(units) > 1 and not _WORDLIKE.search(units[0]):
        units[1] = _glue(units[0], units[1])  # leading punctuation belongs to the first sentence
        del units[0]
    return units


def _glue(left: str, right: str) -> str:
    # As _join joins adjacent sentences, so a kept unit reads as the sentences it was cut from.
    return left + _between(left, right) + right


def _between(left: str, right: str) -> str:
    """What joins two adjacent sentences: a space after a sentence's end, else a line break (a heading or list
    line stays a unit of its own), save between two sentences of a script whose sentences a space parts."""
    if _ENDS_SENTENCE.search(left) or (_SPACE_ENDED_LETTER.match(left[-1:]) and _SPACE_ENDED_LETTER.match(right[:1])):
        return " "
    return "\n\n"


def compress(text: str, question: str, max_tokens: int, counter: TokenCounter,
             entities: list[str] | None = None, weights: CompressionWeights | None = None) -> str:
    """The best sentences within ``max_tokens``, the best one always among them; "" when the best one
    does not fit. A text of one sentence (or none) comes back unchanged, whatever its length, and so
    does a text the cut would not make shorter."""
    sentences = sentence_units(text)
    if not sentences:
        return ""
    if len(sentences) == 1:
        return text
    chosen = _chosen(sentences, question, max_tokens, counter, entities, weights, lambda kept: _join(sentences, kept))
    if not chosen:
        return ""  # the best sentence is kept whole or not at all: a lesser one would stand in for it
    kept = _join(sentences, chosen)
    # A cut that saves no token (the gap mark costs what a short sentence did, or nothing was left out
    # and the spacing is the same): the text as it was, not a copy called compressed.
    return text if counter.count(kept) >= counter.count(text) else kept


def compress_lines(text: str, question: str, max_tokens: int, counter: TokenCounter,
                   entities: list[str] | None = None, weights: CompressionWeights | None = None) -> str:
    """A text written in lines (a compaction summary: agent_memory/retrieval/live_summaries.py) cut to its lines
    that carry the question's terms or entities, within ``max_tokens``, in their order, each
    gap marked by a line "…"; "" when no line carries any, or the best one does not fit. A text of one line (a
    summary an LLM wrote as prose) is cut to its sentences so."""
    lines = [line for line in text.splitlines() if line.strip()]
    units, join = (lines, _join_lines) if len(lines) > 1 else (sentence_units(text), _join)
    if not units:
        return ""
    chosen = _chosen(units, question, max_tokens, counter, entities, weights, lambda kept: join(units, kept),
                     relevant_only=True)
    return join(units, chosen) if chosen else ""


def _chosen(units: list[str], question: str, max_tokens: int, counter: TokenCounter, entities: list[str] | None,
            weights: CompressionWeights | None, joined, relevant_only: bool = False) -> list[int]:
    """The indices of the units kept: the best one, then each further one that bears on the question while
    ``joined(indices)`` fits ``max_tokens``; [] when the best does not fit (or, ``relevant_only``, bears on nothing)."""
    w = weights or CompressionWeights()
    q_terms = set(keyword_terms(question))
    ents = [e.lower() for e in (entities or []) if e]
    terms = {unit: set(keyword_terms(unit)) for unit in units}
    relevance_marks = (
        Mark(w.question_term, lambda s: len(terms[s] & q_terms)),
        Mark(w.question_entity, lambda s: sum(1 for e in ents if e in s.lower())),
    )
    if not relevant_only:  # a summary's lines nearly all hold a number: one tells nothing there
        relevance_marks += (
            Mark(w.number_asked if _NUMBER.search(question) else w.number, lambda s: bool(_NUMBER.search(s))),)
    relevance = score_sentences(units, SentenceWeights(marks=relevance_marks))
    # Ties (most often: no sentence holds a question term) go to a sentence with some content
    # ("Wow!" says nothing), then to the earlier one: it usually sets the context.
    content = Mark(w.content, lambda s: min(len(terms[s]), w.content_words))
    scores = score_sentences(units, SentenceWeights(marks=(*relevance_marks, content), later=-w.order))
    order = sorted(range(len(units)), key=scores.__getitem__, reverse=True)
    if (relevant_only and relevance[order[0]] <= 0) or counter.count(joined([order[0]])) > max_tokens:
        return []
    chosen = [order[0]]
    for index in order[1:]:
        if relevance[index] <= 0:
            continue  # only question-bearing sentences join the best one
        candidate = sorted(chosen + [index])
        if counter.count(joined(candidate)) <= max_tokens:
            chosen = candidate
    return chosen


def _join_lines(lines: list[str], indices: list[int]) -> str:
    out: list[str] = []
    previous = -1
    for index in indices:
        if index != previous + 1:
            out.append(GAP.strip())
        out.append(lines[index])
        previous = index
    if indices and indices[-1] < len(lines) - 1:
        out.append(GAP.strip())
    return "\n".join(out)


def _join(sentences: list[str], indices: list[int]) -> str:
    text = ""
    previous = -1
    for index in indices:
        if text:
            if index != previous + 1:
                text += " " + GAP.strip() + " "
            else:
                text += _between(sentences[previous], sentences[index])
        text += sentences[index]
        previous = index
    if indices and indices[0] > 0:
        text = GAP.strip() + " " + text
    if indices and indices[-1] < len(sentences) - 1:
        text = text + " " + GAP.strip()
    return text
