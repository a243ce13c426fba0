"""Response bodies of the routes that remove many sources at once (``DELETE /v1/sources?prefix=`` or
``?file_ids=``, ``DELETE
/v1/tenant``, ``DELETE /v1/tenants/{tenant}``) and of the export (``GET /v1/export``, whose lines ``memory/export_lines.py`` describes)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

_COUNTS = {"sources": 12, "items": 30, "triples": 41, "items_per_kind": {"chunk": 24, "summary": 6, "turn": 0},
           "files": 12}


class ItemsPerKind(BaseModel):
    chunk: int = 0
    summary: int = 0
    turn: int = 0


class ForgottenCounts(BaseModel):
    sources: int = Field(description="Sources removed from every store (0: nothing matched).")
    items: int = Field(description="Stored items (vectors) removed.")
    items_per_kind: ItemsPerKind = Field(description="The items removed, per kind.")
    triples: int = Field(description="Graph triples removed.")
    files: int = Field(description="Ingested files' records removed (a file's ID takes every source it held).")


class SourcesForgottenOut(ForgottenCounts):
    """``DELETE /v1/sources``'s answer: with ``prefix`` or with ``file_ids`` and ``not_found``, as it was asked."""

    model_config = ConfigDict(json_schema_extra={"examples": [
        {"prefix": "notes/", **_COUNTS},
        {"file_ids": ["notes/a.md", "notes/gone.md"], "not_found": ["notes/gone.md"], **_COUNTS}]})

    prefix: str | None = Field(None, description="The prefix asked for (with ?prefix=).")
    file_ids: list[str] | None = Field(None, description="The IDs asked for (with ?file_ids=), each forgotten as "
                                                         "DELETE /v1/sources/{id} forgets it.")
    not_found: list[str] | None = Field(None, description="Of ``file_ids``, those that matched nothing.")


class TenantForgottenOut(ForgottenCounts):
    model_config = ConfigDict(json_schema_extra={"examples": [{"tenant": "acme", "sessions": 2, "messages": 340,
                                                               **_COUNTS, "jobs": 3}]})

    tenant: str
    sessions: int = Field(description="Working-memory sessions deleted (every agent's messages and settings).")
    messages: int = Field(description="Their messages deleted.")
    jobs: int = Field(description="Records of the tenant's finished jobs removed (their results named its sources).")


# The OpenAPI entry of GET /v1/export: JSON Lines, not one JSON document.
EXPORT_LINES_DOC = {
    "description": "JSON Lines: a header (format, version, tenant), one line per source (its text put back "
                   "together from its stored pieces), per session (its settings) and per message as appended, "
                   "then an end line with the counts; a download without the end line was cut short.",
    "content": {"application/x-ndjson": {"schema": {"type": "string", "description": "one JSON object per line"},
                                         "example": '{"type": "header", "format": "agent-memory-export", '
                                                    '"version": 1, "tenant": "acme", ...}\n'}},
}
