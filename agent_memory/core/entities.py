"""Entity-name normalization shared by every graph backend and by lookups.

Two surface forms that a reader would call "the same name" must normalize to the same
string, because the normalized name (with tenant and type) is the entity's identity in
the graph: ``"ACME  Corp."``, ``"acme corp"`` and ``"ＡＣＭＥ Corp"`` are one entity.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from functools import lru_cache

_WHITESPACE = re.compile(r"\s+")
_DISAMBIGUATION = re.compile(r"\s*\([^()]*\)\s*$")
# Punctuation that carries meaning at the end of a name (C#, F#) and must survive.
_KEEP_AT_ENDS = frozenset("#")


def _strippable(ch: str) -> bool:
    if ch in _KEEP_AT_ENDS:
        return False
    return ch.isspace() or unicodedata.category(ch).startswith("P")


@lru_cache(maxsize=1)
def _format_characters() -> re.Pattern:
    """Every format character (category Cf) of this Python's Unicode database, as one character
    class: removed in one C call, not by a category lookup per character (a Chinese passage's link
    lookups normalize some 500 names; 0.12 s once, on the first name that is not ASCII)."""
    codes = [c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
    ranges: list[list[int]] = []
    for code in codes:
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1][1] = code
        else:
            ranges.append([code, code])
    return re.compile("[" + "".join(re.escape(chr(a)) + ("-" + re.escape(chr(b)) if b > a else "")
                                    for a, b in ranges) + "]")


@lru_cache(maxsize=65536)  # names repeat heavily across triples of a batch
def normalize_name(name: str) -> str:
    """Canonical form of an entity name.

    NFKC (folds full-width and compatibility forms), drops invisible format characters
    (zero-width spaces, BOMs), casefolds, collapses runs of whitespace to one space and
    strips punctuation and quotes at both ends. Inner punctuation is kept ("AT&T",
    "node.js"). Returns "" when nothing meaningful is left.
    """
    if not isinstance(name, str):
        raise TypeError(f"entity name must be a str, got {type(name).__name__}: {name!r}")
    if name.isascii():
        # NFKC leaves ASCII as it is and no ASCII character is a format character (Cf): the
        # same result without a pass over every character (a question's link lookups normalize
        # some 400 names; 8 ms of it at 100k items).
        text = name
    else:
        text = _format_characters().sub("", unicodedata.normalize("NFKC", name))
    text = _WHITESPACE.sub(" ", text.casefold())
    start, end = 0, len(text)
    while start < end and _strippable(text[start]):
        start += 1
    while end > start and _strippable(text[end - 1]):
        end -= 1
    return text[start:end]


def normalize_type(entity_type: str | None) -> str:
    """Entity types compare case-insensitively; an empty type is the generic "entity"."""
    folded = normalize_name(entity_type or "")
    return folded or "entity"


def without_disambiguation(title: str) -> str:
    """A page title less its closing parenthesized disambiguation: "Astro Boy (film)" is a page of
    "Astro Boy" (the catalog's title index and the reranker's title signal read titles so)."""
    return _DISAMBIGUATION.sub("", title).strip()
