"""The ingestion job's report: counts, skips with reasons, timing."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field

WARNINGS_SHOWN = 20  # by render: a folder of broken files can warn thousands of times


@dataclass
class IngestReport:
    files_seen: int = 0
    files_ingested: int = 0
    files_unchanged: int = 0
    files_skipped: list[tuple[str, str]] = field(default_factory=list)
    files_failed: list[tuple[str, str]] = field(default_factory=list)
    # Named on the command line but not there: the job goes on, the exit status says so.
    paths_missing: list[str] = field(default_factory=list)
    # Every file seen with its outcome: ingested, unchanged, skipped, failed, partial.
    files: list[tuple[str, str]] = field(default_factory=list)
    sources_written: int = 0
    sources_unchanged: int = 0
    sources_removed: int = 0
    # File IDs a folder job forgot because their files are gone from disk (ingest/missing.py).
    gone_from_disk: list[str] = field(default_factory=list)
    # File IDs a folder job forgot because its walk now leaves them out by ignore rules (ingest/ignore.py).
    now_ignored: list[str] = field(default_factory=list)
    # Folders the walk did not enter by ignore rules (listed; the files under them are not counted: not walked),
    # and the absolute paths of the files it left out (counted in the JSON, never listed: a repo has thousands).
    ignored_folders: list[str] = field(default_factory=list)
    ignored_paths: set[str] = field(default_factory=set, repr=False)
    # Of those, the generated files the built-in rules left out (ignore.GENERATED_FILES): path -> pattern.
    generated_paths: dict[str, str] = field(default_factory=dict, repr=False)
    # Folders given that the rules above them leave out, walked as named all the same (absolute; ignore.py):
    # what the job reads under them the user named, as a file given alone (missing.user_named).
    named_despite_rules: set[str] = field(default_factory=set, repr=False)
    chunks: int = 0
    summaries: int = 0
    turns: int = 0
    triples: int = 0
    items_deleted: int = 0
    embeddings_computed: int = 0
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    store_error: str | None = None

    @property
    def items_written(self) -> int:
        return self.chunks + self.summaries + self.turns

    @property
    def chunks_per_s(self) -> float:
        return self.items_written / self.seconds if self.seconds > 0 else 0.0

    @property
    def files_ignored(self) -> int:
        return len(self.ignored_paths)

    def outcome(self, path, outcome: str) -> None:
        self.files.append((str(path), outcome))

    @property
    def ignored_generated(self) -> dict[str, int]:
        """How many files each built-in pattern left out (``GENERATED_FILES``), of those still ignored (a file
        also named alone is read)."""
        counts: dict[str, int] = {}
        for path, pattern in self.generated_paths.items():
            if path in self.ignored_paths:
                counts[pattern] = counts.get(pattern, 0) + 1
        return counts

    def ignore(self, path, *, folder: bool, generated: str | None = None) -> None:
        """A file or folder the walk leaves out by ignore rules (a file by the built-in ``generated`` pattern
        when given): no outcome line, no skip."""
        if not folder:
            self.ignored_paths.add(os.path.abspath(path))
            if generated is not None:
                self.generated_paths[os.path.abspath(path)] = generated
        elif str(path) not in self.ignored_folders:
            self.ignored_folders.append(str(path))

    @property
    def ok(self) -> bool:
        """Success unless a store failed, a named path is missing, a file failed, or nothing at
        all could be ingested. Skips (binary, empty, unsupported) are outcomes, not failures."""
        if self.store_error or self.files_failed or self.paths_missing:
            return False
        return self.files_seen == 0 or (self.files_ingested + self.files_unchanged) > 0

    def to_dict(self) -> dict:
        data = asdict(self)
        del data["ignored_paths"], data["named_despite_rules"], data["generated_paths"]
        data["files_ignored"] = self.files_ignored
        data["ignored_generated"] = self.ignored_generated
        data["items_written"] = self.items_written
        data["chunks_per_s"] = round(self.chunks_per_s, 2)
        data["ok"] = self.ok
        return data

    def render(self, verbose: bool = False, listed_in: str | None = None) -> str:
        """The report as lines; ``verbose`` also lists the IDs removed because their files are gone or
        now ignored, and the folders the walk left out by ignore rules. The first ``WARNINGS_SHOWN``
        warnings are listed, then how many more, and ``listed_in`` (where the caller lists them all)."""
        lines = [
            "Ingestion report",
            f"  files seen       {self.files_seen}",
            f"  files ingested   {self.files_ingested}",
            f"  files unchanged  {self.files_unchanged}",
            f"  files skipped    {len(self.files_skipped)}",
            f"  files failed     {len(self.files_failed)}",
            f"  files ignored    {self.files_ignored}{self._ignored_note()}",
            f"  sources written  {self.sources_written} (unchanged {self.sources_unchanged},"
            f" removed {self.sources_removed})",
            f"  removed, gone from disk: {len(self.gone_from_disk)}",
            f"  removed, now ignored: {len(self.now_ignored)}",
            f"  chunks           {self.chunks}",
            f"  summaries        {self.summaries}",
            f"  turns            {self.turns}",
            f"  triples          {self.triples}",
            f"  embeddings       {self.embeddings_computed} computed",
            f"  seconds          {self.seconds:.2f}",
            f"  items/s          {self.chunks_per_s:.1f}",
        ]
        for path, reason in self.files_skipped:
            lines.append(f"  skipped: {_shown(path)}: {reason}")
        for path, reason in self.files_failed:
            lines.append(f"  FAILED: {_shown(path)}: {reason}")
        if verbose:
            lines += [f"  gone from disk: {_shown(file_id)}" for file_id in self.gone_from_disk]
            lines += [f"  now ignored: {_shown(file_id)}" for file_id in self.now_ignored]
            lines += [f"  ignored folder: {_shown(folder)}" for folder in self.ignored_folders]
            if self.ignored_generated:
                lines.append("  ignored as generated (built-in rules; read by --no-ignore, by naming the file, or by "
                             "a '!name' rule in .gitignore): " + ", ".join(
                                 f"{pattern} {count}" for pattern, count in self.ignored_generated.items()))
        for path in self.paths_missing:
            lines.append(f"  MISSING: {_shown(path)}")
        for warning in self.warnings[:WARNINGS_SHOWN]:
            lines.append(f"  warning: {warning}")
        if len(self.warnings) > WARNINGS_SHOWN:
            lines.append(f"  … and {len(self.warnings) - WARNINGS_SHOWN} more warnings"
                         + (f" ({listed_in} lists them all)" if listed_in else ""))
        if self.store_error:
            lines.append(f"  STORE ERROR: {self.store_error}")
        return "\n".join(lines)


    def _ignored_note(self) -> str:
        """After the count of files ignored: how many are generated files, how many folders were not walked."""
        generated = sum(self.ignored_generated.values())
        parts = [f"{generated} generated: lockfiles, minified code, source maps"] if generated else []
        parts += [f"and {len(self.ignored_folders)} folders not walked"] if self.ignored_folders else []
        return f" ({'; '.join(parts)})" if parts else ""


def _shown(path: str) -> str:
    """A path as one report line: one with a newline, tab or other control character is quoted."""
    return path if path.isprintable() else repr(path)
