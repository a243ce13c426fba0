"""Plain records that flow between the pipeline stages and the stores.

Every stored item (chunk, summary, turn) carries the same provenance fields so that
any passage in a prompt can be traced to its document or turn and offsets.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

ITEM_KINDS: tuple[str, ...] = ("chunk", "summary", "turn")
# The tenant of a record stored with none named (``Document.tenant`` None) by a caller that serves no tenant.
DEFAULT_TENANT = "default"


@dataclass(kw_only=True)
class Document:
    """One input document before splitting."""

    source_id: str
    text: str
    # None: the tenant of whoever stores it (a ``Memory``'s own; the pipeline's ``DEFAULT_TENANT``), so a record
    # built without one lands where the caller's questions look, not silently in "default".
    tenant: str | None = None
    title: str = ""
    path: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    # Unix time it was first stored, when it is known apart from now (an imported export keeps its time, so
    # time filters and TTL count from it); None: its items are stored now. A text past the streaming threshold
    # (8 MB, ingest/sources.py) is stored in segments, dated now.
    created_at: float | None = None


@dataclass(kw_only=True)
class TurnRecord:
    """One conversation turn as read from a transcript (before storage)."""

    session_id: str
    turn_id: str
    speaker: str
    text: str
    timestamp: str = ""
    tenant: str | None = None  # None: the tenant of whoever stores it, as ``Document.tenant``
    metadata: dict[str, Any] = field(default_factory=dict)
    # A transcript whose turn IDs are already unique beyond their session (LoCoMo's "D3:12")
    # may name a shorter source ID; by default it is "<session>/<turn>".
    source: str = ""
    # Position in its session when known apart from the batch (a live session's promoted turn);
    # else the order the turns are given in.
    seq: int | None = None
    # Unix time it was said, when known as a time (a live session's message): the stored items' created_at,
    # so time filters, TTL and importance's age count from it. None: stored now (a transcript's dates are text).
    created_at: float | None = None

    @property
    def source_id(self) -> str:
        return self.source or f"{self.session_id}/{self.turn_id}"


@dataclass(kw_only=True)
class MemoryItem:
    """A stored, embeddable piece of memory: the unit of retrieval.

    ``source_id`` points back to the document or the session/turn; ``start``/``end``
    are character offsets in that source's text.
    """

    id: str
    tenant: str
    source_id: str
    kind: str
    text: str
    chunk_index: int = 0
    start: int = 0
    end: int = 0
    content_hash: str = ""
    created_at: float = field(default_factory=time.time)
    metadata: dict[str, Any] = field(default_factory=dict)
    # The text's distinct keyword terms (``agent_memory.core.text.keyword_set``), sorted and joined by
    # spaces (no term holds whitespace: they are \w+ words and jieba's words of them). Set at
    # ingestion and stored with the item, so the reranker's terms signal need not segment and stem a
    # passage it meets cold; kept as one string because a question reads hundreds of payloads and a
    # term is looked up in it, never the set built. None: an item stored before they were.
    terms: str | None = field(default=None, compare=False, repr=False)

    def payload(self) -> dict[str, Any]:
        """The flat dict stored next to the vector."""
        out = {
            "tenant": self.tenant,
            "source_id": self.source_id,
            "kind": self.kind,
            "text": self.text,
            "chunk_index": self.chunk_index,
            "start": self.start,
            "end": self.end,
            "content_hash": self.content_hash,
            "created_at": self.created_at,
            "metadata": self.metadata,
        }
        if self.terms is not None:
            out["terms"] = self.terms
        return out

    @classmethod
    def from_payload(cls, item_id: str, payload: dict[str, Any]) -> "MemoryItem":
        return cls(
            id=str(item_id),
            tenant=payload.get("tenant", "default"),
            source_id=payload.get("source_id", ""),
            kind=payload.get("kind", "chunk"),
            text=payload.get("text", ""),
            chunk_index=int(payload.get("chunk_index", 0)),
            start=int(payload.get("start", 0)),
            end=int(payload.get("end", 0)),
            content_hash=payload.get("content_hash", ""),
            created_at=float(payload.get("created_at", 0.0)),
            metadata=dict(payload.get("metadata") or {}),
            terms=payload.get("terms"),
        )


@dataclass(kw_only=True)
class Triple:
    """(subject, relation, object) with provenance back to the item it came from."""

    subject: str
    relation: str
    object: str
    tenant: str = "default"
    source_id: str = ""
    item_id: str = ""
    subject_type: str = "entity"
    object_type: str = "entity"
    evidence: str = ""
    confidence: float = 1.0
    # When it was said or became true (ISO, the turn's or document's date), and, once a newer fact
    # of a functional relation replaced it, until when and by which relation (key): never deleted.
    valid_from: str = ""
    valid_to: str = ""
    superseded_by: str = ""

    @property
    def superseded(self) -> bool:
        return bool(self.valid_to)


@dataclass(kw_only=True)
class ScoredItem:
    """A retrieval hit: an item with the score the store gave it."""

    item: MemoryItem
    score: float


@dataclass(kw_only=True)
class SearchFilter:
    """Metadata filters every route accepts. Tenant is always applied."""

    tenant: str = "default"
    source_ids: list[str] | None = None
    kinds: list[str] | None = None
    created_after: float | None = None
    created_before: float | None = None
    # The item's own metadata keys: {"team": "ops", "lang": ["en", "de"], "version": {"gte": 2}}
    # (equality, membership, numeric or ISO date range; see agent_memory/core/metafilter.py).
    metadata: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.metadata:  # a bad spec is the caller's error (ValueError naming it), not a route failure
            from agent_memory.core.metafilter import conditions

            conditions(self.metadata)


def with_tenant(record, tenant: str):
    """``record`` (a ``Document`` or ``TurnRecord``) under ``tenant`` when it names none, else as it is."""
    return record if record.tenant is not None else replace(record, tenant=tenant)
