"""Ingestion behind POST /v1/documents: a JSON text document, or an uploaded file of any format
the ingestion job reads (text, Markdown, HTML, JSON/JSONL records, transcripts)."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path
from typing import Any, Callable

from agent_memory.catalog import SourceEntry
from agent_memory.records import Document

from .errors import ApiError

BATCH = 64  # documents per ingestion call: the embedder batches within it
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
    """Mirror of the file ingestion job for an upload, under the caller's ``source_id`` instead of a
    path: one catalog manifest lists every source the file held, so forgetting the upload forgets
    them all, and re-uploading the same bytes is a no-op."""
    from ingest.pipeline import FILE_KEY
    from ingest.report import IngestReport
    from ingest.sources import Skipped, TextStream, Transcript, load_path

    report = IngestReport(files_seen=1)
    services = state.services
    digest = _digest(path)
    progress = progress or (lambda *_: None)
    progress("parsing", 0, 0)
    with state.ingest_lock:
        manifest_key = FILE_KEY + source_id  # the same manifest key as the file job, so forget() finds it
        previous = services.catalog.get(tenant, manifest_key)
        if previous is not None and previous.content_hash == digest:
            report.files_unchanged += 1
            return {"source_ids": list(previous.item_ids), "report": report.to_dict()}
        loaded = load_path(path, tenant=tenant, source_id=source_id)
        skipped = [u for u in loaded if isinstance(u, Skipped)]
        if skipped and len(skipped) == len(loaded):
            reason = skipped[0].reason
            raise ApiError(400, "unsupported_file", f"{filename!r} cannot be ingested: {reason}")
        docs: list[Document] = []
        transcripts: list[Transcript] = []
        for unit in loaded:
            if isinstance(unit, Document):
                docs.append(dataclasses.replace(unit, path=filename, metadata={**unit.metadata, **metadata}))
            elif isinstance(unit, TextStream):
                # Uploads are capped (413 above the limit), so reading the big text whole stays bounded.
                docs.append(Document(source_id=unit.source_id, text=unit.path.read_text(encoding="utf-8"),
                                     tenant=tenant, path=filename, metadata={**unit.metadata, **metadata,
                                                                             "path": filename}))
            elif isinstance(unit, Transcript):
                transcripts.append(unit)
        total = len(docs) + len(transcripts)
        pipeline = _pipeline(services)
        children: list[str] = []
        done = 0
        progress("ingesting", done, total)
        for start in range(0, len(docs), BATCH):
            batch = docs[start:start + BATCH]
            children += pipeline.ingest_documents(batch, report)
            done += len(batch)
            progress("ingesting", done, total)
            _raise_store_error(report)
        for transcript in transcripts:
            children += pipeline.ingest_turns(transcript.turns, report)
            done += 1
            progress("ingesting", done, total)
        if previous is not None:
            for stale in set(previous.item_ids) - set(children):
                pipeline.forget(tenant, stale, report)
        services.catalog.put_many([SourceEntry(tenant, manifest_key, "file", digest, path=filename,
                                               item_ids=children)])
        report.files_ingested += 1
    return {"source_ids": children, "report": report.to_dict()}


def forget(state, tenant: str, source_id: str) -> dict[str, int]:
    with state.ingest_lock:
        return _pipeline(state.services).forget(tenant, source_id)


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _raise_store_error(report) -> None:
    if report.store_error:
        from agent_memory.errors import StoreUnavailableError

        raise StoreUnavailableError(f"ingestion stopped: {report.store_error}")
