"""The ingestion job through a server: the walk is this machine's, each file is uploaded under the source
ID a local ingestion would give it (``agent_memory.ingest.discovery.file_source_id``), big ones through
the server's background jobs, whose status gives the progress; the per-file reports add up to the same
``IngestReport`` a local job prints. Through the server that owns the data dir, a folder job also forgets
the files gone from disk that a local job would (``agent_memory/ingest/missing.py``)."""

from __future__ import annotations

import functools
import sys
import time
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

from agent_memory.core.errors import StoreUnavailableError
from agent_memory.core.progress import CHUNKS_STAGE, GRAPH_STAGE, Progress, progress_shown, unit_progress
from agent_memory.ingest.discovery import named_files
from agent_memory.ingest.missing import (
    StoredFile,
    ignored_by,
    keep_stored_ids,
    remove_gone_through,
    stored_bases,
    unrecorded_note,
    user_named,
)
from agent_memory.ingest.report import IngestReport
from agent_memory.ingest.sources import refused_by_name
from agent_memory.remote.responses import RemoteError

# Per-file report fields that add up across uploads (the lists are extended, the rest summed).
_SUMMED = ("sources_written", "sources_unchanged", "sources_removed", "chunks", "summaries", "turns", "triples",
           "items_deleted", "embeddings_computed")


class UploadTarget(Protocol):
    """The server calls the job makes (``RemoteMemory``'s)."""

    url: str
    owner: str | None  # set when the server owns our data dir (found through its lock file)

    def files_under(self, folder: str) -> list[StoredFile]: ...

    def forget_files(self, file_ids: list[str]) -> dict: ...

    def upload(self, path: Path, source_id: str, *, progress: Progress | None = None, named_by_user: bool = True,
               named_by_path: bool = False) -> dict[str, Any]: ...


def ingest_through(server: UploadTarget, paths: Sequence[str | Path], *, recursive: bool = False,
                   glob: str | None = None, progress: bool = False, base: str | Path | None = None,
                   keep_missing: bool = False, data_dir: str | Path | None = None,
                   ignore_rules: bool = True) -> IngestReport:
    """``RemoteMemory.ingest_paths``: the job over ``paths``, each file uploaded to ``server``."""
    report = IngestReport()
    started = time.perf_counter()
    progress = progress_shown(progress)  # AGENT_MEMORY_NO_PROGRESS=1 quiets an upload's lines as a local job's bar
    # One listing of a folder serves every step (a failed one is asked again, and warned of, by each).
    listing = functools.lru_cache(maxsize=None)(server.files_under)
    # The IDs keep the base a folder's stored files were named from (below): so do its ignore rules.
    bases = stored_bases(paths, listing) if base is None and server.owner and ignore_rules else None
    files = named_files(paths, recursive=recursive, glob=glob, report=report, base=base, data_dir=data_dir,
                        ignore_rules=ignore_rules, stored_bases=bases)
    if not keep_missing and not _mirror(server, report, paths, recursive, glob, listing, [p for p, _ in files]):
        for path, _ in files:
            report.outcome(path, "not attempted")
        report.seconds = time.perf_counter() - started
        return report
    if base is None and server.owner:  # a file stored already keeps its ID, as in a local job
        files = keep_stored_ids(files, paths, listing, report)
    named = user_named(paths, report)
    try:
        for n, (path, source_id) in enumerate(files, start=1):
            report.files_seen += 1
            shown = progress_line(f"[{n}/{len(files)}] {path}") if progress else None
            if shown:
                shown("uploading", 0, 0)
            _upload_into(server, report, path, shown, source_id, named_by_user=named(path))
            if shown:
                print(file=sys.stderr)
    except StoreUnavailableError as exc:
        if progress:
            print(file=sys.stderr)  # ends the file's progress line before the report
        # The server went away mid-job (stopped, killed): whether it took the file in flight is unknown (a
        # big one may be in its spooled jobs, run again at its next start); the rest were never sent.
        report.store_error = str(exc)
        in_flight = files[report.files_seen - 1][0]
        report.files_failed.append((str(in_flight),
                                    f"server failed during its upload, so it may or may not be stored: {exc}"))
        report.outcome(in_flight, "failed")
        left = [path for path, _ in files[report.files_seen:]]
        for path in left:
            report.outcome(path, "not attempted")
        if left:
            report.warnings.append(f"{len(left)} files not sent: the server stopped answering; run the same "
                                   "command again once it is back (files stored already are skipped as unchanged)")
    finally:
        report.seconds = time.perf_counter() - started
    return report


def _mirror(server: UploadTarget, report: IngestReport, paths: Sequence[str | Path], recursive: bool,
            glob: str | None, listing: Callable[[str], list[StoredFile]], read: list[Path]) -> bool:
    """Forget the files gone from the folders given (before any upload: a renamed file of records then
    claims its IDs afresh); False when the server stopped answering (the job stops, as on a store error)."""
    if not server.owner:
        report.warnings += unrecorded_note(paths, server.url)
        return True
    try:
        remove_gone_through(listing, server.forget_files, paths, recursive=recursive, glob=glob, report=report,
                            ignored=ignored_by(report, read))
    except StoreUnavailableError as exc:
        report.store_error = str(exc)
        return False
    return True


def _upload_into(server: UploadTarget, report: IngestReport, path: Path, progress: Progress | None,
                 source_id: str, *, named_by_user: bool = True) -> None:
    if refusal := refused_by_name(path):  # decided here: a key file's bytes never leave this machine
        report.files_skipped.append((str(path), refusal))
        report.outcome(path, "skipped")
        return
    try:
        data = server.upload(path, source_id, progress=progress, named_by_user=named_by_user, named_by_path=True)
    except OSError as exc:
        report.files_skipped.append((str(path), f"unreadable: {exc}"))
        report.outcome(path, "skipped")
        return
    except RemoteError as exc:
        if exc.code in ("config_error", "reindex_required"):
            raise  # the server's data dir takes no writes (e.g. other models: reindex): every file would fail
        if exc.code == "unsupported_file":
            report.files_skipped.append((str(path), str(exc)))
            report.outcome(path, "skipped")
        else:
            report.files_failed.append((str(path), str(exc)))
            report.outcome(path, "failed")
        return
    one = data.get("report") or {}
    for name in _SUMMED:
        setattr(report, name, getattr(report, name) + int(one.get(name) or 0))
    report.warnings += list(one.get("warnings") or [])
    if one.get("files_unchanged"):
        report.files_unchanged += 1
        report.outcome(path, "unchanged")
    else:
        report.files_ingested += 1
        report.outcome(path, "ingested")


def progress_line(label: str) -> Progress:
    """A job's progress on one stderr line (the local job's progress bar goes there too)."""

    last: dict = {"stage": ("", 0, 0), "inside": {}}  # the stage's counts, and those inside its unit shown after

    def show(stage: str, done: int, total: int) -> None:
        if stage in (CHUNKS_STAGE, GRAPH_STAGE):
            last["inside"][stage] = (done, total)
            stage, done, total = last["stage"]
        else:
            last["stage"] = (stage, done, total)
        counts = f" {done}/{total}" if total else ""
        inside = unit_progress(last["inside"])
        print(f"\r{label}: {stage}{counts}{', ' + inside if inside else ''}", end="", file=sys.stderr, flush=True)

    return show
