"""What the embedded stores' ``snapshot_to`` share: an SQLite file copied through SQLite's online backup, and
plain files copied with their holes.

The callers hold their store's writes still while they copy (each store's own lock, under the caller's write
exclusion: agent_memory/ingest/backup.py). Qdrant Edge creates its memory-mapped files sparse (a new
collection: about 470 MB of file length, 1 MB on disk), so a copy that wrote the holes out as zeros
turned a backup of a few notes into half a gigabyte: runs of zeros are skipped here, and the copy is
as sparse as its source (or sparser).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from agent_memory.core.errors import StoreError

_BLOCK = 64 * 1024
_ZEROS = bytes(_BLOCK)


def sqlite_snapshot(connection: sqlite3.Connection, target: Path, what: str) -> None:
    """A consistent copy of ``connection``'s database at ``target`` (a new file), through SQLite's online
    backup: it reads committed pages, those still in the write-ahead log included, so the copy needs no
    ``-wal`` file beside it. The caller holds the connection's lock."""
    if target.exists():
        raise StoreError(f"{what}: the copy's file {target} exists already")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        copy = sqlite3.connect(str(target))
        try:
            connection.backup(copy)
        finally:
            copy.close()
    except (sqlite3.Error, OSError) as exc:
        target.unlink(missing_ok=True)
        raise StoreError(f"{what}: copying to {target.name} failed: {exc}") from exc


def copy_file(source: Path, target: Path) -> None:
    """``source``'s bytes at ``target`` (a new file), blocks of zeros left as holes; its mode kept."""
    with source.open("rb") as src, target.open("xb") as dst:
        while block := src.read(_BLOCK):
            if block == _ZEROS[:len(block)]:
                dst.seek(len(block), os.SEEK_CUR)
            else:
                dst.write(block)
        dst.truncate()  # a file ending in a hole gets its length
    os.chmod(target, source.stat().st_mode & 0o7777)


def copy_tree(source: Path, target: Path) -> None:
    """Every file and folder under ``source`` at ``target`` (a folder that must not exist), files by
    :func:`copy_file`; links are copied as links."""
    target.mkdir(parents=True)
    for entry in sorted(source.iterdir()):
        into = target / entry.name
        if entry.is_symlink():
            into.symlink_to(os.readlink(entry))
        elif entry.is_dir():
            copy_tree(entry, into)
        else:
            copy_file(entry, into)
