"""Uploaded bodies held on disk while they are read: under ``<data dir>/staged-uploads/``, never the system's
temp dir.

A multipart upload (``POST /v1/documents``), an import's body (``POST /v1/import``) and a worker's copy of a job's
body (PostgreSQL's queue keeps the bytes in the job's row) are written to a file before they are read. Staged in
/tmp, each one a process left behind stayed there for good: a server killed (``kill -9``, out of memory) while
it read an upload, or a data dir removed while a job was queued, left the uploaded file in the system's temp
dir, on a disk the operator did not size for the data, outside its backups and its removal. Staged here, a
body lives with the data it becomes, each in a folder of its own, removed once read (an inline upload) or
once its job ends; a queued job's file moves into the job spool (``job_spool.py``, ``pending-jobs``) before the
client is answered, and is the spool's from then on (a same-filesystem rename: no second copy).

So nothing under ``staged-uploads`` is what a persisted job needs: the spool holds its own copies, PostgreSQL
the bytes. At each start of the process that owns the data dir (``serve``, ``worker``: core/owner.py) what
is there was left by a process that is gone, and :meth:`StagingArea.sweep` removes it; a folder this process
staged and still reads is never swept (two apps on one data dir in one process, as tests build them).

The folder walker never reads the data dir (ingest/discovery.py); a backup copies the stores alone and leaves
this folder out of its size (ingest/backup.LEFT_OUT).
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import threading
from pathlib import Path

from agent_memory.core.diskspace import check_free

log = logging.getLogger(__name__)
STAGED_UPLOADS = "staged-uploads"  # under the data dir
# While a body streams in with no declared length, the reserve is checked again each time this much more was
# written: a chunked upload must not fill the disk the embedded vector engine maps its files on.
ROOM_CHECK_BYTES = 8 * 1024 * 1024

_held: set[Path] = set()  # staged folders of this process not released yet: a sweep leaves them
_held_lock = threading.Lock()


class StagingArea:
    """Folders under ``folder`` (``<data dir>/staged-uploads``), one per staged body. ``reserve_mb``: the free
    space every write keeps (``settings.min_free_mb``; 0: no check)."""

    def __init__(self, folder: Path, *, reserve_mb: int = 0) -> None:
        self.folder = folder
        self.reserve_mb = reserve_mb

    def stage(self, kind: str, expected_bytes: int = 0) -> Path:
        """A new empty folder for one body (``kind``: "upload", "import", "job", the start of its name), after
        checking that the data dir's filesystem keeps its reserve with ``expected_bytes`` more (DiskFullError,
        an HTTP 503, otherwise). Release it with :meth:`release`."""
        self.check_room(kind, expected_bytes)
        self.folder.mkdir(parents=True, exist_ok=True)
        staged = Path(tempfile.mkdtemp(dir=self.folder, prefix=f"{kind}-"))
        with _held_lock:
            _held.add(staged)
        return staged

    def check_room(self, kind: str, more_bytes: int) -> None:
        """DiskFullError unless the reserve stays free with ``more_bytes`` written (``core/diskspace.py``)."""
        check_free(self.folder.parent, self.reserve_mb, f"staging the {kind}", need_mb=-(-more_bytes // 1048576),
                   needed_for=f"its {more_bytes} bytes")

    def grew(self, kind: str, size: int, added: int) -> None:
        """A body being written reached ``size`` bytes with its last ``added``: past each ``ROOM_CHECK_BYTES``,
        :meth:`check_room` for as much again (a streamed body's length is known only at its end)."""
        if size // ROOM_CHECK_BYTES > (size - added) // ROOM_CHECK_BYTES:
            self.check_room(kind, ROOM_CHECK_BYTES)

    def release(self, staged: Path) -> None:
        """Remove a staged folder and what it holds (what is gone already is no error)."""
        shutil.rmtree(staged, ignore_errors=True)
        with _held_lock:
            _held.discard(staged)

    def sweep(self) -> list[str]:
        """Remove what a process before this one left under the folder (every entry but this process's staged
        folders); returns their names. Called at the start of the process that owns the data dir."""
        if not self.folder.is_dir():
            return []
        with _held_lock:
            held = set(_held)
        removed = []
        for entry in sorted(self.folder.iterdir()):
            if entry in held:
                continue
            try:
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry)
                else:
                    entry.unlink(missing_ok=True)
            except OSError as exc:  # another user's file, say: the start goes on, and says so
                log.warning("could not remove %s, staged by a stopped process: %s", entry, exc)
                continue
            removed.append(entry.name)
        if removed:
            log.warning("removed %d staged upload(s) that a stopped process left in %s (no job refers to them): %s",
                        len(removed), self.folder, ", ".join(removed[:5]) + (" …" if len(removed) > 5 else ""))
        return removed
