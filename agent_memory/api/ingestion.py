"""Ingestion behind POST /v1/documents: a JSON text document, or an uploaded file of any format
the ingestion job reads (text, Markdown, HTML, JSON/JSONL records, transcripts)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from agent_memory.records import Document

from .errors import ApiError

Progress = Callable[[str, int, int], None]


def _pipeline(services):
    from ingest.pipeline import IngestionPipeline

    return IngestionPipeline(services)


def ingest_text(state, tenant: str, doc_in, progress: Progress | None = None) -> dict[str, Any]:
    from ingest.report import IngestReport

    report = IngestReport()
    doc = Document(source_id=doc_in.source_id, text=doc_in.text, tenant=tenant, title=doc_in.title,
                   metadata=dict(doc_in.metadata))
    if progress:
        progress("ingesting", 0, 1)
    with state.ingest_lock:
        ids = _pipeline(state.services).ingest_documents([doc], report)
    if progress:
        progress("ingesting", 1, 1)
    _raise_store_error(report)
    return {"source_ids": ids, "report": report.to_dict()}


def ingest_upload(state, tenant: str, path: Path, filename: str, source_id: str, metadata: dict[str, Any],
                  progress: Progress | None = None) -> dict[str, Any]:
    """The file ingestion job for an upload, under the caller's ``source_id`` instead of a path:
    forgetting the upload forgets every source it held; re-uploading the same bytes is a no-op."""
    from ingest.report import IngestReport

    report = IngestReport(files_seen=1)
    with state.ingest_lock:
        children = _pipeline(state.services).ingest_file(path, tenant=tenant, source_id=source_id, report=report,
                                                         metadata={**metadata, "path": filename}, progress=progress)
    _raise_store_error(report)
    if report.files_skipped:
        reason = report.files_skipped[0][1]
        raise ApiError(400, "unsupported_file", f"{filename!r} cannot be ingested: {reason}")
    if report.files_failed:
        raise ApiError(400, "unreadable_file", f"{filename!r} could not be ingested: {report.files_failed[0][1]}")
    return {"source_ids": children, "report": report.to_dict()}


def forget(state, tenant: str, source_id: str) -> dict[str, int]:
    with state.ingest_lock:
        return _pipeline(state.services).forget(tenant, source_id)


def _raise_store_error(report) -> None:
    if report.store_error:
        from agent_memory.errors import StoreUnavailableError

        raise StoreUnavailableError(f"ingestion stopped: {report.store_error}")
