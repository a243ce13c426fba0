"""Files gone from disk: what a folder job removes so that memory mirrors the folder.

After a rename, a move or a delete, ``ingest notes/ -r`` stores the new ID, and the old one would go
on answering from a file that no longer exists. So a folder job forgets (the path ``forget`` takes) the
files it would have read but that are gone: those whose manifest records an absolute path under a folder
given (not a file given alone), within the job's recursion and glob, and that the disk says are not there.

Not touched: sources with no file (text through the API or Python); uploads without ``client_path``
(their recorded path is the client's relative name, not a path on this machine); manifests of old
stores that recorded a path relative to a working folder no one remembers; anything under a folder
that is missing or cannot be listed (an error of the job, not "every file deleted"); a file the disk
cannot vouch for (no permission, a link loop). An upload with ``client_path`` counts as a file: the CLI
sends it only to the server owning its data dir, on its own machine, so the path is the very file a
local job would have read (``forget`` and ``inspect`` already take it so). ``--keep-missing`` keeps
them all (a partial copy of a folder).

Beside ``agent-memory worker`` processes (jobs queued in PostgreSQL), a file one of their jobs, queued or
running, will store is kept (a skip in the report, saying which job; the job goes on), as a forget of it is
refused then (``queued_writes.py``): forgotten now, it would be stored again when that job runs. Through a
server, whose delete refuses such a file with the rest of its batch (409), the batch is forgotten by halves
and only that file is kept. A later run, after that job, forgets it.

Through that server (``RemoteMemory.ingest_paths``) the same files go, decided the same way: the server
lists the file manifests recorded under each folder (``files_under``, ``GET /v1/files``), the client,
whose disk the paths name, keeps those this walk reaches and that are gone (``remove_gone_through``), and
forgets them by their file IDs, many in one request (``DELETE /v1/sources?file_ids=``), as a local job
forgets them in one removal.

Files now ignored go the same way (``now_ignored``): a stored file under a folder given that is still on
disk but that this walk left out by ignore rules (``build/`` added to ``.gitignore`` after it was stored;
a lockfile stored before the built-in rules for generated files, or by ``--no-ignore``; ingest/ignore.py), unless the job reads it (named alone too). Memory mirrors what a walk of the folder
reads, so it does not keep answering from build output the project now disowns; ``--keep-missing`` keeps
them too, and ``--no-ignore`` ignores nothing, so removes nothing for it. A file once given alone to a job
(its manifest's ``named_by_user``) stays, as a file added with ``git add -f`` stays tracked: the user named
it, the walk's rules do not take it back; so do the files read under a folder given that those rules
leave out (``git add -f build/``). Gone from disk, it goes like any other.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
from pathlib import PurePath
from typing import Callable, NamedTuple, Sequence

from agent_memory.core.errors import AgentMemoryError, SourceBusyError, StoreUnavailableError
from agent_memory.core.limits import forget_batches
from agent_memory.ingest.discovery import folder_prefix
from agent_memory.ingest.ownership import FILE_KEY
from agent_memory.ingest.queued_writes import kept_reason, pending_for
from agent_memory.ingest.report import IngestReport
from agent_memory.stores.catalog import SourceEntry
from agent_memory.stores.pending_writes import PendingWriters


class StoredFile(NamedTuple):
    """A file's manifest as a folder job sees it: its ID, its recorded path, whether the user named it."""
    file_id: str
    path: str
    named_by_user: bool = False


# ``IngestionPipeline.forget_ids``: files (by their IDs) and every source they held, out of every store at once.
ForgetFiles = Callable[[str, list[str], IngestReport], object]
# Through a server: the files recorded under a folder's prefix, and forgetting a batch of file IDs at once.
ListFiles = Callable[[str], Sequence[StoredFile]]
ForgetIds = Callable[[list[str]], dict]
# Whether this job's walk left an absolute path out by ignore rules (``ignored_by``).
Ignored = Callable[[str], bool]
MAX_FOLDER_CHARS = 4096
GONE, NOW_IGNORED = "gone from disk", "now ignored"


def remove_gone(catalog, forget: ForgetFiles, paths: Sequence[str | os.PathLike], *, tenant: str, recursive: bool,
                glob: str | None, report: IngestReport, ignored: Ignored | None = None,
                queued: PendingWriters | None = None) -> None:
    """Forget every file of :func:`gone_files` in one removal (``forget(tenant, file_ids, report)``), each listed
    in the report once it has gone (a store that fails first leaves their manifests: the next run forgets them).
    ``queued``: the jobs queued in PostgreSQL for ``agent-memory worker`` processes, asked first as a forget asks
    them (``queued_writes.py``): a file one of them will store is kept, a skip in the report saying so, and the
    job goes on (forgotten now, it would be stored again when that job runs)."""
    gone = gone_files(catalog, tenant, paths, recursive=recursive, glob=glob, ignored=ignored)
    if gone and queued is not None:
        named = {entry.source_id: [entry.source_id[len(FILE_KEY):], entry.path] for entry, _ in gone}
        busy = pending_for(queued, tenant, named)
        for entry, why in gone:
            if entry.source_id in busy:
                _kept(report, entry.path, why, [w.job_id for w in busy[entry.source_id]])
        gone = [(entry, why) for entry, why in gone if entry.source_id not in busy]
    if not gone:
        return
    forget(tenant, [entry.source_id[len(FILE_KEY):] for entry, _ in gone], report)
    for entry, why in gone:
        _removed(report, entry.source_id[len(FILE_KEY):], entry.path, why)


def gone_files(catalog, tenant: str, paths: Sequence[str | os.PathLike], *, recursive: bool,
               glob: str | None, ignored: Ignored | None = None) -> list[tuple[SourceEntry, str]]:
    """The manifests of files that a walk of the folders among ``paths`` would have reached, gone from disk
    or now ignored (``ignored``), each with which (``GONE``, ``NOW_IGNORED``)."""
    found: dict[str, tuple[SourceEntry, str]] = {}
    for prefix in mirrored_folders(paths):
        for entry in catalog.under_path(tenant, "file", prefix):
            why = (why_removed(entry.path, prefix, recursive, glob, None if entry.named_by_user else ignored)
                   if entry.source_id.startswith(FILE_KEY) else None)
            if why is not None:
                found.setdefault(entry.source_id, (entry, why))
    return list(found.values())


def ignored_by(report: IngestReport, read: Sequence[str | os.PathLike]) -> Ignored:
    """Whether the walk that filled ``report`` left an absolute path out by ignore rules: a file it ignored,
    or one under a folder it did not enter; never a file the job reads (``read``: named alone, say)."""
    reading = {os.path.abspath(path) for path in read}
    folders = {os.path.abspath(folder) for folder in report.ignored_folders}

    def ignored(path: str) -> bool:
        if path in reading:
            return False
        return path in report.ignored_paths or any(str(up) in folders for up in PurePath(path).parents)

    return ignored


def _removed(report: IngestReport, file_id: str, path: str, why: str) -> None:
    (report.gone_from_disk if why == GONE else report.now_ignored).append(file_id)
    report.outcome(path, f"removed: {why}")


def _kept(report: IngestReport, path: str, why: str, jobs: Sequence[str]) -> None:
    report.files_skipped.append((path, kept_reason(why, jobs)))
    report.outcome(path, "skipped")


def user_named(paths: Sequence[str | os.PathLike], report: IngestReport) -> Callable[[str | os.PathLike], bool]:
    """Whether a file this job reads was named by the user (its manifest records it: ``StoredFile.named_by_user``):
    given alone among ``paths``, or under a folder given that the rules above it leave out, which the walk
    entered as named (``report.named_despite_rules``, as ``git add -f build/``); not a file a walk merely
    reached. Call it after the walk."""
    alone = {os.path.abspath(raw) for raw in paths if not os.path.isdir(raw)}
    folders = report.named_despite_rules

    def named(path: str | os.PathLike) -> bool:
        where = os.path.abspath(path)
        return where in alone or any(str(up) in folders for up in PurePath(where).parents)

    return named


def mirrored_folders(paths: Sequence[str | os.PathLike]) -> list[str]:
    """The folders among ``paths`` a job mirrors, each as the prefix its files' recorded paths start with
    (absolute, ending in a separator). Left out: a file given alone, a missing path and a folder that cannot
    be listed (the walk reported them; the absence of their files here proves nothing)."""
    prefixes: list[str] = []
    for raw in paths:
        if not os.path.isdir(raw):
            continue
        try:
            os.listdir(raw)
        except OSError:
            continue
        prefix = folder_prefix(raw)
        if prefix not in prefixes:
            prefixes.append(prefix)
    return prefixes


def why_removed(path: str, prefix: str, recursive: bool, glob: str | None, ignored: Ignored | None) -> str | None:
    """``GONE`` or ``NOW_IGNORED`` if ``path`` is one a walk of the folder ``prefix`` names would reach
    (:func:`_walked`), and it is gone, or that walk now leaves it out by ignore rules (``ignored``: None for a
    file the user named once, which they never take back); else None."""
    if not _walked(path, prefix, recursive, glob):
        return None
    if _gone(path):
        return GONE
    return NOW_IGNORED if ignored is not None and ignored(path) else None


def files_under(catalog, tenant: str, folder: str) -> list[dict[str, str | bool]]:
    """The files whose manifest records a path under ``folder`` (an absolute path on the machine that
    ingested them: a local job's, or an upload's ``client_path``), by file ID:
    ``{"file_id", "path", "named_by_user"}``.
    What ``GET /v1/files`` answers; the client decides which are gone. A folder that is not an absolute
    '/'-path raises ValueError naming it."""
    if (not isinstance(folder, str) or not folder.startswith("/") or "\x00" in folder
            or len(folder) > MAX_FOLDER_CHARS):
        raise ValueError(f"the folder must be an absolute path, got {str(folder)[:200]!r}")
    # "/a/notes", "/a/notes/" and "/a/x/../notes" list the same (jobs record normalized paths); never "/a/notes2/"
    prefix = posixpath.normpath("/" + folder.lstrip("/")).rstrip("/") + "/"
    return [{"file_id": e.source_id[len(FILE_KEY):], "path": e.path, "named_by_user": e.named_by_user}
            for e in catalog.under_path(tenant, "file", prefix) if e.source_id.startswith(FILE_KEY)]


def keep_stored_ids(files: list[tuple[PurePath, str]], paths: Sequence[str | os.PathLike], list_files: ListFiles,
                    report: IngestReport) -> list[tuple[PurePath, str]]:
    """``files`` (path, the ID its job names it by), named as the store already names their folder's files,
    so that an ID does not depend on the folder a job starts from. ``ingest notes/ -r`` stored
    ``notes/sub/x.md``; then ``ingest notes/sub/x.md`` or ``ingest notes/sub/ -r`` refresh that source
    instead of storing a second ``x.md`` or ``sub/x.md``, and a new ``notes/sub/y.md`` is ``notes/sub/y.md``.

    A file stored already keeps its ID (matched by the absolute path recorded for it; where several IDs
    record one path, stored twice before this rule, the longest: the widest job's). A file not stored yet is
    named from the base its folder's stored files were named from (the folder given, or the one holding a
    file given alone), when that base holds the folder and most of them agree on it; else as the job named
    it. ``--base`` names IDs afresh and skips this. A listing that fails is a warning; its files keep the
    IDs the job named."""
    folders: list[str] = []
    for raw in paths:
        prefix = folder_prefix(raw if os.path.isdir(raw) else os.path.dirname(os.path.abspath(raw)))
        if os.path.exists(raw) and prefix not in folders:
            folders.append(prefix)
    stored: dict[str, str] = {}
    bases: dict[str, str] = {}  # folder prefix -> the base its stored files were named from
    for prefix in folders:
        try:
            recorded = list_files(prefix)
        except AgentMemoryError as exc:  # a store or server gone quiet is met again, and reported, by the job
            report.warnings.append(f"{prefix.rstrip(os.sep) or os.sep}: the IDs its files are stored under could "
                                   f"not be read ({exc}); its files are named by their path from the folder given")
            continue
        for file_id, path, _ in recorded:
            if len(file_id) > len(stored.get(path, "")):
                stored[path] = file_id
        if (found := stored_base(prefix, recorded)) is not None:
            bases[prefix] = found
    named: list[tuple[PurePath, str]] = []
    for path, source_id in files:
        where = os.path.abspath(path)
        if where in stored:
            named.append((path, stored[where]))
            continue
        base = next((bases[p] for p in folders if p in bases and where.startswith(p)), None)
        named.append((path, where[len(base):].replace(os.sep, "/") if base else source_id))
    return named


def stored_base(prefix: str, recorded: Sequence[StoredFile]) -> str | None:
    """The base (ending in a separator) most of ``recorded``, the files stored under the folder ``prefix``,
    were named from, when it holds the folder (as a job's base does) and more than half agree."""
    votes: dict[str, int] = {}
    for file_id, path, _ in recorded:
        base = path[:-len(file_id)] if path.endswith(os.sep + file_id) else ""
        if base and prefix.startswith(base):
            votes[base] = votes.get(base, 0) + 1
    if not votes:
        return None
    best = max(votes, key=lambda b: (votes[b], -len(b)))
    return best if votes[best] * 2 > sum(votes.values()) else None


def stored_bases(paths: Sequence[str | os.PathLike], list_files: ListFiles) -> dict[str, str]:
    """For each folder among ``paths`` (its ``folder_prefix``), the base its stored files were named from
    (``stored_base``), which the job's IDs keep (``keep_stored_ids``): a job without ``--base`` applies the
    ignore rules of the folders from that base down (ingest/ignore.py). A listing that fails is left out here:
    the job meets it again, and reports it, when it forgets gone files and names its files."""
    bases: dict[str, str] = {}
    for prefix in mirrored_folders(paths):
        try:
            found = stored_base(prefix, list_files(prefix))
        except AgentMemoryError:
            continue
        if found is not None:
            bases[prefix] = found
    return bases


def remove_gone_through(list_files: ListFiles, forget: ForgetIds, paths: Sequence[str | os.PathLike], *,
                        recursive: bool, glob: str | None, report: IngestReport, ignored: Ignored | None = None) -> None:
    """:func:`remove_gone` through a server: ``list_files(prefix)`` gives the files it recorded under each
    folder, ``forget(file_ids)`` forgets a batch of them in one request (``core/limits.forget_batches``) and
    gives the counts removed. A folder whose listing fails is a warning (nothing under it is forgotten), a batch
    that cannot be forgotten a failure of each of its files; a server that stops answering
    (StoreUnavailableError) stops the job, as a store does a local one."""
    gone: dict[str, tuple[str, str]] = {}  # file ID -> (its path, why it goes)
    for prefix in mirrored_folders(paths):
        try:
            recorded = list_files(prefix)
        except StoreUnavailableError:
            raise
        except AgentMemoryError as exc:
            report.warnings.append(f"{prefix}: files gone from disk were not looked for: the server could not "
                                   f"list the files it recorded under that folder: {exc}")
            continue
        for file_id, path, named_by_user in recorded:
            why = None if file_id in gone else why_removed(path, prefix, recursive, glob,
                                                           None if named_by_user else ignored)
            if why is not None:
                gone[file_id] = (path, why)
    for batch in forget_batches(list(gone)):
        _forget_through(forget, batch, gone, report)


def _forget_through(forget: ForgetIds, batch: list[str], gone: dict[str, tuple[str, str]],
                    report: IngestReport) -> None:
    """One batch of :func:`remove_gone_through`. The server refuses a whole batch (409 ``source_busy``, nothing
    removed) when a job it has not finished will store one of its files: the batch is then forgotten by halves,
    down to the files that job stores, each kept and reported as a skip (``queued_writes.kept_reason``)."""
    try:
        removed = forget(batch)
    except StoreUnavailableError:
        raise
    except SourceBusyError as exc:
        if len(batch) > 1:
            _forget_through(forget, batch[:len(batch) // 2], gone, report)
            _forget_through(forget, batch[len(batch) // 2:], gone, report)
        else:
            path, why = gone[batch[0]]
            _kept(report, path, why, list(exc.jobs))
        return
    except AgentMemoryError as exc:
        for file_id in batch:
            path, why = gone[file_id]
            report.files_failed.append((path, f"{why}, but forgetting {file_id!r} failed: {exc}"))
            report.outcome(path, "failed")
        return
    report.sources_removed += int(removed.get("sources", 0))
    report.items_deleted += int(removed.get("items", 0))
    for file_id in batch:
        _removed(report, file_id, *gone[file_id])


def unrecorded_note(paths: Sequence[str | os.PathLike], url: str) -> list[str]:
    """The warning of a folder job through a server named by ``--server`` rather than found as the owner
    of the data dir: its uploads carry no ``client_path`` (the server may be on another machine), so
    nothing there says which stored files this folder held."""
    folders = mirrored_folders(paths)
    if not folders:
        return []
    return [f"{folders[0]}: files gone from disk were not looked for: the server at {url} was named with "
            "--server, so the uploads record no path on this machine; forget gone files by ID, or run the job "
            "without --server while that server owns the data dir (its files are then mirrored)"]


def _walked(path: str, prefix: str, recursive: bool, glob: str | None) -> bool:
    """``path`` is one the walk (``discovery._walk``) of the folder ``prefix`` names would reach:
    under it once normalized (a client_path is any absolute text), a direct child unless recursive, no
    hidden part (the walk skips them), its name matching ``glob``."""
    if not isinstance(path, str) or os.path.normpath(path) != path or not path.startswith(prefix):
        return False
    parts = PurePath(path[len(prefix):]).parts
    if not parts or (not recursive and len(parts) > 1) or any(p.startswith(".") for p in parts):
        return False
    return glob is None or fnmatch.fnmatch(parts[-1], glob)


def _gone(path: str) -> bool:
    """The disk says no such file: only "not found" counts, never "cannot tell" (no permission, a loop)."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return True
    except OSError:
        return False
    return False
