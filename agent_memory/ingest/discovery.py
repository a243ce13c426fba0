"""Which files an ingestion job reads, and the source ID of a file."""

from __future__ import annotations

import errno
import fnmatch
import os
import stat
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from agent_memory.core.errors import IngestError
from agent_memory.core.storable import check_text, control_character
from agent_memory.ingest.ignore import BY_RULES, Rules, rules_for
from agent_memory.ingest.report import IngestReport


def named_files(paths: Sequence[str | Path], *, recursive: bool, glob: str | None, report: IngestReport,
                base: str | Path | None = None, data_dir: str | Path | None = None,
                ignore_rules: bool = True, stored_bases: Mapping[str, str] | None = None) -> list[tuple[Path, str]]:
    """Each file a job over ``paths`` reads, with its source ID: its path relative to ``base``
    (default: the folder holding the path given, ``default_base``). A file reached twice (a folder
    given twice, or a folder and a file in it) is read once, under the outermost path given that holds it,
    so its ID does not depend on the order the paths are given in (``ingest proj/sub proj`` names
    ``proj/sub/b.md`` as ``ingest proj proj/sub`` does); paths at one depth keep their order.
    Nothing under ``data_dir`` is read (see ``discover_files``), nor what ignore rules leave out
    unless ``ignore_rules`` is False (ingest/ignore.py); a file also named alone is read, not ignored.
    ``stored_bases`` (``missing.stored_bases``: a folder's ``folder_prefix``, the base its stored files were named
    from, which the job's IDs keep): without ``base``, where a folder's ignore rules reach up to."""
    found: dict[Path, tuple[Path, str]] = {}
    for raw in sorted(paths, key=lambda given: len(Path(os.path.abspath(given)).parts)):
        named_from = base if base is not None else default_base(raw)
        rules_from = base if base is not None else (stored_bases or {}).get(folder_prefix(raw)) or named_from
        for path in discover_files([raw], recursive=recursive, glob=glob, report=report, data_dir=data_dir,
                                   ignore_rules=ignore_rules, base=rules_from):
            found.setdefault(path.resolve(), (path, file_source_id(path, named_from)))
    report.ignored_paths -= {os.path.abspath(path) for path, _ in found.values()}
    return list(found.values())


def discover_files(paths: Sequence[str | Path], *, recursive: bool, glob: str | None,
                   report: IngestReport, data_dir: str | Path | None = None,
                   ignore_rules: bool = True, base: str | Path | None = None) -> Iterable[Path]:
    """Files under ``paths`` in sorted order. A missing path, a broken or looping symlink and a
    folder reached twice (a link back up the tree) are reported, never silently dropped. A folder's
    walk leaves out what its ignore rules (``.gitignore``, ``.ignore``) leave out, and the generated
    files no rule re-includes (lockfiles, minified code: ``ignore.GENERATED_FILES``), counted in the
    report, unless ``ignore_rules`` is False; a file named in ``paths`` is read even if ignored.
    Outside a repository, the rules of a folder's parents apply from ``base`` down, the folder its
    files' IDs are named from (default: each path's ``default_base``; ingest/ignore.py).

    The memory's own ``data_dir`` is never read: its stores, catalog and spooled jobs are not memory
    (a spooled job's JSON body holds a ``text`` field that would be ingested as a document). A walk
    that meets it passes it by, saying so once; a path named inside it is refused."""
    own = _DataDir(data_dir)
    for raw in paths:
        path = Path(raw)
        if own.holds(path):
            report.files_failed.append((str(path), own.refusal()))
            report.outcome(path, "failed")
        elif path.is_dir():
            rules = rules_for(path, report, base if base is not None else default_base(path)) if ignore_rules else None
            yield from _walk(path, recursive, glob, report, set(), given=True, own=own, rules=rules)
        elif path.is_file():
            if glob is None or fnmatch.fnmatch(path.name, glob):
                yield path
        elif path.is_symlink() or path.exists():  # a bad link, or there but no file (a pipe, a device)
            report.files_skipped.append((str(path), _link_problem(path)))
            report.outcome(path, "skipped")
        else:
            report.files_skipped.append((str(path), "no such file or directory"))
            report.paths_missing.append(str(path))


NOT_WALKED = "not walked: it is the data dir (its stores, catalog and jobs are never ingested)"


class _DataDir:
    """The data dir a walk keeps out of, compared by resolved path (a link or a second spelling of
    it is the same folder)."""

    def __init__(self, data_dir: str | Path | None) -> None:
        self.shown = str(data_dir) if data_dir is not None else ""
        self.real = Path(data_dir).resolve() if data_dir is not None else None

    def holds(self, path: Path) -> bool:
        if self.real is None:
            return False
        try:
            return path.resolve().is_relative_to(self.real)
        except (OSError, RuntimeError):  # a link loop: not the data dir; the walk reports it
            return False

    def refusal(self) -> str:
        return (f"inside the data dir {self.shown!r}: its stores, catalog and jobs are never ingested as "
                "memory; copy the file out of the data dir to ingest it")

    def passed_by(self, folder: Path, report: IngestReport) -> None:
        """One warning per job, however many walks meet the data dir (none per file under it)."""
        if not any(w.endswith(NOT_WALKED) for w in report.warnings):
            report.warnings.append(f"{folder}: {NOT_WALKED}")


def _walk(folder: Path, recursive: bool, glob: str | None, report: IngestReport, seen: set[Path],
          given: bool = False, own: _DataDir | None = None, rules: Rules | None = None) -> Iterable[Path]:
    """``rules``: the ignore rules in force in ``folder`` (its own included), None to read everything."""
    own = own or _DataDir(None)
    real = folder.resolve()
    if real in seen:
        report.files_skipped.append((str(folder), "symlink loop: this folder was already walked"))
        report.outcome(folder, "skipped")
        return
    seen.add(real)
    try:
        children = sorted(folder.iterdir())
    except OSError as exc:
        if given:  # a folder the caller named: an error of the job, and nothing under it is taken for gone
            report.files_failed.append((str(folder), f"unreadable folder: {exc}"))
            report.outcome(folder, "failed")
        else:
            report.files_skipped.append((str(folder), f"unreadable folder: {exc}"))
            report.outcome(folder, "skipped")
        return
    subfolders_left = 0
    for child in children:
        if child.name.startswith("."):
            continue
        if child.is_dir():
            if not recursive:
                subfolders_left += not own.holds(child)
            elif rules is not None and rules.ignored(child, folder=True):
                report.ignore(child, folder=True)  # never entered: node_modules/ costs nothing
            elif own.holds(child):
                own.passed_by(child, report)
            elif child.is_symlink() and real.is_relative_to(child.resolve()):
                # A link to a folder above it (``up -> ..``): walking it would leave the folder given
                # for its parents (a home directory, a disk) before reaching itself again.
                report.files_skipped.append((str(child), f"symlink loop: links to {str(child.resolve())!r}, "
                                             "a folder that holds it"))
                report.outcome(child, "skipped")
            else:
                yield from _walk(child, recursive, glob, report, seen, own=own,
                                 rules=rules.enter(child, report) if rules is not None else None)
        elif glob is not None and not fnmatch.fnmatch(child.name, glob):
            continue
        elif rules is not None and (why := rules.why(child, folder=False)):  # a bad link or pipe too: not ours
            report.ignore(child, folder=False, generated=None if why == BY_RULES else why)
        elif child.is_symlink() and own.holds(child):  # a link into the data dir: refused as if named
            report.files_skipped.append((str(child), own.refusal()))
            report.outcome(child, "skipped")
        elif child.is_file():
            yield child
        else:  # a bad link, a pipe, a socket, a device: never read, never silently dropped
            report.files_skipped.append((str(child), _link_problem(child)))
            report.outcome(child, "skipped")
    if subfolders_left:  # "files seen 0" for a folder of folders said nothing of why
        report.warnings.append(f"{subfolders_left} subfolder(s) of {str(folder)!r} not read: only a folder's own "
                               "files are read without -r (recursive=True), which reads its subfolders too")


def _link_problem(path: Path) -> str:
    """Why a path that is neither a folder nor a regular file is not read."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symlink loop"
        return f"broken symlink: {exc.strerror}"
    kind = ("a named pipe" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "special")
    return f"not a regular file ({kind}): reading it could block or never end"


def default_base(given: str | Path) -> Path:
    """The base a path given to ``ingest`` is named from: the folder holding it. So ``notes/``,
    ``/abs/notes/`` and ``.`` run inside ``notes`` all name ``notes/team.md`` the same way, from
    any working folder; a file given alone is named by its file name."""
    return Path(os.path.abspath(given)).parent


def folder_prefix(folder: str | os.PathLike) -> str:
    """What the recorded paths of a folder's files start with: its absolute path, ending in a separator
    (how ``missing.py`` keys a folder's stored files, and ``stored_bases`` its base)."""
    absolute = os.path.abspath(folder)
    return absolute if absolute.endswith(os.sep) else absolute + os.sep


def file_source_id(path: Path, base: str | Path | None = None) -> str:
    """The source ID of a file: its path relative to ``base`` (default: the folder holding it),
    with '/' separators. Never absolute and never relative to the working folder, so the same
    file gets the same ID from wherever the command runs. Lexical (symlinks are not resolved):
    a file reached through a linked folder is named where it was found."""
    absolute = Path(os.path.abspath(path))
    root = Path(os.path.abspath(base)) if base is not None else absolute.parent
    try:
        relative = absolute.relative_to(root)
    except ValueError:
        raise IngestError(f"{str(path)!r} is not under the base {str(base)!r}: source IDs are paths relative "
                          "to the base; give a --base that holds every path") from None
    if not relative.parts:
        raise IngestError(f"{str(path)!r} is the base itself: a file's ID is its path under the base")
    return relative.as_posix()


def check_source_id(source_id: str) -> str:
    """A source ID a caller chose (``Memory.add``, the API's ``source_id``), refused with a ValueError unless
    it has the form every ID made from a path has: '/'-separated, without a root, '.', '..' or empty parts
    (so a chosen ID never reads as a path outside its folder, nor as a second spelling of another ID), and
    without control characters, as a session ID (core/storable.py: a NUL is refused by PostgreSQL and
    cannot be passed to ``forget`` on a command line; a newline or U+0085 would split a report line)."""
    bad = control_character(source_id)
    if bad is not None:
        raise ValueError(f"source_id {source_id!r} cannot contain control characters ({bad!r})")
    check_text(source_id, "source_id")  # a lone surrogate
    parts = source_id.split("/")
    if not source_id.strip() or any(part in ("", ".", "..") for part in parts):
        cleaned = "/".join(p for p in parts if p not in ("", ".", ".."))
        example = f", e.g. {cleaned!r}" if cleaned.strip() else ""
        raise ValueError(f"source_id {source_id!r} must be a relative '/'-separated path without a root, '.', "
                         f"'..' or empty parts{example}")
    return source_id
