"""The document calls of ``Memory`` (its base class): storing texts, files and turns, and forgetting them.

They use what ``Memory`` builds and holds: ``ingestion``, ``services``, ``write_lock``, ``check_space``,
``settle``, ``catch_up_wait_s``, its working memory once built, ``_tenant`` and ``_check_queued_writes``. ``Added`` is what an ``add*`` call returns.
"""

from __future__ import annotations

import errno
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from agent_memory.conversation.archived_turns import session_key
from agent_memory.core.errors import StoreUnavailableError
from agent_memory.core.progress import CHUNKS_STAGE, GRAPH_STAGE
from agent_memory.core.records import Document, TurnRecord, with_tenant
from agent_memory.ingest.bulk_forget import forget_each, forget_many, forget_tenant, sources_to_forget
from agent_memory.ingest.discovery import check_source_id, file_source_id
from agent_memory.ingest.file_ingestion import ingest_file, ingest_paths
from agent_memory.ingest.ownership import match_stored, near_sources
from agent_memory.ingest.queued_writes import refuse_queued_writes
from agent_memory.ingest.report import IngestReport
from agent_memory.memory.arguments import (
    check_document,
    check_forgotten_id,
    check_metadata,
    checked_records,
    expect_type,
)

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]


@dataclass
class Added:
    """What an ``add*`` call stored: the source IDs (unchanged ones included) and the job's report."""

    source_ids: list[str]
    report: IngestReport = field(repr=False)


class DocumentMethods:
    """``Memory``'s calls that write and forget documents, files and turns."""

    def add(self, text: str, *, source_id: str, title: str = "", metadata: Mapping[str, Any] | None = None,
            tenant: str | None = None, progress: Progress | None = None) -> Added:
        """Store one text under ``source_id``; adding the same ID again replaces that source. ``progress``:
        called ``("chunks", done, total)`` as its chunks are stored, ``("graph", done, total)`` as its facts are read
        (``add_file``)."""
        check_document(text, title)
        check_source_id(expect_type(source_id, str, "source_id", "a str such as 'notes/greenhouse'"))
        doc = Document(source_id=source_id, text=text, tenant=self._tenant(tenant), title=title,
                       metadata=check_metadata(metadata))
        return self.add_documents([doc], progress=progress)

    def add_documents(self, docs: Iterable[Document], *, progress: Progress | None = None) -> Added:
        """Store documents as they are (each under its ``tenant``, or this Memory's when it names none; unchanged
        ones are skipped). ``docs`` is an iterable of ``Document``; anything else (one dict, a list of dicts) is
        a TypeError naming it.
        ``progress``: called ``("chunks", done, total)`` as each batch's chunks are stored, and ``("graph", done,
        total)`` as its texts are read for the entity graph (done == total once the facts are written there)."""
        docs = self._tenants_checked(checked_records(docs, Document, "docs", "Document(source_id='notes/a', text='...')"))
        on_chunks = (lambda done, total: progress(CHUNKS_STAGE, done, total)) if progress else None
        on_graph = (lambda done, total: progress(GRAPH_STAGE, done, total)) if progress else None
        return self._write(lambda report: self.ingestion.ingest_documents(docs, report, on_chunks=on_chunks,
                                                                          on_graph=on_graph), tenant=_one_tenant(docs))

    def add_turns(self, turns: Sequence[TurnRecord]) -> Added:
        """Store transcript turns (one source per turn, ``<session>/<turn>``) and a summary per session.
        ``turns`` is an iterable of ``TurnRecord``; anything else is a TypeError naming it. A turn whose ID a
        file, a document or a session holds raises IngestError (ingest/ownership.py)."""
        turns = self._tenants_checked(checked_records(
            turns, TurnRecord, "turns", "TurnRecord(session_id='s1', turn_id='1', speaker='Ana', text='...')"))
        return self._write(lambda report: self.ingestion.ingest_direct_turns(turns, report), tenant=_one_tenant(turns))

    def _tenants_checked(self, records: Iterable[Any]) -> Iterable[Any]:
        """Each record under its tenant checked as a ``tenant=`` argument is (``Memory._tenant``), a record that
        names none under this Memory's: a sequence whole before anything is stored, a lazy iterable as it is drawn."""
        if isinstance(records, Sequence):
            return [with_tenant(record, self._tenant(record.tenant)) for record in records]
        return (with_tenant(record, self._tenant(record.tenant)) for record in records)

    def add_file(self, path: str | Path, *, source_id: str | None = None,
                 metadata: Mapping[str, Any] | None = None, progress: Progress | None = None,
                 tenant: str | None = None, base: str | Path | None = None, named_by_user: bool = True,
                 client_path: str | None = None, named_by_path: bool | None = None) -> Added:
        """Ingest one file (text, Markdown, HTML, PDF, office files, EPUB, notebooks, e-mail and mail archives,
        code, JSON/JSONL records, transcripts) under ``source_id`` (default: its path relative to ``base``; without ``base``,
        its file name — never an absolute path). Forgetting that ID forgets every source the file held; re-adding the
        same bytes does nothing. A path that is no file raises FileNotFoundError (a folder: IsADirectoryError,
        pointing to ``add_paths``); a file skipped or failed while read (binary, unreadable) is in ``report``.
        ``progress(stage, done, total)``: ``("ingesting", units done, units)`` between the file's units (a record,
        a notebook, a whole PDF), ``("chunks", done, total)`` while a unit's chunks are stored (the file's chunks
        so far, of those split so far; every 256 items at most), so a single large document shows how far it is,
        and ``("graph", done, total)`` while its texts are read for the entity graph (beside the chunks, and after
        them; done == total once the facts are written there).
        ``named_by_user`` (default): a file added by name stays when a later walk of its folder ignores it
        (``ingest/missing.py``); False for a file a folder's walk reached (an upload of a folder job).
        An ID named by the path (no ``source_id``, or ``named_by_path``: the caller named it from the path, as
        the CLI's uploads do) that another existing file holds is refused naming that file; a ``source_id``
        the caller chose replaces what it held. ``client_path``: where the file is as the manifest records it
        and that check compares it (an upload's absolute path on its client; default: ``path`` made absolute)."""
        tenant = self._tenant(tenant)
        expect_type(path, (str, Path), "path", "a str or pathlib.Path of one file")
        # The one path the caller named: its absence is raised, not left in a report (add_paths, a job over
        # many files, records such skips and goes on).
        if Path(path).is_dir():
            raise IsADirectoryError(errno.EISDIR, f"add_file takes one file, this is a folder (add_paths([{str(path)!r}], "
                                    "recursive=True) ingests a folder)", str(path))
        if not Path(path).is_file():
            what = "no regular file" if Path(path).exists() else "no such file"
            raise FileNotFoundError(errno.ENOENT, f"add_file: {what}", str(path))
        named = source_id is None if named_by_path is None else bool(named_by_path)
        if source_id is not None:
            check_source_id(expect_type(source_id, str, "source_id", "a str such as 'notes/greenhouse.md'"))
        source_id = source_id or file_source_id(Path(path), base)
        metadata = check_metadata(metadata)
        return self._write(lambda report: ingest_file(
            self.ingestion, Path(path), tenant=tenant, source_id=source_id, report=report, metadata=metadata,
            progress=progress, named_by_path=named, named_by_user=named_by_user, origin=client_path),
            IngestReport(files_seen=1), tenant=tenant)

    def _write(self, ingest: Callable[[IngestReport], list[str]], report: IngestReport | None = None, *,
               tenant: str | None) -> Added:
        """One ingestion call under the write lock, after ``tenant``'s queued archive passes (every tenant's
        for None: records of several); a store failure it recorded is raised."""
        report = report if report is not None else IngestReport()
        self.check_space("ingestion")
        self.services.check_index_format()  # before the file is read or embedded, not after
        self._after_appends(tenant)
        with self.write_lock:
            ids = ingest(report)
        if report.store_error:
            raise StoreUnavailableError(f"ingestion stopped: {report.store_error}")
        return Added(ids, report)

    def add_paths(self, paths: Sequence[str | Path], *, recursive: bool = False, glob: str | None = None,
                  progress: bool = False, tenant: str | None = None, base: str | Path | None = None,
                  keep_missing: bool = False, ignore_rules: bool = True) -> IngestReport:
        """The ingestion job over files and folders (one path alone is taken as a list of one); a
        store failure stops it and is in the report. Source IDs are paths relative to ``base``
        (default: the folder holding each path given). A walk skips what ``.gitignore``/``.ignore`` rules do
        unless not ``ignore_rules`` (a file named is read). Stored files a walk would reach that are gone
        from disk or now ignored are forgotten (memory mirrors the folder) unless ``keep_missing``; one a job queued
        for the workers will store is kept, a skip in the report (``_refuse_queued_writes`` says why)."""
        self.check_space("ingestion")
        if isinstance(paths, (str, Path)):
            paths = [paths]
        for path in expect_type(paths, (list, tuple), "paths", "a list of files and folders"):
            expect_type(path, (str, Path), "each path", "a str or pathlib.Path")
        tenant = self._tenant(tenant)
        self._after_appends(tenant)
        with self.write_lock:
            return ingest_paths(self.ingestion, paths, tenant=tenant, recursive=recursive, glob=glob,
                                progress=progress, base=base, keep_missing=keep_missing, ignore_rules=ignore_rules,
                                queued=self.services.queued_writes if self._check_queued_writes else None)

    def _after_appends(self, tenant: str | None) -> None:
        """A write lands after the archive of the messages appended before it (queued on a worker thread), as when
        appends archived before they returned: which of a turn and a document holds an ID first
        (ingest/ownership.py), and which write replaces which, keep their order. IDs are the tenant's own, so the
        write waits for ``tenant``'s passes alone (every tenant's for None). Not the start's catch-up (a write
        never waits for it), nor under the HTTP API (archiving in the background)."""
        memory = self.__dict__.get("_working_memory")
        if memory is not None and not memory.background and not memory.queued(self.catch_up_wait_s, tenant):
            log.warning("writing before the archive of earlier appends finished (it took more than %g s)",
                        self.catch_up_wait_s)

    def forget(self, source_id: str, *, tenant: str | None = None) -> dict[str, int]:
        """Remove one source (or a file and every source it held) from every store. ``source_id``
        as ``add_paths`` named it, or written as a path (``./notes/x.md``, the file's absolute path):
        see ``matching_sources``. Returns the counts removed (``sources``, ``items``, ``triples``):
        all zero if it was unknown. Waits for the start's catch-up first: a turn it archived later would
        come back. SourceBusyError, nothing removed, while a job queued for the workers will store it
        (``_refuse_queued_writes``)."""
        check_forgotten_id(source_id)
        tenant = self._tenant(tenant)
        self._refuse_queued_writes(tenant, f"source {source_id!r}", [source_id])
        self.settle(tenant)
        with self.write_lock:
            return self.ingestion.forget_ids(tenant, match_stored(self.services, tenant, source_id) or [source_id])

    def forget_prefix(self, prefix: str, *, tenant: str | None = None) -> dict[str, Any]:
        """Forget every source whose ID starts with ``prefix`` (and every file whose ID does, with all it held),
        from every store, in batches (``ingest/bulk_forget.py``): what a ``forget`` of each would remove, in one
        round of each store per batch. Found in the catalog, the vectors and the graph, so a source whose catalog
        entry was lost goes too. Returns ``prefix`` and the counts removed: ``sources``, ``items``,
        ``items_per_kind``, ``triples``, ``files`` (all zero: nothing matched). An empty prefix is refused (it
        names every source: ``forget_tenant`` says so). SourceBusyError as ``forget`` raises it."""
        expect_type(prefix, str, "prefix", "a str such as 'notes/'")
        if not prefix:
            raise ValueError("prefix must not be empty: it would name every source (forget_tenant(tenant) removes "
                             "a whole tenant)")
        tenant = self._tenant(tenant)
        self._refuse_queued_writes(tenant, f"a source under prefix {prefix!r}", prefix=prefix)
        self.settle(tenant)  # a turn the start's catch-up archived later would come back
        self.check_space("forgetting")  # the stores write their deletions too
        with self.write_lock:
            return {"prefix": prefix, **forget_many(self.services, tenant, sources_to_forget(self.services, tenant, prefix))}

    def forget_each(self, source_ids: Sequence[str], *, tenant: str | None = None) -> dict[str, Any]:
        """``forget`` of each of ``source_ids`` (source IDs, file IDs, their path spellings) in one batched removal
        (``ingest/bulk_forget.forget_each``): a folder job through a server forgets the files gone from disk so,
        one request for many. Returns ``file_ids`` (as given), ``not_found`` (those that matched nothing) and the
        counts ``forget_prefix`` returns. SourceBusyError as ``forget`` raises it, for any of them: none is removed."""
        ids = list(expect_type(source_ids, (list, tuple), "source_ids", "a list of source or file IDs"))
        for source_id in ids:
            check_forgotten_id(source_id)
        tenant = self._tenant(tenant)
        self._refuse_queued_writes(tenant, "a source of source_ids", ids)
        self.settle(tenant)  # a turn the start's catch-up archived later would come back
        self.check_space("forgetting")
        with self.write_lock:
            return {"file_ids": ids, **forget_each(self.services, tenant, ids)}

    def _refuse_queued_writes(self, tenant: str, what: str, given: Sequence[str] = (),
                              prefix: str | None = None) -> None:
        """SourceBusyError while a job queued in PostgreSQL for the workers, or running there, will store a source
        this forget names (``ingest/queued_writes.py``, the rule the HTTP API's deletes follow): forgotten now, it
        would be stored again when the job runs. Nothing to ask without such a queue, or with
        ``check_queued_writes`` off (``Memory``)."""
        queue = self.services.queued_writes if self._check_queued_writes else None
        if queue is not None:
            refuse_queued_writes(queue, tenant, what, given, prefix,
                                 wait_hint="a worker runs it; GET /v1/jobs/{job_id} on a server shows it")

    def forget_tenant(self, tenant: str) -> dict[str, Any]:
        """Everything ``tenant`` holds, from every store: its sessions (every agent's messages, summaries and
        settings), then its sources, items, triples and catalog entries. The tenant is always named (no
        default: nothing removes a whole tenant by omission). Returns ``tenant``, ``sessions``, ``messages``
        and the counts ``forget_prefix`` returns. SourceBusyError, nothing removed, while a job queued for the
        workers will store a source of the tenant."""
        expect_type(tenant, str, "tenant", "a str naming the tenant to remove")
        tenant = self._tenant(tenant)
        self._refuse_queued_writes(tenant, f"a source of tenant {tenant!r}", prefix="")  # "": every source
        self.settle(tenant)
        self.check_space("forgetting")
        prefix = session_key(tenant, "")
        wm = self.working_memory
        wm.flush()  # a queued archive pass must not write the tenant's turns back after this
        keys = sorted({row["session_id"] for row in wm.sessions.store.session_rows(prefix)})
        messages = sum(wm.delete(key) for key in keys)
        with self.write_lock:
            removed = forget_tenant(self.services, tenant)
        return {"tenant": tenant, "sessions": len(keys), "messages": messages, **removed}

    def matching_sources(self, source_id: str, *, tenant: str | None = None) -> list[str]:
        """The stored source IDs ``forget(source_id)`` would remove (``ingest/ownership.match_stored``): those the
        catalog knows, else the ID when the vectors or the graph hold a source under it that the catalog lost."""
        check_forgotten_id(source_id)
        tenant = self._tenant(tenant)
        self.settle(tenant)
        return match_stored(self.services, tenant, source_id)

    def similar_sources(self, source_id: str, *, tenant: str | None = None, limit: int = 3) -> list[str]:
        """Stored source IDs that look like ``source_id``: a hint when nothing matched it."""
        check_forgotten_id(source_id)
        tenant = self._tenant(tenant)
        self.settle(tenant)
        return near_sources(self.services, tenant, source_id, limit)


def _one_tenant(records: Iterable[Any]) -> str | None:
    """The tenant every record of a list names, or None: records of several tenants, or a lazy iterable (not drawn
    yet), whose write waits for every tenant's queued archive passes."""
    if not isinstance(records, list):
        return None
    tenants = {record.tenant for record in records}
    return next(iter(tenants)) if len(tenants) == 1 else None
