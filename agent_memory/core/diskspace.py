"""Free space before writes: a write is refused while the data dir's filesystem is nearly full.

The embedded vector engine (Qdrant Edge) grows memory-mapped files; when the filesystem cannot
back a page it touches, the kernel sends SIGBUS and the whole process dies, with nothing logged
(seen on ext4 and tmpfs). No ``try`` can catch that, so writes stop earlier: below
``settings.min_free_mb`` free, each write is refused with a StoreError (HTTP 503 ``store_error``)
and a log line, while reads go on. Freeing space (or raising the filesystem) lets writes resume.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from agent_memory.core.errors import StoreError

log = logging.getLogger(__name__)


class DiskFullError(StoreError):
    """The data dir's filesystem has less free space than the configured reserve."""


def free_bytes(path: Path) -> int | None:
    """Free bytes (for an unprivileged writer) on the filesystem holding ``path``; None if unknown."""
    for candidate in (path, *path.parents):
        try:
            stat = os.statvfs(candidate)
        except OSError:
            continue
        return stat.f_bavail * stat.f_frsize
    return None


def check_free(data_dir: Path, reserve_mb: int, what: str, *, need_mb: int = 0, needed_for: str = "") -> None:
    """DiskFullError when fewer than ``reserve_mb`` MB are free under ``data_dir`` (0: no check), or fewer than
    ``reserve_mb + need_mb`` for a write known to take ``need_mb`` MB at once (``needed_for`` says what takes it)."""
    if reserve_mb <= 0:
        return
    free = free_bytes(Path(data_dir))
    wanted = reserve_mb + need_mb
    if free is None or free >= wanted * 1024 * 1024:
        return
    if need_mb:
        message = (f"{what} refused: it needs about {need_mb} MB ({needed_for}) beyond the reserve of {reserve_mb} "
                   f"MB (AGENT_MEMORY_MIN_FREE_MB), {wanted} MB in all, and the data dir's filesystem has "
                   f"{free / 1048576:.1f} MB free: free space there, or give a data dir on a larger filesystem")
    else:
        message = (f"{what} refused: the data dir's filesystem has {free / 1048576:.1f} MB free, below the reserve "
                   f"of {reserve_mb} MB (AGENT_MEMORY_MIN_FREE_MB); reads go on")
    log.error(message)
    raise DiskFullError(message)
