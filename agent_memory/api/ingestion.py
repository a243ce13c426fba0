"""Ingestion behind POST /v1/documents: a JSON text document, or an uploaded file of any format
the ingestion job reads (text, Markdown, HTML, JSON/JSONL records, transcripts). The work is the
Python API's (``state.memory``); this adds progress and the HTTP errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from .errors import ApiError

Progress = Callable[[str, int, int], None]


def ingest_text(state, tenant: str, doc_in, progress: Progress | None = None) -> dict[str, Any]:
    if progress:
        progress("ingesting", 0, 1)
    added = state.memory.add(doc_in.text, source_id=doc_in.source_id, title=doc_in.title,
                             metadata=doc_in.metadata, tenant=tenant)
    if progress:
        progress("ingesting", 1, 1)
    return {"source_ids": added.source_ids, "report": added.report.to_dict()}


def ingest_upload(state, tenant: str, path: Path, filename: str, source_id: str, metadata: dict[str, Any],
                  progress: Progress | None = None) -> dict[str, Any]:
    """The file ingestion job for an upload, under the caller's ``source_id`` instead of a path:
    forgetting the upload forgets every source it held; re-uploading the same bytes is a no-op."""
    added = state.memory.add_file(path, source_id=source_id, metadata={**metadata, "path": filename},
                                  progress=progress, tenant=tenant)
    report = added.report
    if report.files_skipped:
        reason = report.files_skipped[0][1]
        raise ApiError(400, "unsupported_file", f"{filename!r} cannot be ingested: {reason}")
    if report.files_failed:
        raise ApiError(400, "unreadable_file", f"{filename!r} could not be ingested: {report.files_failed[0][1]}")
    return {"source_ids": added.source_ids, "report": report.to_dict()}


def forget(state, tenant: str, source_id: str) -> dict[str, int]:
    return state.memory.forget(source_id, tenant=tenant)
