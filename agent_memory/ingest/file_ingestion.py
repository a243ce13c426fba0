"""Files on disk into sources: the job over paths and each file's manifest.

``ingest_paths`` and ``ingest_file`` take an ``IngestionPipeline`` and decide which
ID a file is stored under, whether it changed since its manifest was written, and what a store
failure does to the rest of the job; what a file holds then goes through the pipeline's
documents, streams and turns like any other source. Kept apart from the pipeline because
none of it splits, embeds or writes items: it is bookkeeping per file.
"""

from __future__ import annotations

import functools
import logging
import os
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from tqdm import tqdm

from agent_memory.core.errors import ConfigError, IngestError, JobInterrupted, StoreError
from agent_memory.core.progress import CHUNKS_STAGE, GRAPH_STAGE, progress_shown, unit_progress
from agent_memory.core.records import Document
from agent_memory.ingest.decoding import fallback_now
from agent_memory.ingest.discovery import file_source_id, named_files
from agent_memory.ingest.items import session_summary_id
from agent_memory.ingest.lock import ingest_lock
from agent_memory.ingest.missing import (
    StoredFile,
    files_under,
    ignored_by,
    keep_stored_ids,
    remove_gone,
    stored_bases,
    user_named,
)
from agent_memory.ingest.ownership import FILE_KEY, own_units, still_owned
from agent_memory.ingest.removal import forget_sources
from agent_memory.ingest.report import IngestReport
from agent_memory.ingest.sources import EMPTY_FILE, Skipped, TextStream, Transcript, file_hash, read_path
from agent_memory.stores.catalog import SourceEntry
from agent_memory.stores.pending_writes import PendingWriters

if TYPE_CHECKING:
    from agent_memory.ingest.pipeline import IngestionPipeline
    from agent_memory.services import Services

log = logging.getLogger(__name__)

# A file manifest's content_hash: the file's sha256, then "@<encoding>" when it was read in a fallback of the
# text_encodings setting (the same bytes read in another encoding are another text), all after "partial:" when
# records of it were refused (a hash that never matches: the next run reads it again).
PARTIAL, READ_AS = "partial:", "@"
# What the refusal of a file whose path-named ID another existing file holds says (the API answers it 409).
HELD_BY_ANOTHER = "is held by another file"


def ingest_paths(pipeline: IngestionPipeline, paths: Sequence[str | Path], *, tenant: str | None = None,
                 recursive: bool = False, glob: str | None = None, progress: bool = False,
                 base: str | Path | None = None, keep_missing: bool = False, ignore_rules: bool = True,
                 queued: PendingWriters | None = None) -> IngestReport:
    """Ingest files and folders through ``pipeline``: one job per data dir. Each file's source ID is its path
    relative to ``base`` (default: the folder holding the path given, so ``notes/`` names ``notes/team.md``
    from any working folder; see ``discovery.file_source_id``). A path outside ``base`` raises IngestError.
    A folder's walk leaves out what ``.gitignore``/``.ignore`` rules do unless not ``ignore_rules``
    (``ingest/ignore.py``); the files it would reach that are gone from disk, or now ignored, are
    forgotten unless ``keep_missing`` (``ingest/missing.py``), but those a job in ``queued`` (the jobs queued for
    ``agent-memory worker`` processes) will store, which are kept and reported as skips."""
    tenant = tenant or pipeline.services.settings.tenant
    # Before any file is walked, read or embedded: a data dir of other models fails the job once.
    pipeline.services.check_index_format()
    if base is not None:
        for raw in paths:
            if os.path.abspath(raw) != os.path.abspath(base):
                file_source_id(Path(raw), base)  # raises, naming the path outside the base
    with ingest_lock(pipeline.services.settings.data_dir):  # one job per data dir: the second fails fast
        return _ingest_paths(pipeline, paths, tenant, recursive, glob, progress, base, keep_missing, ignore_rules,
                             queued)


def _ingest_paths(pipeline: IngestionPipeline, paths, tenant: str, recursive: bool, glob: str | None,
                  progress: bool, base: str | Path | None = None, keep_missing: bool = False,
                  ignore_rules: bool = True, queued: PendingWriters | None = None) -> IngestReport:
    report = IngestReport()
    started = time.perf_counter()
    listing = functools.partial(_recorded, pipeline.services, tenant)
    # Without --base, the IDs keep the base a folder's stored files were named from: so do its ignore rules.
    bases = stored_bases(paths, listing) if base is None and ignore_rules else None
    files = named_files(paths, recursive=recursive, glob=glob, report=report, base=base,
                        data_dir=pipeline.services.settings.data_dir, ignore_rules=ignore_rules, stored_bases=bases)
    if not keep_missing:
        # Before the files are read: a renamed file of records then claims its IDs afresh instead of
        # being refused because the gone file still owns them.
        try:
            remove_gone(pipeline.services.catalog, pipeline.forget_ids, paths, tenant=tenant, recursive=recursive,
                        glob=glob, report=report, ignored=ignored_by(report, [path for path, _ in files]),
                        queued=queued)
        except StoreError as exc:  # as below: the job stops, nothing has been read; the next run starts over
            report.store_error = str(exc)
            for path, _ in files:
                report.outcome(path, "not attempted")
            report.seconds = time.perf_counter() - started
            log.error("store failed, stopping the job: %s", exc)
            return report
    if base is None:  # a file stored already keeps its ID, whichever folder this job starts from
        files = keep_stored_ids(files, paths, listing, report)
    bar = _progress(len(files), progress)
    named = user_named(paths, report)
    try:
        for path, file_id in files:
            report.files_seen += 1
            ingest_file(pipeline, path, tenant=tenant, report=report, source_id=file_id, named_by_path=True,
                        named_by_user=named(path), progress=_chunks_shown(bar, path) if bar else None)
            if bar:
                bar.update(1)
                bar.set_postfix(chunks=report.chunks, turns=report.turns, refresh=False)
    except StoreError as exc:
        # A store stopped answering: the job stops (every later file would fail the same way).
        # The file in flight is failed, the rest are listed as not attempted; none of them has a
        # manifest yet, so the next run resumes exactly there.
        report.store_error = str(exc)
        done = report.files_seen - 1  # the file in flight
        report.files_failed.append((str(files[done][0]), f"store failed: {exc}"))
        report.outcome(files[done][0], "failed")
        for path, _ in files[done + 1:]:
            report.outcome(path, "not attempted")
        log.error("store failed, stopping the job: %s", exc)
    finally:
        if bar:
            bar.close()
        report.seconds = time.perf_counter() - started
    return report


def _recorded(services: Services, tenant: str, prefix: str) -> list[StoredFile]:
    """The files stored under the folder ``prefix``."""
    try:
        return [StoredFile(row["file_id"], row["path"], row["named_by_user"])
                for row in files_under(services.catalog, tenant, prefix)]
    except ValueError as exc:  # a path no manifest can record (too long): none of its files is stored
        raise IngestError(str(exc)) from None


def ingest_file(pipeline: IngestionPipeline, path: Path, *, tenant: str, source_id: str | None = None,
                report: IngestReport | None = None, metadata: dict | None = None,
                progress: Callable[[str, int, int], None] | None = None, named_by_path: bool = False,
                named_by_user: bool = False, origin: str | None = None) -> list[str]:
    """Ingest one file under ``source_id`` (default: its file name; ``ingest_paths`` names it by its path
    under a base); its units go through ``pipeline``. Returns the sources it holds.

    A manifest in the catalog records the file's hash and its sources, so re-ingesting the same bytes does
    nothing (when those sources are still there and still the file's own) and a changed file forgets the
    sources it no longer holds. The file owns its source IDs: a record whose ID another file (or an API
    document) owns is refused, never overwritten. Problems go to the report (skipped/failed); only a store
    failure raises. An ID named by the path (no ``source_id``, or ``named_by_path``) that another existing
    file already holds is refused with that file named: two files never share one ID silently.
    ``named_by_user``: the user named the file, not only a walk reached it; a walk of its folder whose ignore
    rules leave it out keeps it (its manifest keeps that once said: ``missing.user_named``).
    ``origin``: where the file is, as its manifest records it and the check above compares it (an upload's
    absolute path on its client); default its absolute path here. An upload without one is not compared.

    Under the file's lock from its manifest read to its manifest written: the key a repair finds for every
    source the file claimed (``ownership.lock_keys``), so one in another process leaves them alone meanwhile."""
    file_id = source_id or file_source_id(path)
    with pipeline.services.source_locks.hold(tenant, file_id):
        return _ingest_file(pipeline, path, tenant=tenant, file_id=file_id,
                            report=report if report is not None else IngestReport(), metadata=metadata,
                            progress=progress, named_by_path=named_by_path or source_id is None,
                            named_by_user=named_by_user, origin=origin)


def _ingest_file(pipeline: IngestionPipeline, path: Path, *, tenant: str, file_id: str, report: IngestReport,
                 metadata: dict | None, progress: Callable[[str, int, int], None] | None, named_by_path: bool,
                 named_by_user: bool, origin: str | None) -> list[str]:
    services = pipeline.services
    owner = FILE_KEY + file_id
    where = origin or os.path.abspath(path)
    try:
        digest = file_hash(path)
    except OSError as exc:
        report.files_skipped.append((str(path), f"unreadable: {exc}"))
        report.outcome(path, "skipped")
        return []
    previous = services.catalog.get(tenant, owner)
    if named_by_path and previous is not None and _other_file(previous.path, where):
        report.files_failed.append((str(path), f"source ID {file_id!r} {HELD_BY_ANOTHER}, "
                                    f"{previous.path!r}: give --base (or source_id) so their IDs differ, "
                                    f"or forget {file_id!r} first"))
        report.outcome(path, "failed")
        return []
    encodings = services.settings.text_encodings
    stored_digest, stored_as = _stored_hash(previous.content_hash) if previous is not None else (None, None)
    if (stored_digest == digest and still_owned(services.catalog, tenant, owner, previous)
            and (stored_as is None or _read_as_now(path, encodings) == stored_as)):
        changed: dict[str, object] = {}
        if named_by_user and not previous.named_by_user:  # named now: a walk's ignore rules no longer take it back
            changed["named_by_user"] = True
        if _moved(previous.path, where):  # moved here, or imported from another machine: where it is now, so that
            changed["path"] = where  # a folder job mirrors its deletion from here and `forget <its path>` finds it
        if changed:
            services.catalog.put_many([replace(previous, **changed)] + (
                _sources_at(services.catalog, tenant, previous.item_ids, where) if "path" in changed else []))
        report.files_unchanged += 1
        report.outcome(path, "unchanged")
        return list(previous.item_ids)
    progress = progress or (lambda *_: None)
    chunks, graph = _UnitCounts(progress, CHUNKS_STAGE), _UnitCounts(progress, GRAPH_STAGE)
    try:
        loaded, read_as = read_path(path, tenant=tenant, source_id=file_id, encodings=encodings)
        skips = [x for x in loaded if isinstance(x, Skipped)]
        if skips and len(skips) == len(loaded):
            if previous is not None and all(s.reason == EMPTY_FILE for s in skips):
                # Emptied: that is the file's new content, so its old text goes (kept, it would go on
                # answering from text the file no longer holds).
                forget_sources(services, tenant, sorted(previous.item_ids), report)
                services.catalog.delete(tenant, owner)
                report.warnings.append(f"{path}: empty now: the version stored before was removed")
                report.files_ingested += 1  # its new version, holding nothing, is what is stored
                report.outcome(path, "emptied")
                return []
            # Unreadable or unusable now (binary, invalid UTF-8, no text): what was stored stays, and says so.
            kept = (f"; the version stored before{f' (read as {stored_as})' if stored_as else ''} is kept "
                    "(forget it to remove it)" if previous is not None else "")
            report.files_skipped.extend((s.path, s.reason + kept) for s in skips)
            report.outcome(path, "skipped")
            return []
        report.warnings.extend(f"{s.path}: skipped: {s.reason}" for s in skips)
        if read_as is not None:
            report.warnings.append(f"{path}: not UTF-8, read as {read_as} (text_encodings)")
        if stored_digest == digest and stored_as != read_as:  # the same bytes, another text: stored afresh
            report.warnings.append(f"{path}: stored read as {stored_as or 'UTF-8'}, read as {read_as or 'UTF-8'} "
                                   "now (text_encodings): stored again")
        units, refused = own_units(services.catalog, tenant, owner, [u for u in loaded if not isinstance(u, Skipped)],
                                   paths_here=origin is None)
        children: list[str] = []
        for done, unit in enumerate(units):
            progress("ingesting", done, len(units))
            _read_from(unit, where, origin)
            if isinstance(unit, Document):
                if metadata:
                    unit.metadata.update(metadata)
                children += pipeline.ingest_documents([unit], report, owner=owner, on_chunks=chunks, on_graph=graph)
            elif isinstance(unit, TextStream):
                children += pipeline._ingest_stream(unit, report, on_chunks=chunks)
            elif isinstance(unit, Transcript):
                if pipeline.builder.summaries:  # derived, but the file's from the start (ingest/incomplete.py)
                    services.catalog.claim(tenant, owner, sorted({session_summary_id(t.session_id) for t in unit.turns}))
                children += pipeline.ingest_turns(unit.turns, report)
            chunks.unit_done()
            graph.unit_done()
        progress("ingesting", len(units), len(units))
    except (StoreError, JobInterrupted, ConfigError):
        raise  # the job's to stop: every later file would fail the same way (a setting, a store)
    except Exception as exc:  # noqa: BLE001 - one bad file must not stop the job
        log.exception("ingesting %s failed", path)
        report.files_failed.append((str(path), f"{type(exc).__name__}: {exc}"))
        report.outcome(path, "failed")
        return []
    # Derived sources (a session's summary) are the file's too.
    services.catalog.claim(tenant, owner, children)
    if previous is not None:
        forget_sources(services, tenant, sorted(set(previous.item_ids) - set(children)), report)
    # A file with refused records keeps a manifest (so forget finds what it did store) under a
    # hash that never matches: the next run reads it again and reports the refusal again.
    manifest_hash = (PARTIAL if refused else "") + digest + (READ_AS + read_as if read_as else "")
    services.catalog.put_many([SourceEntry(tenant, owner, "file", manifest_hash, path=where, item_ids=children,
                                           named_by_user=named_by_user or (previous is not None and previous.named_by_user))]
                              + (_sources_at(services.catalog, tenant, children, where)  # those it left unchanged
                                 if previous is not None and previous.path != where else []))
    if refused:
        report.files_failed.append((str(path), "; ".join(refused[:5]) + (
            f" (+{len(refused) - 5} more)" if len(refused) > 5 else "")))
        report.outcome(path, "partial")
    else:
        report.files_ingested += 1
        report.outcome(path, "ingested")
    return children


class _UnitCounts:
    """The pipeline's ``on_chunks`` (or ``on_graph``) for one file: each unit's chunks (texts read for the graph)
    counted after those of the units before it, reported as ``progress(stage, done, total)`` (stores/jobs.py
    ``INNER_STAGES``): a file of one large unit (a PDF, a big Markdown file) shows its progress while that unit
    is stored, not 0 of 1 until its end."""

    def __init__(self, progress: Callable[[str, int, int], None], stage: str) -> None:
        self.progress = progress
        self.stage = stage
        self.before = 0  # counted in the units done
        self.done = 0  # of the unit in flight

    def __call__(self, done: int, total: int) -> None:
        self.done = done
        self.progress(self.stage, self.before + done, self.before + total)

    def unit_done(self) -> None:
        self.before += self.done
        self.done = 0


def _stored_hash(content_hash: str) -> tuple[str | None, str | None]:
    """A manifest's (file digest, fallback encoding it was read in or None); a partial one's digest is None:
    it never matches, so the file is read again."""
    if content_hash.startswith(PARTIAL):
        return None, None
    digest, _, read_as = content_hash.partition(READ_AS)
    return digest, read_as or None


def _read_as_now(path: Path, encodings) -> str | None:
    """The fallback the setting reads ``path`` in now (decoding.fallback_now); one that cannot be read again is
    "?", never a match: the job reads it, and says why it cannot."""
    try:
        return fallback_now(path, encodings)
    except OSError:
        return "?"


def _read_from(unit, where: str, origin: str | None) -> None:
    """A source's path is where its file is (the manifest's ``where``: absolute, or an upload's path on its
    client), never the path as a job was given it, relative to a working folder no one remembers. A large file's
    stream is opened from its path: set only where that is this machine's file."""
    if isinstance(unit, Document):
        unit.path = where
    elif isinstance(unit, TextStream) and origin is None:
        unit.path = Path(where)


def _sources_at(catalog, tenant: str, source_ids, where: str) -> list[SourceEntry]:
    """The entries of a moved file's sources that name another path, naming ``where`` (a turn names none)."""
    entries = catalog.get_many(tenant, list(source_ids)).values()
    return [replace(entry, path=where) for entry in entries if entry.path and entry.path != where]


def _other_file(recorded: str, where: str) -> bool:
    """The manifest names another file that still exists (an absolute path recorded at ingestion;
    older manifests hold a path relative to a working folder no one remembers: not compared)."""
    return os.path.isabs(recorded) and recorded != where and os.path.isfile(recorded)


def _moved(recorded: str, where: str) -> bool:
    """The manifest names a file that is gone from disk (an absolute path; older manifests' relative ones are
    not compared), and the same bytes are read under the same ID at ``where``."""
    return os.path.isabs(recorded) and recorded != where and not os.path.lexists(recorded)


# The CLI's bar shows a file's chunks at most this often (a file of many one-chunk records reports each).
SHOW_CHUNKS_EVERY_S = 0.2


def _chunks_shown(bar, path: Path) -> Callable[[str, int, int], None]:
    """A file's progress inside its units (``CHUNKS_STAGE``, then ``GRAPH_STAGE``, reported from the extraction's
    thread while the chunks are still stored) on the job's bar, beside the files done."""
    shown = [0.0]
    counts: dict[str, tuple[int, int]] = {}

    def show(stage: str, done: int, total: int) -> None:
        if stage not in (CHUNKS_STAGE, GRAPH_STAGE):
            return
        counts[stage] = (done, total)
        now = time.monotonic()
        if done == total or now - shown[0] >= SHOW_CHUNKS_EVERY_S:
            shown[0] = now
            bar.set_postfix_str(f"{path.name}: {unit_progress(counts)}")

    return show


def _progress(total: int, enabled: bool):
    if not enabled:
        return None
    return tqdm(total=total, unit="file", desc="ingest", disable=not progress_shown())
