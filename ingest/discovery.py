"""Which files an ingestion job reads, and the source ID of a file."""

from __future__ import annotations

import errno
import fnmatch
import os
from pathlib import Path
from typing import Iterable, Sequence

from .report import IngestReport


def discover_files(paths: Sequence[str | Path], *, recursive: bool, glob: str | None,
                   report: IngestReport) -> Iterable[Path]:
    """Files under ``paths`` in sorted order. A missing path, a broken or looping symlink and a
    folder reached twice (a link back up the tree) are reported, never silently dropped."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from _walk(path, recursive, glob, report, set())
        elif path.is_file():
            if glob is None or fnmatch.fnmatch(path.name, glob):
                yield path
        elif path.is_symlink():
            report.files_skipped.append((str(path), _link_problem(path)))
            report.outcome(path, "skipped")
        else:
            report.files_skipped.append((str(path), "no such file or directory"))
            report.paths_missing.append(str(path))


def _walk(folder: Path, recursive: bool, glob: str | None, report: IngestReport, seen: set[Path]) -> Iterable[Path]:
    real = folder.resolve()
    if real in seen:
        report.files_skipped.append((str(folder), "symlink loop: this folder was already walked"))
        report.outcome(folder, "skipped")
        return
    seen.add(real)
    try:
        children = sorted(folder.iterdir())
    except OSError as exc:
        report.files_skipped.append((str(folder), f"unreadable folder: {exc}"))
        report.outcome(folder, "skipped")
        return
    for child in children:
        if child.name.startswith("."):
            continue
        if child.is_dir():
            if recursive:
                yield from _walk(child, recursive, glob, report, seen)
        elif glob is not None and not fnmatch.fnmatch(child.name, glob):
            continue
        elif child.is_file():
            yield child
        elif child.is_symlink():
            report.files_skipped.append((str(child), _link_problem(child)))
            report.outcome(child, "skipped")


def _link_problem(path: Path) -> str:
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symlink loop"
        return f"broken symlink: {exc.strerror}"
    return "not a regular file"


def file_source_id(path: Path) -> str:
    """Paths under the working folder are kept relative, so IDs survive moving the checkout."""
    resolved = path.resolve()
    try:
        return str(resolved.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(resolved)
