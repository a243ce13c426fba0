"""An export's envelope, read by every surface before the memory layer takes the file: its header line
(:func:`header_of`, :func:`read_header`), checked first by the CLI, ``POST /v1/import`` and the import itself, so
a file that is no export is refused as it is, nothing sent nor stored; and what an import did
(:class:`ImportReport`), which a server's answer is read back into. What the lines after the header hold, and
how they are written and read back: ``memory/export_lines.py`` and ``memory/import_lines.py``. Its own module
so that `agent-memory import` through a server reads the header and the report without loading the memory
layer, which only the server's import needs."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from agent_memory.core.errors import IngestError

EXPORT_FORMAT = "agent-memory-export"
EXPORT_VERSION = 1
# The header is one short line: a first line longer than this is no export's (and is not read whole).
MAX_HEADER_BYTES = 64 * 1024


def header_of(handle: BinaryIO) -> tuple[bytes, dict[str, Any]] | None:
    """What was read of ``handle`` up to its header line (blank lines before it included), and the header
    (:func:`read_header`'s IngestError for a file that is no export); None when it holds only blank lines. A line
    is read at most ``MAX_HEADER_BYTES`` at a time, so a file that is no export is never read whole."""
    read = b""
    for line in iter(lambda: handle.readline(MAX_HEADER_BYTES), b""):
        read += line
        if line.strip():
            return read, read_header(line)
    return None


def read_header(line: str | bytes) -> dict[str, Any]:
    """The export's header, or IngestError naming what the file is instead."""
    if isinstance(line, bytes):
        line = line.decode("utf-8", "replace")
    try:
        header = json.loads(line)
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("type") != "header" or header.get("format") != EXPORT_FORMAT:
        raise IngestError(f"not an agent-memory export: its first line is no header of format {EXPORT_FORMAT!r} "
                          f"(got {line[:120]!r}); `agent-memory export` writes one")
    if header.get("version") != EXPORT_VERSION:
        raise IngestError(f"export format version {header.get('version')!r} is not the version this agent-memory "
                          f"reads ({EXPORT_VERSION}): export it again with this version, or import it with the "
                          "version that wrote it")
    if not isinstance(header.get("tenant"), str):
        raise IngestError(f"the export's header names no tenant (got {header.get('tenant')!r})")
    return header


@dataclass
class ImportReport:
    """What an import did; ``skipped``: (line number, why) for each line not imported."""

    tenant: str = ""
    sources_written: int = 0
    sources_unchanged: int = 0
    files_recorded: int = 0  # ingested files' manifests recorded: the next ingestion skips them unchanged
    sessions_imported: int = 0
    sessions_unchanged: int = 0
    sessions_refused: int = 0
    messages_appended: int = 0
    turns_forgotten: int = 0
    skipped: list[tuple[int, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    complete: bool = False  # the file's end line was read: it was not cut short

    @property
    def ok(self) -> bool:
        return not self.skipped and self.complete

    def to_dict(self) -> dict[str, Any]:
        return {"tenant": self.tenant, "sources_written": self.sources_written,
                "sources_unchanged": self.sources_unchanged, "files_recorded": self.files_recorded,
                "sessions_imported": self.sessions_imported,
                "sessions_unchanged": self.sessions_unchanged, "sessions_refused": self.sessions_refused,
                "messages_appended": self.messages_appended, "turns_forgotten": self.turns_forgotten,
                "complete": self.complete, "skipped": [{"line": n, "reason": why} for n, why in self.skipped],
                "warnings": list(self.warnings)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ImportReport:
        """The report :meth:`to_dict` wrote (a server's answer); ValueError/KeyError/TypeError when it is not one."""
        counts = {name: int(data[name]) for name in _COUNTS if name in data}
        skipped = [(int(s["line"]), str(s["reason"])) for s in data.get("skipped") or []]
        return cls(tenant=str(data["tenant"]), skipped=skipped, warnings=[str(w) for w in data.get("warnings") or []],
                   complete=data["complete"] is True, **counts)


_COUNTS = ("sources_written", "sources_unchanged", "files_recorded", "sessions_imported", "sessions_unchanged",
           "sessions_refused", "messages_appended", "turns_forgotten")
