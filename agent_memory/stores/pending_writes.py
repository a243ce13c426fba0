"""Which queued or running jobs will store a source: a forget of that source asks first (``JobQueue.writing``).

A forget answered while an upload of the same source waits in the queue removed nothing (or what an older copy
held), then the job ran and stored the source: the user's delete was undone without a word. The queues record,
for each unfinished job that stores a named source (a posted text, an uploaded file), its source ID and, for a
file the CLI sent, the file's path on the client, which ``forget`` also takes as the source's name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Collection

# The job kinds that store the source their ``source_id`` names (JobSpec.kind). An import stores the sources its
# export lists, known only once it is read: not looked up here.
WRITER_KINDS = ("text", "upload")


@dataclass(frozen=True)
class PendingWrite:
    """A queued or running job that will store ``source_id``."""

    job_id: str
    status: str  # "queued" or "running"
    source_id: str


def writes(kind: str, source_id: str, origin: str | None, names: Collection[str], prefix: str | None) -> bool:
    """Whether a job of ``kind`` storing ``source_id`` (its file at ``origin`` on the client) stores a source
    named by one of ``names`` (as a source ID or as that path), or, with ``prefix``, one whose ID starts with it."""
    if kind not in WRITER_KINDS:
        return False
    if source_id in names or (origin is not None and origin in names):
        return True
    return prefix is not None and source_id.startswith(prefix)
