"""A forget asks first whether a job, queued or running, will store what it names (``stores/pending_writes.py``).

Forgotten now, such a source would be stored again once the job runs: the forget undone without a word. So the
forget is refused, naming the jobs, and nothing is removed; it is asked again once they end. The HTTP API asks
its own queue when a delete comes; ``Memory`` asks the queue in PostgreSQL that ``agent-memory worker`` processes
run (``Services.queued_writes``), where a CLI or a Python program beside the workers forgets. One rule for both:
the names a forget takes for a source (:func:`forgotten_names`) and the jobs' sources (``pending_writes.written``).
"""

from __future__ import annotations

import posixpath
from typing import Iterable, Mapping, Sequence

from agent_memory.core.errors import SourceBusyError
from agent_memory.ingest.ownership import source_spellings
from agent_memory.stores.pending_writes import PendingWrite, PendingWriters

NAMED_JOBS = 5  # the jobs a refusal names; the others are counted


def forgotten_names(given: str) -> list[str]:
    """A forgotten ID as ``forget`` spells it (``ownership.source_spellings``: as given, and as a normalized path)
    and, absolute, as an upload's ``client_path`` is stored (``api/routes_documents._origin``: a leading "//" is
    "/")."""
    spelled = source_spellings(given)
    if given.startswith("/"):
        spelled.append("/" + posixpath.normpath(given).lstrip("/"))
    return spelled


def queued_writes(queue: PendingWriters, tenant: str, given: Iterable[str] = (),
                  prefix: str | None = None) -> list[PendingWrite]:
    """``tenant``'s jobs in ``queue``, queued or running, that will store a source a forget of ``given`` (IDs, or
    file paths as ``forget`` takes them) or of ``prefix`` names."""
    names = {spelling for source_id in given for spelling in forgotten_names(source_id)}
    return queue.writing(tenant, names, prefix)


def refuse_queued_writes(queue: PendingWriters, tenant: str, what: str, given: Iterable[str] = (),
                         prefix: str | None = None, *, verb: str = "forget", wait_hint: str = "") -> None:
    """SourceBusyError while :func:`queued_writes` finds a job: ``what`` names the asked in the message, ``verb``
    what the caller calls the removal, ``wait_hint`` where the job is seen ending (``{job_id}``: the first job's)."""
    pending = queued_writes(queue, tenant, given, prefix)
    if not pending:
        return
    listed = "; ".join(f"job {w.job_id}, {w.status}, for {w.source_id!r}" for w in pending[:NAMED_JOBS])
    more = f"; and {len(pending) - NAMED_JOBS} more" if len(pending) > NAMED_JOBS else ""
    hint = f" ({wait_hint.format(job_id=pending[0].job_id)})" if wait_hint else ""
    raise SourceBusyError(f"{what} is being uploaded by a job not finished yet ({listed}{more}), which would store "
                          f"it again after this {verb}: wait for the job to end{hint}, then {verb} again; nothing was "
                          "removed", [w.job_id for w in pending])


def pending_for(queue: PendingWriters, tenant: str, named: Mapping[str, Sequence[str]]) -> dict[str, list[PendingWrite]]:
    """For each key of ``named`` (a source to forget, with the IDs and paths a forget of it takes), ``tenant``'s jobs
    in ``queue``, queued or running, that will store what it names; keys no job writes are left out. Asked for all
    at once, then for each half that a job writes, down to the keys themselves: a folder job's thousand gone files
    beside one upload cost some twenty questions, not a thousand (a job names a source by its file's path too,
    so which key it writes is known only by asking)."""
    found: dict[str, list[PendingWrite]] = {}

    def ask(keys: list[str]) -> None:
        pending = queued_writes(queue, tenant, [name for key in keys for name in named[key]])
        if pending and len(keys) == 1:
            found[keys[0]] = pending
        elif pending:
            ask(keys[:len(keys) // 2])
            ask(keys[len(keys) // 2:])

    if named:
        ask(list(named))
    return found


def kept_reason(why: str, jobs: Sequence[str]) -> str:
    """Why a folder job did not forget a file ``why`` says should go (gone from disk, now ignored): ``jobs`` not
    finished yet will store it, and it would come back after the forget. The job goes on; a later run forgets it."""
    listed = ", ".join(jobs[:NAMED_JOBS]) + (f" and {len(jobs) - NAMED_JOBS} more" if len(jobs) > NAMED_JOBS else "")
    who = f"job{'s' * (len(jobs) > 1)} {listed}" if jobs else "a job"
    return (f"{why}, but kept: {who}, not finished yet, will store it, and forgotten now it would be stored "
            "again; a run of this folder job after that job ends forgets it")
