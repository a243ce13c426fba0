"""Typed answers of the health and upkeep routes (``routes_health.py``, ``routes_upkeep.py``): status,
readiness, whoami, stats, the source and file lists, one source's stored state, the expiry pass's counts.

Apart from ``schemas.py`` (documents, jobs, ask, search, prompt) for its size: these are the views of what is
stored, not the bodies that store or ask. Open to extra keys where a newer server may add fields (FastAPI
would otherwise drop them)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class StatusOut(BaseModel):
    status: str = Field(examples=["ok"])
    version: str = Field(description="The version of agent-memory serving.", examples=["0.1.0"])


class ReadyOut(BaseModel):
    status: Literal["ready"]
    checks: dict[str, str] = Field(description="Each part (model, catalog, vectors, graph): 'ok' or why not.")
    version: str = Field(description="The version of agent-memory serving.", examples=["0.1.0"])


class WhoamiOut(BaseModel):
    tenant: str = Field(description="The tenant the caller's API key reads and writes.")


class StatsOut(BaseModel):
    model_config = ConfigDict(extra="allow", json_schema_extra={"examples": [{
        "items": 42, "items_per_kind": {"chunk": 30, "summary": 4, "turn": 8}, "sources": 12, "expiring_soon": 0,
        "entities": 57, "triples": 80, "superseded_triples": 3, "superseded_share": 0.0375}]})

    items: int = Field(description="Items stored for the tenant (all kinds).")
    items_per_kind: dict[str, int] = Field(description="Items per kind: chunk, summary, turn.")
    sources: int = Field(description="Distinct source IDs.")
    expiring_soon: int = Field(description="Items whose time to live ends within soon_days.")
    entities: int
    triples: int
    superseded_triples: int = Field(description="Triples a newer fact about the same subject replaced.")
    superseded_share: float


class SourceRow(BaseModel):
    model_config = ConfigDict(extra="allow")
    source_id: str
    kinds: list[str]
    items: int
    created_at: float = Field(description="Unix time of the source's oldest item.")


class SourcesOut(BaseModel):
    offset: int
    limit: int
    total: int = Field(description="The sources the filter matches, every page together.")
    next_offset: int | None = Field(description="The offset of the next page; null on the last page.")
    sources: list[SourceRow]


class FileRow(BaseModel):
    file_id: str = Field(description="The file's ID: what DELETE /v1/sources/{source_id} takes to forget it.")
    path: str = Field(description="Where it was read: the absolute path recorded at ingestion (an upload's "
                                  "client_path).")
    named_by_user: bool = Field(False, description="Named by the user to a job once (alone, or under an ignored "
                                                   "folder given), not only reached by a folder's "
                                                 "walk: a walk whose ignore rules leave it out keeps it.")


class FilesOut(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{
        "under": "/home/ana/notes", "offset": 0, "limit": 1000,
        "files": [{"file_id": "notes/team.md", "path": "/home/ana/notes/team.md", "named_by_user": False}]}]})

    under: str
    offset: int
    limit: int
    files: list[FileRow]


class CatalogEntryOut(BaseModel):
    model_config = ConfigDict(extra="allow")
    kind: str
    content_hash: str
    path: str | None = None
    title: str | None = None
    session_id: str | None = None
    seq: int | None = None
    timestamp: Any = None
    item_ids: list[str]
    triples: int


class StoredItemOut(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    kind: str
    chunk_index: int | None = None
    start: int | None = None
    end: int | None = None
    created_at: float
    text: str = Field(description="The item's text: its first 300 characters unless `full=true` "
                                  "(`text_truncated` says whether it was cut).")
    chars: int = Field(description="The length of the item's whole text, in characters.")
    text_truncated: bool = Field(description="True when `text` is only the first 300 characters of the item's text.")
    metadata: dict[str, Any]


class FileSourceOut(BaseModel):
    source_id: str
    items: int


class SourceOut(BaseModel):
    model_config = ConfigDict(extra="allow")
    source_id: str
    tenant: str
    catalog: CatalogEntryOut | None = Field(description="The catalog's entry; null for a source known only by items.")
    items: list[StoredItemOut]
    file_sources: list[FileSourceOut] | None = Field(
        default=None, description="Only for a file's ID that is no source itself (a JSON or JSONL file of "
                                  "records): each source the file holds and its number of items; catalog is "
                                  "then the file's manifest (kind 'file') and items is empty.")


class RemovedCounts(BaseModel):
    sources: int
    items: int
    triples: int
    session_messages: int = Field(default=0, description="Working-memory messages that left their sessions "
                                                         "(ttl_days 'session').")


class GcOut(BaseModel):
    expired: RemovedCounts = Field(description="What the expiry pass removed from every store.")
