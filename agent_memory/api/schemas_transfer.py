"""The body and answer of ``POST /v1/import`` (``routes_export.py``): an export's JSON Lines in, the report
``agent-memory import`` prints out (``core/export_format.ImportReport``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

# The media types an import's body may be sent as: JSON Lines under its usual names, or plain text.
IMPORT_MEDIA_TYPES = ("application/x-ndjson", "application/jsonl", "application/x-jsonlines", "application/json-lines",
                      "text/plain", "text/jsonl", "text/x-ndjson")


class ImportSkipOut(BaseModel):
    line: int = Field(description="The line's number in the body (the header is line 1).")
    reason: str = Field(description="Why it was not imported.")


class ImportOut(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{
        "tenant": "acme", "sources_written": 12, "sources_unchanged": 0, "files_recorded": 3,
        "sessions_imported": 1, "sessions_unchanged": 0, "sessions_refused": 0, "messages_appended": 40,
        "turns_forgotten": 0, "complete": True, "skipped": [{"line": 7, "reason": "not JSON: Expecting value"}],
        "warnings": []}]})

    tenant: str = Field(description="The tenant imported into: the API key's (the export's header is not used).")
    sources_written: int = Field(description="The export's sources stored (new, or with another text than stored "
                                             "here). A transcript's summary, made again from its turns, is not "
                                             "one: it is no line of the export.")
    sources_unchanged: int = Field(description="The export's sources stored here already with the same text: skipped.")
    files_recorded: int = Field(description="Ingested files recorded with their content hash: the next ingestion "
                                            "of an unchanged one skips it.")
    sessions_imported: int = Field(description="Sessions created, or given the messages they lacked.")
    sessions_unchanged: int = Field(description="Sessions holding every exported message already.")
    sessions_refused: int = Field(description="Sessions holding other messages here (see skipped).")
    messages_appended: int
    turns_forgotten: int = Field(description="Archived turns forgotten again, as they were where exported.")
    complete: bool = Field(description="The body's end line was read; false: it was cut short (see warnings).")
    skipped: list[ImportSkipOut] = Field(description="Lines not imported, each with its number and why.")
    warnings: list[str]


# A whole export of one source, which imports as it is (a client or a schema-driven test may send it).
IMPORT_EXAMPLE = "".join(line + "\n" for line in (
    '{"type": "header", "format": "agent-memory-export", "version": 1, "tenant": "acme"}',
    '{"type": "source", "source_id": "notes/greenhouse", "kind": "document", "title": "Greenhouse notes", '
    '"metadata": {"team": "ops"}, "text": "The X-300 sensor replaced the X-200 in 2025."}',
    '{"type": "end", "sources": 1, "files": 0, "sessions": 0, "messages": 0}'))
# The OpenAPI entry of the body: JSON Lines, as GET /v1/export writes them, not one JSON document.
IMPORT_BODY_DOC = {"requestBody": {"required": True, "content": {
    media: {"schema": {"type": "string", "description": "an export: one JSON object per line (GET /v1/export)"},
            "example": IMPORT_EXAMPLE}
    for media in IMPORT_MEDIA_TYPES[:2]}}}
