"""Naive baselines on the same stores and budget as the product.

Each baseline ranks stored items (kinds "turn" and "chunk"; summaries are the
product's own material), maps them to their sources in rank order (a source ranks at
its best item), and packs WHOLE sources greedily by rank: a source that does not fit
the remaining budget is skipped and the next one tried. A source is a turn or a
paragraph, re-assembled from its stored chunks, so an evidence item is either in the
prompt whole or not at all. Tokens are counted on the exact rendered text with the
services' counter. Rendering matches the product's citation format: ``[S:id] text``;
turns read ``[session date] speaker: text``. The harness frames the lines as the product frames
its passages (its instructions, the passages' title and the question, paid from the same budget);
before 2026-12-01 evening the baselines' lines were bare, which gave them 60-80 tokens more room.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Iterable

from dateutil import parser

from agent_memory.core.citations import tag
from agent_memory.core.records import MemoryItem, SearchFilter
from agent_memory.retrieval.render import framed

BASELINES = ("recency", "dense", "keyword", "rrf")
RRF_K = 60
CANDIDATES = 150
BASE_KINDS = ["turn", "chunk"]
_PAREN = re.compile(r"\([^)]*\)")
_DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%Y/%m/%d %H:%M", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d")


def parse_when(stamp: str) -> float | None:
    """Seconds since the epoch for the session dates of LoCoMo/LongMemEval (and ISO), else None."""
    text = " ".join(_PAREN.sub(" ", stamp or "").split())
    if not text:
        return None
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(text, fmt).timestamp()
        except ValueError:
            continue
    try:
        return parser.parse(text, fuzzy=True).timestamp()
    except (ValueError, OverflowError, ImportError):
        return None


@dataclass
class Packed:
    prompt: str
    tokens: int
    source_ids: list[str] = field(default_factory=list)


def render_source(items: list[MemoryItem]) -> str:
    """One source's text from its chunks (ordered by offset, overlaps removed), as cited."""
    items = sorted(items, key=lambda i: (i.start, i.chunk_index))
    text, covered = "", None
    for item in items:
        if covered is None:
            text = item.text
        elif item.start >= covered:  # a gap (stripped whitespace) between chunks
            text += " " + item.text
        elif item.end > covered:  # overlapping chunk: append only what is new
            text += item.text[covered - item.start:]
        covered = item.end if covered is None else max(covered, item.end)
    first = items[0]
    if first.kind == "turn":
        speaker = first.metadata.get("speaker", "")
        stamp = first.metadata.get("timestamp", "")
        prefix = f"[{stamp}] " if stamp else ""
        return f"{prefix}{speaker}: {text}" if speaker else f"{prefix}{text}"
    return text


def rrf(rankings: Iterable[list[str]], k: int = RRF_K) -> list[str]:
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, 1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    return sorted(scores, key=lambda key: -scores[key])


class Baselines:
    """Rankings and packing for one store. ``kind`` "documents" marks recency n/a."""

    def __init__(self, services, kind: str, candidates: int = CANDIDATES, cache_size: int = 4096) -> None:
        self.services = services
        self.kind = kind
        self.candidates = candidates
        self._sources: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._cache_size = cache_size
        self._recent: dict[str, list[str]] = {}
        self._line_counts: dict[str, int] = {}

    @property
    def names(self) -> tuple[str, ...]:
        return BASELINES if self.kind == "conversation" else tuple(n for n in BASELINES if n != "recency")

    # ---- ranking ----------------------------------------------------------------------------------

    def rankings(self, question: str, tenant: str) -> dict[str, list[str]]:
        """name → ranked source IDs, for every applicable baseline."""
        flt = SearchFilter(tenant=tenant, kinds=list(BASE_KINDS))
        vectors = self.services.vectors
        dense_hits = vectors.search_dense(self.services.embedder.embed_query(question), flt, self.candidates)
        sparse_hits = vectors.search_sparse(self.services.sparse_encoder.encode_query(question), flt, self.candidates)
        source_of = {h.item.id: h.item.source_id for h in dense_hits + sparse_hits}
        dense = [h.item.id for h in dense_hits]
        sparse = [h.item.id for h in sparse_hits]
        out = {
            "dense": _sources_in_order(dense, source_of),
            "keyword": _sources_in_order(sparse, source_of),
            "rrf": _sources_in_order(rrf([dense, sparse]), source_of),
        }
        if "recency" in self.names:
            out["recency"] = self.recent_sources(tenant)
        return {name: out[name] for name in self.names}

    def recent_sources(self, tenant: str) -> list[str]:
        """The tenant's turn sources, most recent first (session date, then order in the session)."""
        if tenant not in self._recent:
            keys: dict[str, tuple] = {}
            for item in self.services.vectors.scroll(SearchFilter(tenant=tenant, kinds=["turn"])):
                meta = item.metadata
                when = parse_when(str(meta.get("timestamp", "")))
                key = (when if when is not None else float("-inf"), int(meta.get("seq", 0)), item.source_id)
                keys[item.source_id] = max(keys.get(item.source_id, key), key)
            self._recent[tenant] = sorted(keys, key=lambda sid: keys[sid], reverse=True)[: self.candidates * 4]
        return self._recent[tenant]

    # ---- packing ----------------------------------------------------------------------------------

    def source_text(self, tenant: str, source_id: str) -> str | None:
        key = (tenant, source_id)
        if key in self._sources:
            self._sources.move_to_end(key)
            return self._sources[key]
        vectors = self.services.vectors
        items = [i for i in vectors.get(vectors.ids_for_source(tenant, source_id)) if i.kind in BASE_KINDS]
        text = render_source(items) if items else None
        self._sources[key] = text
        if len(self._sources) > self._cache_size:  # bounded memory on big corpora
            self._sources.popitem(last=False)
        return text

    def pack(self, ranked: list[str], tenant: str, budget: int, *, instructions: str, question: str) -> Packed:
        """Whole sources in rank order into ``budget``, framed as the product's prompt is
        (``instructions``, the passages' title, the question): the frame is paid from the budget."""
        counter = self.services.counter
        lines: list[str] = []
        used: list[str] = []
        tokens = counter.count(framed(instructions, question, []))
        newline = counter.count("\n")
        for sid in ranked:
            if budget - tokens <= newline:
                break
            text = self.source_text(tenant, sid)
            if not text:
                continue
            line = f"{tag(sid)} {text}"
            # Cheap screen with the line's own count (cl100k does not merge across a newline
            # followed by "["), then the exact count of the whole text decides.
            if tokens + (newline if lines else 0) + self._line_tokens(line) > budget + 2:
                continue
            trial = counter.count(framed(instructions, question, [*lines, line]))
            if trial <= budget:
                lines.append(line)
                used.append(sid)
                tokens = trial
        return Packed(prompt=framed(instructions, question, lines), tokens=tokens, source_ids=used)

    def _line_tokens(self, line: str) -> int:
        count = self._line_counts.get(line)
        if count is None:
            count = self.services.counter.count(line)
            if len(self._line_counts) > self._cache_size:
                self._line_counts.clear()
            self._line_counts[line] = count
        return count


def _sources_in_order(item_ids: list[str], source_of: dict[str, str]) -> list[str]:
    return list(dict.fromkeys(source_of[i] for i in item_ids if i in source_of))
