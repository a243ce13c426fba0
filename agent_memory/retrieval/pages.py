"""Entity pages: a document whose title names an entity is that entity's page.

Multi-hop questions name one entity and ask about another that only a passage names
("Which band formed the group behind the album 2014 S/S?": the album's page names the
band, the band's page holds the answer). The band's page shares few words with the
question, so no similarity route ranks it; the link does. Pages are found through the
catalog's title index (:meth:`Catalog.titled`), by the names a text mentions.
"""

from __future__ import annotations

import functools
import re
from typing import Iterable

from agent_memory.core.chinese_words import cjk_words
from agent_memory.core.records import MemoryItem
from agent_memory.core.text import STOPWORDS, has_cjk, keyword_set, split_sentences
from agent_memory.stores.base import VectorStore
from agent_memory.stores.catalog import SourceCatalog

_TOKEN = re.compile(r"[^\W_][\w'’&.\-]*[^\W_]|[^\W_]", re.UNICODE)
MAX_NAME_WORDS = 5


def _capitalized(token: str) -> bool:
    first = token[0]
    return first.isupper() or first.isdigit() or has_cjk(first)


@functools.lru_cache(maxsize=4096)  # top passages recur across questions
def mentioned_names(text: str, max_words: int = MAX_NAME_WORDS) -> tuple[str, ...]:
    """Word spans that could name an entity: 1..max_words tokens, first and last capitalized
    (or digits, or Chinese), inner words free ("End of Days", "Guns N' Roses"). A span is
    the text between its first and last token, so inner punctuation stays as written.
    Chinese runs are split with jieba so its words can be spans too."""
    tokens = _tokens(text)
    out: list[str] = []
    seen: set[str] = set()
    for i, (first, start, _) in enumerate(tokens):
        if not _capitalized(first):
            continue
        for n in range(1, max_words + 1):
            if i + n > len(tokens):
                break
            last, _, end = tokens[i + n - 1]
            if not _capitalized(last) or (n == 1 and first.lower() in STOPWORDS):
                continue
            span = text[start:end]
            if len(span) > 1 and span not in seen:
                seen.add(span)
                out.append(span)
    return tuple(out)


def naming_sentence_overlap(text: str, name: str, asked: frozenset[str], own: str = "") -> int:
    """How many of the question's keyword terms ``asked`` the sentences of ``text`` that name
    ``name`` hold, leaving out the name's own terms and those of ``own`` (the passage's title):
    "Platt has been employed by Avakian Pharmaceuticals." shares "employ" with "The company
    employing Haripur Platt ...". Chinese is segmented by jieba ("总部" in "星海科技的总部设在杭州。")."""
    shared = keyword_set(" ".join(s for s in _sentences(text) if name in s)) & asked
    return len(shared - keyword_set(name) - keyword_set(own)) if shared else 0  # no jieba for nothing


@functools.lru_cache(maxsize=4096)  # the second hop asks it of every name a passage mentions
def _sentences(text: str) -> tuple[str, ...]:
    return tuple(split_sentences(text))


def _tokens(text: str) -> list[tuple[str, int, int]]:
    """(token, start, end) over ``text``."""
    out: list[tuple[str, int, int]] = []
    for m in _TOKEN.finditer(text):
        token = m.group(0).rstrip(".")
        if not token:
            continue
        if has_cjk(token):
            # Words without part-of-speech tags: posseg took 33 ms per CMRC paragraph, lcut 3 ms.
            at = m.start()
            for word in cjk_words(token):
                found = text.find(word, at, m.end())
                if found < 0:
                    continue
                at = found + len(word)
                out.append((word, found, at))
        else:
            out.append((token, m.start(), m.start() + len(token)))
    return out


class Pages:
    """Looks up the pages of named entities; returns each page's lead item (its first chunk)."""

    def __init__(self, catalog: SourceCatalog, vectors: VectorStore) -> None:
        self.catalog = catalog
        self.vectors = vectors

    def of_names(self, tenant: str, names: Iterable[str], exclude: set[str] | frozenset = frozenset()
                 ) -> dict[str, list[MemoryItem]]:
        """{name: lead items of its pages}, for the names that have a page (not in ``exclude``)."""
        names = list(dict.fromkeys(n for n in names if n))
        if not names:
            return {}
        titled = self.catalog.titled(tenant, names)
        sources = sorted({s for ids in titled.values() for s in ids if s not in exclude})
        if not sources:
            return {}
        entries = self.catalog.get_many(tenant, sources)
        wanted = [i for s in sources if s in entries for i in entries[s].item_ids]
        lead: dict[str, MemoryItem] = {}
        for item in self.vectors.get(wanted) if wanted else []:
            if item.kind not in ("chunk", "turn"):
                continue
            best = lead.get(item.source_id)
            if best is None or item.chunk_index < best.chunk_index:
                lead[item.source_id] = item
        return {name: [lead[s] for s in ids if s in lead] for name, ids in titled.items()
                if any(s in lead for s in ids)}

    def named_in(self, tenant: str, text: str, exclude: set[str] | frozenset = frozenset()
                 ) -> dict[str, list[MemoryItem]]:
        """The pages of the entities ``text`` names."""
        return self.of_names(tenant, mentioned_names(text), exclude)
