"""Which queued or running jobs will store a source: a forget of that source asks first (``JobQueue.writing``).

A forget answered while an upload of the same source waits in the queue removed nothing (or what an older copy
held), then the job ran and stored the source: the user's delete was undone without a word. The queues record,
for each unfinished job that stores a named source (a posted text, an uploaded file), its source ID and, for a
file the CLI sent, the file's path on the client, which ``forget`` also takes as the source's name; for an import,
the names its export holds (``IMPORT_SOURCES``), read when it is queued.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Collection, Mapping, Protocol

# The job kinds that store the source their ``source_id`` names (JobSpec.kind).
WRITER_KINDS = ("text", "upload")
# The job kind that stores the sources its export lists: their names are its params' ``IMPORT_SOURCES``, read
# from the export when the job is queued (memory/export_lines.export_names: its sources' IDs, its files' IDs and
# paths), so that a delete of one of them while the import waits is refused as an upload's is.
IMPORT_KIND = "import"
IMPORT_SOURCES = "sources"


@dataclass(frozen=True)
class PendingWrite:
    """A queued or running job that will store ``source_id``."""

    job_id: str
    status: str  # "queued" or "running"
    source_id: str


class PendingWriters(Protocol):
    """A job queue as a forget asks it (``ingest/queued_writes.py``): every ``JobQueue`` is one."""

    def writing(self, tenant: str, names: Collection[str], prefix: str | None = None) -> list[PendingWrite]:
        """``tenant``'s queued or running jobs that will store a source named by one of ``names`` or, with
        ``prefix``, one whose ID starts with it (:func:`written`)."""


def written(kind: str, source_id: str, params: Mapping[str, Any], names: Collection[str],
            prefix: str | None) -> str | None:
    """The source a job of ``kind`` storing ``source_id`` (``params``: its file's ``origin`` on the client, an
    import's ``IMPORT_SOURCES``) stores that is named by one of ``names`` (as a source ID or as a file's path), or,
    with ``prefix``, whose ID starts with it; None: it stores none of them."""
    if kind == IMPORT_KIND:
        sources = params.get(IMPORT_SOURCES) or []
        return next((name for name in sources if name in names or (prefix is not None and name.startswith(prefix))),
                    None)
    if kind not in WRITER_KINDS:
        return None
    origin = params.get("origin")
    if source_id in names or (origin is not None and origin in names):
        return source_id
    return source_id if prefix is not None and source_id.startswith(prefix) else None
