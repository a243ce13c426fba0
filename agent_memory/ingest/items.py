"""Turn documents and turns into stored items: chunks, summaries and turn items with IDs."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePath

from agent_memory.core.ids import content_hash, item_id
from agent_memory.core.records import Document, MemoryItem, TurnRecord
from agent_memory.index.items import embedding_text
from agent_memory.index.told_of import TOLD_OF
from agent_memory.ingest.formats import CODE_EXTENSIONS
from agent_memory.ingest.splitting import Splitter
from agent_memory.ingest.summarize import SourceSummarizer


@dataclass(frozen=True)
class SummaryTokens:
    """Summary sizes in tokens, from the settings (chunk_/document_/session_summary_tokens)."""

    chunk: int
    document: int
    session: int


@dataclass
class SourceItems:
    """Everything one source contributes: its items plus what the catalog needs."""

    tenant: str
    source_id: str
    kind: str  # "document" | "turn" | "session"
    content_hash: str
    items: list[MemoryItem] = field(default_factory=list)
    title: str = ""
    path: str = ""
    session_id: str | None = None
    seq: int | None = None
    timestamp: str = ""
    # A turn's first piece read after the turn before it (agent_memory/index/context.py), stored as its point's
    # ``context`` vector; None: the piece's own text (a session's first turn, a document).
    context_text: str | None = None

    def embed_texts(self) -> list[str]:
        return [embedding_text(item) for item in self.items]


def _make_item(tenant, source_id, kind, text, index, start, end, metadata) -> MemoryItem:
    digest = content_hash(text)
    return MemoryItem(
        id=item_id(tenant, source_id, kind, start, end, digest),
        tenant=tenant,
        source_id=source_id,
        kind=kind,
        text=text,
        chunk_index=index,
        start=start,
        end=end,
        content_hash=digest,
        # Whom a turn tells of is the ingestion's reading of its facts (index/told_of.py), never a caller's or an
        # export's value: what the extractor reads now is written after the upsert.
        metadata={k: v for k, v in metadata.items() if k != TOLD_OF},
    )


class ItemBuilder:
    def __init__(self, splitter: Splitter, summarizer: SourceSummarizer, summary_tokens: SummaryTokens,
                 summaries: bool = True) -> None:
        self.splitter = splitter
        self.summary_tokens = summary_tokens
        self.summarizer = summarizer
        self.summaries = summaries
        self.counter = splitter.counter

    def document(self, doc: Document) -> SourceItems:
        digest = content_hash(doc.title + "\x1f" + doc.text)
        out = SourceItems(doc.tenant, doc.source_id, "document", digest, title=doc.title, path=doc.path)
        meta = {**doc.metadata, "title": doc.title} if doc.title else dict(doc.metadata)
        # Source code is split by its language's splitter, chosen by the file's extension.
        spans = self.splitter.split(doc.text, language=CODE_EXTENSIONS.get(PurePath(doc.path or doc.source_id).suffix.lower()))
        out.items = self.chunk_items(doc.tenant, doc.source_id, spans, meta, start_index=0)
        if self.summaries:
            out.items += self.summary_items(doc.tenant, doc.source_id, doc.text, out.items, meta)
        if doc.created_at is not None:
            for item in out.items:
                item.created_at = doc.created_at
        return out

    def chunk_items(self, tenant, source_id, spans, meta, start_index: int) -> list[MemoryItem]:
        return [
            _make_item(tenant, source_id, "chunk", span.text, start_index + i, span.start, span.end, dict(meta))
            for i, span in enumerate(spans)
        ]

    def summary_items(self, tenant, source_id, text, chunks, meta, *, length: int | None = None) -> list[MemoryItem]:
        """Per-chunk summaries when a document has several chunks; one per document when it is long, spanning
        0 to its text's length: ``length`` where ``text`` stands for a longer one (a streamed file's segment
        summaries, joined)."""
        items = []
        if len(chunks) > 1:
            for chunk in chunks:
                if self.counter.count(chunk.text) > self.summary_tokens.chunk * 2:
                    summary = self.summarizer.summarize(chunk.text, max_tokens=self.summary_tokens.chunk)
                    if summary:
                        items.append(_make_item(tenant, source_id, "summary", summary, chunk.chunk_index,
                                                chunk.start, chunk.end,
                                                {**meta, "summary_of": chunk.id, "scope": "chunk"}))
        if self.counter.count(text) > self.summary_tokens.document * 2 or len(chunks) > 1:
            summary = self.summarizer.summarize(text[:200_000], max_tokens=self.summary_tokens.document)
            if summary:
                items.append(_make_item(tenant, source_id, "summary", summary, -1, 0,
                                        len(text) if length is None else length,
                                        {**meta, "summary_of": source_id, "scope": "document"}))
        return items

    def turn(self, turn: TurnRecord, seq: int) -> SourceItems:
        digest = content_hash(f"{turn.speaker}\x1f{turn.timestamp}\x1f{turn.text}")
        out = SourceItems(turn.tenant, turn.source_id, "turn", digest, session_id=turn.session_id, seq=seq,
                          timestamp=turn.timestamp)
        meta = {**turn.metadata, "session_id": turn.session_id, "turn_id": turn.turn_id,
                "speaker": turn.speaker, "timestamp": turn.timestamp, "seq": seq}
        spans = self.splitter.split(turn.text)
        out.items = [
            _make_item(turn.tenant, turn.source_id, "turn", s.text, i, s.start, s.end, dict(meta))
            for i, s in enumerate(spans)
        ]
        if turn.created_at is not None:
            for item in out.items:
                item.created_at = turn.created_at
        return out

    def session_summary(self, tenant: str, session_id: str, turns: list[TurnRecord]) -> SourceItems | None:
        if not self.summaries or not turns:
            return None
        text = "\n".join(f"{t.speaker}: {t.text}" for t in turns)
        digest = content_hash(text)
        source_id = session_summary_id(session_id)
        out = SourceItems(tenant, source_id, "session", digest, session_id=None, timestamp=turns[0].timestamp)
        summary = self.summarizer.summarize(text[:200_000], max_tokens=self.summary_tokens.session)
        if summary:
            out.items = [_make_item(tenant, source_id, "summary", summary, -1, 0, len(text),
                                    {"summary_of": session_id, "scope": "session", "session_id": session_id,
                                     "timestamp": turns[0].timestamp})]
        return out


def session_summary_id(session_id: str) -> str:
    """The source ID of a session's summary, derived from its turns (``ItemBuilder.session_summary``)."""
    return f"{session_id}#summary"
