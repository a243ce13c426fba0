"""Candidate entity strings in a question, for the graph route of retrieval.

Three sources, most reliable first in the result:
1. n-grams of the question (1..4 words; jieba words for Chinese) that the graph
   already knows, via the ``known_names`` lookup (it receives all candidates in one
   call and returns the ones that exist);
2. the rule-based extractors' entities (NER, model ids, dates, Chinese proper nouns);
3. noun chunks and proper nouns (English), noun phrases (Chinese).
"""

from __future__ import annotations

import functools
import re
from typing import Callable

from agent_memory.core.entities import normalize_name
from agent_memory.core.text import STOPWORDS, has_cjk
from agent_memory.index.triples.base import clean_name, is_model_id
from agent_memory.index.triples.chinese import tokenize
from agent_memory.index.triples.english import _strip_articles, load_nlp
from agent_memory.index.triples.router import RuleBasedExtractor

KnownNames = Callable[[list[str]], list[str]]
_TOKEN = re.compile(r"[A-Za-z0-9][\w'’.\-]*[A-Za-z0-9]|\w", re.UNICODE)
_WH = frozenset({"what", "which", "who", "whom", "whose", "when", "where", "why", "how"})


@functools.lru_cache(maxsize=1)
def _rules():
    return RuleBasedExtractor()


def _question_tokens(question: str) -> list[str]:
    toks: list[str] = []
    for m in _TOKEN.finditer(question):
        t = m.group(0)
        if has_cjk(t):
            toks.extend(tok.word for tok in tokenize(t) if tok.word.strip())
        else:
            toks.append(t)
    return toks


def question_ngrams(question: str, max_n: int = 4) -> list[str]:
    """Word n-grams that are not only stopwords (longest first)."""
    toks = _question_tokens(question)
    out: list[str] = []
    for n in range(min(max_n, len(toks)), 0, -1):
        for i in range(len(toks) - n + 1):
            gram = toks[i : i + n]
            if all(t.lower() in STOPWORDS or t.lower() in _WH for t in gram):
                continue
            if gram[0].lower() in STOPWORDS or gram[-1].lower() in STOPWORDS:
                continue
            joiner = "" if all(has_cjk(t) for t in gram) else " "
            out.append(joiner.join(gram))
    return out


def _noun_chunks(question: str) -> list[str]:
    if has_cjk(question):
        rules = _rules()
        return [e.name for e in rules.chinese.entities(question, include_generic=True)]
    doc = load_nlp()(question)
    out = []
    for chunk in doc.noun_chunks:
        toks = _strip_articles([t for t in chunk if t.pos_ != "PRON" and t.lower_ not in _WH])
        if toks:
            out.append(doc[toks[0].i : toks[-1].i + 1].text)
    out.extend(t.text for t in doc if t.pos_ == "PROPN")
    return out


def entities_in_question(question: str, known_names: KnownNames | None = None, *, max_ngram: int = 4,
                         parse: bool = True) -> list[str]:
    """Candidate entity strings for ``question``, deduplicated by normalized name.

    ``parse=False`` skips the models (spaCy, jieba POS) and keeps the known-name n-grams
    and model ids: what a graph lookup needs, since a name the graph does not hold has no
    neighbourhood anyway, at a fraction of the cost (retrieval's per-question path)."""
    if not question or not any(ch.isalnum() for ch in question):
        return []
    candidates: list[str] = []
    if known_names is not None:
        grams = question_ngrams(question, max_ngram)
        if grams:
            hits = list(known_names(grams))
            found = {normalize_name(n) for n in hits}
            candidates.extend(g for g in grams if normalize_name(g) in found)
            # The lookup may return stored spellings that are not literal n-grams.
            gram_keys = {normalize_name(g) for g in grams}
            candidates.extend(n for n in hits if normalize_name(n) not in gram_keys)
    if parse:
        candidates.extend(e.name for e in _rules().entities(question))
        candidates.extend(_noun_chunks(question))
    else:
        candidates.extend(t for t in _question_tokens(question) if is_model_id(t))
    out: list[str] = []
    seen: set[str] = set()
    for c in candidates:
        c = clean_name(c)
        key = normalize_name(c)
        if key and key not in seen and key not in STOPWORDS and key not in _WH:
            seen.add(key)
            out.append(c)
    return out
