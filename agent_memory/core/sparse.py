"""BM25-style sparse vectors for keyword search.

Only the term-frequency half of BM25 lives here: a document's weight for a term is
the saturated TF ``tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avg_len))``. The IDF
half depends on the whole collection, so the vector stores apply it at search time
(Qdrant's sparse-vector ``modifier=IDF``). A query vector is 1 per unique term of the question
(``core/text.question_terms``: its words for the time it is asked left out), so the score of a
document is ``sum(idf(t) * tf_weight(t, doc))`` over the query terms: BM25.

Term indices are a stable 32-bit hash of the token (blake2b), so vectors written by one
process are readable by any other; Python's ``hash()`` is salted per process and would
silently break every stored vector.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from agent_memory.core.text import keyword_terms, question_terms


@dataclass
class SparseVector:
    """Term weights keyed by a stable hashed term index (see :func:`term_index`)."""

    indices: list[int] = field(default_factory=list)
    values: list[float] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.indices)


# Bump whenever tokenization or weighting changes: stored sparse vectors of another
# version no longer match new queries (the services refuse to mix them).
# v3: time words; v4: one form each (core/chinese_words.TIME_WORD_FORMS); v5: 上个周末, 上个季度 …; v6: weekdays (上个星期五 →
# 上周五); v7: a word keeps its combining marks (Thai, Devanagari, Hebrew pointing: "पिछले", not "प" / "छल"),
# Thai, Lao, Myanmar, Khmer and hiragana runs give letter bigrams, a katakana run is one term, a lone
# hiragana (a particle) none. English and Chinese text without such letters reads as in v6. v8: Korean words in
# syllable pairs; Cyrillic, Greek, Armenian, Arabic, Devanagari and Tamil words stemmed by their Snowball
# stemmer (core/text._SCRIPT_STEMMERS). English and Chinese text reads as in v7.
SPARSE_FORMAT = "bm25-tf/stem-en/jieba/v8"
DEFAULT_K1 = 1.2
DEFAULT_B = 0.75
DEFAULT_AVG_DOC_LEN = 64.0


def term_index(term: str) -> int:
    """Stable unsigned 32-bit index of a term (Qdrant sparse indices are u32)."""
    return int.from_bytes(hashlib.blake2b(term.encode("utf-8"), digest_size=4).digest(), "big")


def terms(text: str) -> list[str]:
    """The tokens that count for keyword search: content words, English ones stemmed."""
    return keyword_terms(text)


class SparseEncoder:
    """Encodes documents (BM25 TF weights) and queries (unit weights) into sparse vectors."""

    def __init__(self, k1: float = DEFAULT_K1, b: float = DEFAULT_B, avg_doc_len: float = DEFAULT_AVG_DOC_LEN):
        if k1 < 0:
            raise ValueError(f"k1={k1} must be >= 0")
        if not 0.0 <= b <= 1.0:
            raise ValueError(f"b={b} must be within [0, 1]")
        if avg_doc_len <= 0:
            raise ValueError(f"avg_doc_len={avg_doc_len} must be > 0")
        self.k1 = k1
        self.b = b
        self.avg_doc_len = avg_doc_len

    def encode_document(self, text: str) -> SparseVector:
        tokens = terms(text)
        if not tokens:
            return SparseVector()
        norm = self.k1 * (1.0 - self.b + self.b * len(tokens) / self.avg_doc_len)
        weights: dict[int, float] = {}
        for term, tf in Counter(tokens).items():
            # Two distinct terms may share a 32-bit hash; summing keeps the vector valid
            # (unique indices) and the collision costs a little precision, nothing more.
            idx = term_index(term)
            weights[idx] = weights.get(idx, 0.0) + tf * (self.k1 + 1.0) / (tf + norm)
        return _to_vector(weights)

    def encode_documents(self, texts: Iterable[str]) -> list[SparseVector]:
        return [self.encode_document(t) for t in texts]

    def encode_query(self, text: str) -> SparseVector:
        return _to_vector({term_index(t): 1.0 for t in set(question_terms(text))})

    def encode_queries(self, texts: Sequence[str]) -> list[SparseVector]:
        return [self.encode_query(t) for t in texts]


def _to_vector(weights: dict[int, float]) -> SparseVector:
    indices = sorted(weights)
    return SparseVector(indices=indices, values=[float(weights[i]) for i in indices])
