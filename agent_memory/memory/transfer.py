"""``Memory``'s calls that move a tenant's memory out and back in: ``export`` (a user's data request, a move to
another deployment) and ``import_export``. The lines are ``memory/export_lines.py``'s; reading them back is
``memory/import_lines.py``'s."""

from __future__ import annotations

import json
from typing import Any, Iterable, Iterator

from agent_memory.core.export_format import ImportReport
from agent_memory.memory.export_lines import export_tenant
from agent_memory.memory.import_lines import import_lines


class TransferMethods:
    """The export and import calls of ``Memory`` (its base class). They use what ``Memory`` builds and holds:
    ``services``, ``working_memory``, ``ingestion``, ``write_lock``, ``settle`` and ``_tenant``."""

    def export(self, *, tenant: str | None = None) -> Iterator[dict[str, Any]]:
        """Every line of the tenant's export as a dict, in order, to be written as JSON Lines: a header, each
        stored source with its text put back together, each session's settings and raw messages as appended,
        an end line with the counts (``memory/export_lines.py`` says what each holds). Nothing of another
        tenant. Waits for the start's catch-up first, so the archive is whole."""
        tenant = self._tenant(tenant)
        self.settle(tenant)
        return export_tenant(self.services, self.working_memory, tenant)

    def import_export(self, lines: Iterable[str] | Iterable[bytes] | Iterable[dict[str, Any]], *,
                      tenant: str | None = None) -> ImportReport:
        """Import an export (its JSON lines, as text or UTF-8 bytes, or the dicts ``export`` yields: another
        ``Memory``'s ``export()`` imports as it is) for ``tenant``, else for the tenant it names: sources
        through ingestion and messages through the session append, so this deployment's models and settings
        make the vectors, the graph and the archive again. Importing twice changes nothing; a bad line is a
        skip with its number (``report.skipped``) and the rest goes on; a file of another format or version
        raises IngestError before anything is stored."""
        return import_lines(self, _as_lines(lines), tenant)


def _as_lines(lines: Iterable[Any]) -> Iterator[str | bytes]:
    """Each line as text: a dict (``export`` yields them) as its JSON; anything else but text or bytes is a
    TypeError naming its line, where it had been an AttributeError of the import's internals."""
    if isinstance(lines, (str, bytes, dict)):
        raise TypeError(f"lines is an iterable of an export's lines, got one {type(lines).__name__}: give the file's "
                        "lines (open(path) or text.splitlines()) or export()'s dicts")
    for number, line in enumerate(lines, start=1):
        if isinstance(line, dict):
            yield json.dumps(line, ensure_ascii=False)
        elif isinstance(line, (str, bytes)):
            yield line
        else:
            raise TypeError(f"line {number} of the export is of type {type(line).__name__}; a line is text, UTF-8 bytes "
                            "or a dict as export() yields it")
