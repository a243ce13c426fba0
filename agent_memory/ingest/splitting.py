"""Token-sized chunks with character offsets, for English, Markdown and Chinese, and for source code
with langchain's per-language separators (classes, functions, then blocks, then lines)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

from agent_memory.core.text import CLAUSE_ENDS, SENTENCE_ENDS
from agent_memory.core.tokens import TokenCounter

# Regex separators, coarsest first. Zero-width look-arounds keep headings with the section they
# open and sentence punctuation (English, Chinese, and the other scripts' ends split_sentences reads:
# Arabic ؟, Devanagari । ...) with the sentence it closes.
SEPARATORS = [
    r"\n(?=#{1,6} )",
    r"\n\s*\n",
    r"\n",
    r"(?<=[。！？；])",
    f"(?<=[.!?;{SENTENCE_ENDS}{CLAUSE_ENDS}])\\s+",
    r"(?<=[，、,：:])",
    r"\s+",
    r"",
]

_TEXT = re.compile(r"\S")


@dataclass
class TextSpan:
    text: str
    start: int
    end: int


class Splitter:
    def __init__(self, counter: TokenCounter, chunk_tokens: int = 256, overlap_tokens: int = 32) -> None:
        self.counter = counter
        self.chunk_tokens = chunk_tokens
        self.overlap_tokens = overlap_tokens
        self._splitter = RecursiveCharacterTextSplitter(
            separators=SEPARATORS,
            is_separator_regex=True,
            keep_separator=True,
            chunk_size=chunk_tokens,
            chunk_overlap=overlap_tokens,
            length_function=counter.count,
            strip_whitespace=True,
        )
        self._code: dict[str, RecursiveCharacterTextSplitter] = {}

    def _for(self, language: str | None) -> RecursiveCharacterTextSplitter:
        """The splitter of a source language (``Language`` values: python, js, ts, go, java, rust, c,
        cpp ...): its separators are keywords that open a definition, so a chunk holds whole functions
        where they fit. None: prose (the separators above)."""
        if not language:
            return self._splitter
        if language not in self._code:
            self._code[language] = RecursiveCharacterTextSplitter.from_language(
                Language(language), keep_separator=True, chunk_size=self.chunk_tokens,
                chunk_overlap=self.overlap_tokens, length_function=self.counter.count, strip_whitespace=True)
        return self._code[language]

    def split(self, text: str, base_offset: int = 0, language: str | None = None) -> list[TextSpan]:
        """Chunks with offsets into the original text (``base_offset`` added); ``language`` names a
        source language's splitter (agent_memory/ingest/formats.py ``CODE_EXTENSIONS``)."""
        stripped = text.strip()
        if not stripped:
            return []
        if self.counter.count(stripped) <= self.chunk_tokens:
            start = text.find(stripped)
            return [TextSpan(stripped, base_offset + start, base_offset + start + len(stripped))]
        spans: list[TextSpan] = []
        search_from = 0
        previous = TextSpan("", -1, 0)  # offsets in ``text``, without base_offset
        for piece in self._for(language).split_text(text):
            # Overlap means a chunk may start before the previous one ended, but never at or
            # before the previous start: searching from there keeps repeated text in order.
            found = text.find(piece, search_from)
            if found < 0 or found > _next_text(text, previous.end):
                found = _located(text, piece, previous)
            spans.append(TextSpan(piece, base_offset + found, base_offset + found + len(piece)))
            previous = TextSpan(piece, found, found + len(piece))
            # A token is rarely over 12 characters, which bounds how far back the overlap reaches.
            search_from = max(found + 1, found + len(piece) - self.overlap_tokens * 12)
        return spans


def _next_text(text: str, end: int) -> int:
    """The first character at or after ``end`` that is not whitespace (``len(text)`` if none): the
    chunks cover every such character in order, so the chunk after one ending at ``end`` starts there
    at the latest."""
    found = _TEXT.search(text, end)
    return found.start() if found else len(text)


def _located(text: str, piece: str, previous: TextSpan) -> int:
    """Where ``piece`` starts when the overlap reached further back than the search allowed (long runs of
    whitespace are one token each): the last place after the previous chunk's start and no later than the
    first character that chunk left out, so ``text[start:end]`` is always the piece."""
    found = text.rfind(piece, previous.start + 1, _next_text(text, previous.end) + len(piece))
    if found < 0:  # not expected (a piece is a stripped slice of the text): any later place holding it
        found = text.find(piece, previous.start + 1)
    return found if found >= 0 else max(previous.start + 1, 0)
