"""Ignore rules: the files and folders a folder's walk leaves out, as git and ripgrep leave them out.

A repository holds ``node_modules/``, ``build/``, ``target/``, logs and generated files that its
``.gitignore`` says are not the project; stored, they would crowd retrieval with text no one wrote.
So the walk (``discovery._walk``) honours, in each folder it enters:

- ``.gitignore``, then ``.ignore`` (ripgrep's and fd's file for rules meant for tools, not git): its
  lines come after, so in one folder a ``.ignore`` rule overrides a ``.gitignore`` one;
- at a repository root (a folder holding ``.git``), ``.git/info/exclude`` first, below both.

Git's wildmatch semantics come from ``pathspec`` (``GitIgnoreSpec``), not from fnmatch: ``build/``
matches folders only, ``/top.txt`` only beside its file, ``**`` any depth, ``!keep.md`` re-includes.
The rules of a folder are matched against paths relative to it, and the nearest folder whose rules
decide (match, negated or not) wins, as git does. An ignored folder is not entered: as in git, a
``!`` rule cannot re-include a file below an ignored folder.

Which folders' rules apply to a folder given: its own and those below it, always (a copy of a
project without its ``.git`` still says what is not the project); and those of its parents down from
where the project starts, so that a file gets the same verdict whichever folder of the project a job
names (else ``ingest proj/notes -r`` would store again what ``ingest proj -r`` left out and forgot):

- inside a repository, the enclosing repository root (a ``.gitignore`` at the root of a repository
  applies to every folder in it: ``ingest repo/src -r`` leaves out what ``git status`` leaves out);
- outside one, the folder the job's source IDs are named from (its ID base), which is what the memory
  treats as the project: ``--base``, else the base the folder's stored files were named from (the job
  keeps their IDs: ``missing.keep_stored_ids``), else the folder holding the folder given
  (``discovery.default_base``). ``ingest proj -r`` names ``proj/...`` from proj's parent, so the
  parent's rules apply too; ``ingest proj/notes -r`` afterwards keeps those IDs, hence that base,
  hence the same rules; run first, it names ``notes/...`` from ``proj``, whose rules apply, and a
  later ``ingest proj -r`` keeps that base.

Never the rules of a folder above a repository root or above the ID base, nor those of the home folder
outside a repository (its ``.gitignore`` is often git's global excludes file, meant for every
repository, not a project of its own; inside a repository at home it is that repository's). A folder
holding ``.git`` inside the walk is a repository of its own: the rules above it stop there.

A path named on the command line is read as named: a file even if ignored (``git add -f``); a folder
even if its parents' rules ignore it (then those parents' rules do not apply inside it, else they
would leave out everything in it; a warning says so). ``--no-ignore`` (``ignore_rules=False``) reads
everything, as before.

Below every folder's rules, the walk leaves out ``GENERATED_FILES``: lockfiles, minified bundles and source
maps, which a repository tracks but no one writes or reads (a 2 MB ``package-lock.json`` is thousands of
chunks of hashes that crowd every answer), as ripgrep-style tools leave such noise out. They are counted
as ignored files (the report says how many are generated), forgotten like other files now ignored
(``missing.now_ignored``), read when named alone or with ``--no-ignore``, and read by a walk whose rules
re-include them (``!yarn.lock`` in ``.gitignore``: any matching rule of a folder decides before them).
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path

from pathspec import GitIgnoreSpec

from agent_memory.ingest.report import IngestReport

# In a folder, in this order: later lines win (pathspec, as git: the last matching pattern decides).
IGNORE_FILES = (".gitignore", ".ignore")
REPO_EXCLUDE = os.path.join(".git", "info", "exclude")
# Generated files, never memory: left out of folder walks below every folder's own rules (file names,
# case-sensitive as git matches them; folders are never matched).
GENERATED_FILES = (
    "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "bun.lockb", "bun.lock",
    "Cargo.lock", "poetry.lock", "pdm.lock", "Pipfile.lock", "uv.lock", "composer.lock", "Gemfile.lock",
    "Podfile.lock", "pubspec.lock", "go.sum", "flake.lock",
    "*.min.js", "*.min.css", "*.map",  # minified bundles and source maps
)
BY_RULES = "ignore rules"  # ``Rules.why``: a folder's rules left it out (else: the generated pattern matched)


def generated(name: str) -> str | None:
    """The ``GENERATED_FILES`` pattern a file name matches, or None."""
    return next((pattern for pattern in GENERATED_FILES if fnmatch.fnmatchcase(name, pattern)), None)


class Rules:
    """The rules in force in one folder: ``(absolute folder, its rules)``, outermost first."""

    def __init__(self, chain: tuple[tuple[str, GitIgnoreSpec], ...] = ()) -> None:
        self.chain = chain

    def enter(self, folder: str | os.PathLike, report: IngestReport) -> Rules:
        """The rules in force in ``folder``, a child of this one: these, then its own files' rules. A folder
        holding ``.git`` starts anew (a nested repository's files are its own rules' to decide)."""
        absolute = os.path.abspath(folder)
        repo = os.path.exists(os.path.join(absolute, ".git"))
        names = ((REPO_EXCLUDE,) if repo else ()) + IGNORE_FILES
        spec = _read_rules([os.path.join(absolute, name) for name in names], report)
        chain = () if repo else self.chain
        return Rules(chain + ((absolute, spec),) if spec is not None else chain)

    def ignored(self, path: str | os.PathLike, *, folder: bool) -> bool:
        """Whether ``path`` (in the folder these rules are for, or below it) is left out (``why``)."""
        return self.why(path, folder=folder) is not None

    def why(self, path: str | os.PathLike, *, folder: bool) -> str | None:
        """Why ``path`` is left out, None if it is not: ``BY_RULES`` when the nearest rules that match it
        leave it out (a folder is matched with its trailing '/', as ``build/`` asks); else, when no rule
        matches it, the ``GENERATED_FILES`` pattern its name matches (files only)."""
        absolute = os.path.abspath(path)
        for base, spec in reversed(self.chain):
            relative = absolute[len(base.rstrip(os.sep)) + 1:].replace(os.sep, "/")
            decided = spec.check_file(relative + "/" if folder else relative).include
            if decided is not None:
                return BY_RULES if decided else None
        return None if folder else generated(os.path.basename(absolute))


def rules_for(folder: str | os.PathLike, report: IngestReport, base: str | os.PathLike | None = None) -> Rules:
    """The rules in force in a folder given: its parents' from the enclosing repository root, else from
    ``base`` (the folder its files' IDs are named from; default the folder holding it), then its own. A
    folder those parents' rules ignore (or one between them and it) is walked as named, under its own rules
    only, with a warning."""
    absolute = Path(os.path.abspath(folder))
    top = Path(os.path.abspath(base)) if base is not None else absolute.parent
    above = [] if (absolute / ".git").exists() else _up_to_repo(absolute) or _up_from_base(absolute, top)
    rules = Rules()
    for step, here in enumerate([*above, absolute]):
        if step and rules.ignored(here, folder=True):
            report.named_despite_rules.add(str(absolute))
            report.warnings.append(f"{folder}: walked as named, although the ignore rules of {str(here.parent)!r} "
                                   f"leave out {str(here)!r}; the rules of the folders above it do not apply in it")
            return Rules().enter(absolute, report)
        rules = rules.enter(here, report)
    return rules


def _up_to_repo(folder: Path) -> list[Path]:
    """The parents of ``folder`` from the enclosing repository root down, or none without a repository."""
    parents: list[Path] = []
    for parent in folder.parents:
        parents.append(parent)
        if (parent / ".git").exists():
            return parents[::-1]
    return []


def _up_from_base(folder: Path, base: Path) -> list[Path]:
    """The parents of ``folder`` from ``base`` down, less the home folder; none when ``base`` does not hold it."""
    home = _home()
    return [parent for parent in reversed(folder.parents) if parent.is_relative_to(base) and parent != home]


def _home() -> Path | None:
    try:
        return Path(os.path.abspath(Path.home()))
    except (RuntimeError, KeyError):  # no HOME and no passwd entry: no home folder to leave out
        return None


def _read_rules(files: list[str], report: IngestReport) -> GitIgnoreSpec | None:
    """The rules of one folder's ignore files, in order; None if it has none. A file that cannot be read, or
    a line that is no pattern (``!`` alone, a trailing backslash), is a warning naming it, and left out."""
    lines: list[str] = []
    for name in files:
        try:
            # surrogateescape: a pattern naming a file whose name is no UTF-8 matches it as os.listdir names it.
            with open(name, encoding="utf-8", errors="surrogateescape") as handle:
                lines += _valid(name, handle.read().splitlines(), report)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            report.warnings.append(f"{name}: unreadable ignore file, its rules are not applied: {exc}")
    if not lines:
        return None
    return GitIgnoreSpec.from_lines(lines)


def _valid(name: str, lines: list[str], report: IngestReport) -> list[str]:
    """``lines`` without those pathspec refuses, each refusal a warning naming the line."""
    try:
        GitIgnoreSpec.from_lines(lines)
        return lines
    except Exception:  # noqa: BLE001 - pathspec raises its own errors and re.error: found line by line below
        pass
    kept: list[str] = []
    for line in lines:
        try:
            GitIgnoreSpec.from_lines([line])
        except Exception as exc:  # noqa: BLE001 - as above: one bad line must not drop the folder's rules
            report.warnings.append(f"{name}: not a pattern, left out: {line!r} ({exc})")
            continue
        kept.append(line)
    return kept
