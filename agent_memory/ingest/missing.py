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
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import PurePath
from typing import Callable, Sequence

from agent_memory.ingest.ownership import FILE_KEY
from agent_memory.ingest.report import IngestReport
from agent_memory.stores.catalog import SourceEntry

# ``IngestionPipeline.forget``: a file and every source it held, out of every store.
Forget = Callable[[str, str, IngestReport], object]


def remove_gone(catalog, forget: Forget, paths: Sequence[str | os.PathLike], *, tenant: str, recursive: bool,
                glob: str | None, report: IngestReport) -> None:
    """Forget (``forget(tenant, file_id, report)``) every file of :func:`gone_files`, each listed in the report."""
    for entry in gone_files(catalog, tenant, paths, recursive=recursive, glob=glob):
        file_id = entry.source_id[len(FILE_KEY):]
        forget(tenant, file_id, report)
        report.gone_from_disk.append(file_id)
        report.outcome(entry.path, "removed: gone from disk")


def gone_files(catalog, tenant: str, paths: Sequence[str | os.PathLike], *, recursive: bool,
               glob: str | None) -> list[SourceEntry]:
    """The manifests of files that a walk of the folders among ``paths`` would have reached, gone from disk."""
    found: dict[str, SourceEntry] = {}
    for raw in paths:
        if not os.path.isdir(raw):
            continue  # a file given alone, or a missing path (the walk reported it): nothing to mirror
        try:
            os.listdir(raw)
        except OSError:
            continue  # unreadable (the walk reported it): its files' absence here proves nothing
        folder = os.path.abspath(raw)
        prefix = folder if folder.endswith(os.sep) else folder + os.sep
        for entry in catalog.under_path(tenant, "file", prefix):
            if (entry.source_id.startswith(FILE_KEY) and _walked(entry.path, prefix, recursive, glob)
                    and _gone(entry.path)):
                found.setdefault(entry.source_id, entry)
    return list(found.values())


def server_note(paths: Sequence[str | os.PathLike], keep_missing: bool) -> list[str]:
    """The warning of a folder job run through a server (``RemoteMemory`` uploads files one by one,
    so nothing there knows which stored files a folder no longer holds)."""
    folders = [str(p) for p in paths if os.path.isdir(p)]
    if keep_missing or not folders:
        return []
    return [f"{folders[0]}: files gone from disk were not looked for through the server; stop it and run "
            "the job again to remove them, or forget them by ID"]


def _walked(path: str, prefix: str, recursive: bool, glob: str | None) -> bool:
    """``path`` is one the walk (``discovery._walk``) of the folder ``prefix`` names would reach:
    under it once normalized (a client_path is any absolute text), a direct child unless recursive, no
    hidden part (the walk skips them), its name matching ``glob``."""
    if os.path.normpath(path) != path or not path.startswith(prefix):
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
