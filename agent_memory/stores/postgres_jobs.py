"""Durable ingestion jobs on PostgreSQL (``migrations/003_jobs.sql``) and per-source locks.

The API inserts a job with its body; any number of workers take jobs with
``FOR UPDATE SKIP LOCKED`` (two workers never take one job), keep a heartbeat while they run
it, and write the outcome. A running job whose heartbeat is older than the lease lost its
worker (killed, machine gone) and is taken again; after ``max_attempts`` such losses it is
given up instead of killing worker after worker: a worker takes it (``give_up``) to take out what
its runs stored, then fails it. Rows are plain dicts: the job records live in ``jobs.py``.

Whoever writes a source (an ingestion in any process, an import, a session's archive, a forget:
``ingest/ownership.writing``) holds its advisory lock, so one source is never ingested twice at the same
time anywhere, and a repair (``try_source_locks``) leaves it alone meanwhile; and, before it, its tenant's key
in shared mode, which a removal of the whole tenant takes exclusively (``stores/source_locks.SourceLocks``).
"""

from __future__ import annotations

import json
import time
from contextlib import contextmanager
from typing import Any, Iterable, Iterator

from psycopg.types.json import Jsonb

from agent_memory.stores.pending_writes import IMPORT_KIND, IMPORT_SOURCES, WRITER_KINDS
from agent_memory.stores.postgres import PostgresDB

_PUBLIC = ("id, tenant, kind, source_key, bytes, status, stage, units_done, units_total, chunks_done, chunks_total,"
           " graph_done, graph_total, attempts, worker,"
           " heartbeat_at, created_at, started_at, finished_at, result, error")


class PostgresJobStore:
    def __init__(self, db: PostgresDB) -> None:
        self.db = db

    def enqueue(self, job_id: str, tenant: str, kind: str, source_key: str, params: dict[str, Any],
                body: bytes | None, size: int) -> dict[str, Any]:
        with self.db.connection() as conn:
            row = conn.execute(
                f"INSERT INTO jobs (id, tenant, kind, source_key, params, body, bytes, created_at)"
                f" VALUES (%s,%s,%s,%s,%s,%s,%s,%s) RETURNING {_PUBLIC}",
                (job_id, tenant, kind, source_key, Jsonb(params), body, size, time.time())).fetchone()
        return _public(row)

    def get(self, job_id: str, tenant: str) -> dict[str, Any] | None:
        with self.db.connection() as conn:
            row = conn.execute(f"SELECT {_PUBLIC} FROM jobs WHERE id=%s AND tenant=%s", (job_id, tenant)).fetchone()
        return _public(row) if row else None

    def claim(self, worker: str, lease_s: float, max_attempts: int = 3) -> dict[str, Any] | None:
        """Take the oldest open job (queued, or running with an expired heartbeat and fewer than
        ``max_attempts`` takes: ``give_up`` takes the others); its row with ``params`` and ``body``, or None
        when there is nothing to do."""
        now = time.time()
        with self.db.connection() as conn:
            row = conn.execute(
                "WITH next AS (SELECT id FROM jobs WHERE status='queued'"
                "  OR (status='running' AND heartbeat_at < %s AND attempts < %s)"
                "  ORDER BY created_at, id FOR UPDATE SKIP LOCKED LIMIT 1)"
                " UPDATE jobs SET status='running', stage='starting', worker=%s, heartbeat_at=%s,"
                "  started_at=coalesce(jobs.started_at, %s), attempts=jobs.attempts + 1"
                f" FROM next WHERE jobs.id = next.id RETURNING {_RETURNED}",
                (now - lease_s, max_attempts, worker, now, now)).fetchone()
        return _taken(row)

    def give_up(self, worker: str, lease_s: float, max_attempts: int = 3) -> dict[str, Any] | None:
        """Take the oldest job that lost its worker ``max_attempts`` times (running, its heartbeat expired),
        not to run it: to take out what its runs stored, then ``finish`` it failed. Its row as ``claim``'s
        (``attempts`` unchanged, stage "given up"), or None. A worker lost while it does that leaves the job to
        the next one, once the lease has passed."""
        now = time.time()
        with self.db.connection() as conn:
            row = conn.execute(
                "WITH lost AS (SELECT id FROM jobs WHERE status='running' AND heartbeat_at < %s AND attempts >= %s"
                "  ORDER BY created_at, id FOR UPDATE SKIP LOCKED LIMIT 1)"
                " UPDATE jobs SET stage='given up', worker=%s, heartbeat_at=%s"
                f" FROM lost WHERE jobs.id = lost.id RETURNING {_RETURNED}",
                (now - lease_s, max_attempts, worker, now)).fetchone()
        return _taken(row)

    def heartbeat(self, job_id: str, worker: str, stage: str, done: int, total: int, *,
                  chunks: tuple[int, int] = (0, 0), graph: tuple[int, int] = (0, 0)) -> bool:
        """Record progress (``chunks``, ``graph``: done, total; jobs.INNER_STAGES) and that the worker lives;
        False when the job is no longer this worker's."""
        with self.db.connection() as conn:
            cur = conn.execute(
                "UPDATE jobs SET heartbeat_at=%s, stage=%s, units_done=%s, units_total=%s, chunks_done=%s,"
                " chunks_total=%s, graph_done=%s, graph_total=%s WHERE id=%s AND worker=%s AND status='running'",
                (time.time(), stage, done, total, *chunks, *graph, job_id, worker))
            return cur.rowcount == 1

    def finish(self, job_id: str, worker: str, result: dict[str, Any] | None, error: dict[str, str] | None,
               done: int, total: int, *, chunks: tuple[int, int] = (0, 0),
               graph: tuple[int, int] = (0, 0)) -> bool:
        """Write the outcome (and drop the body); False when another worker took the job meanwhile."""
        status = "failed" if error is not None else "done"
        with self.db.connection() as conn:
            cur = conn.execute(
                "UPDATE jobs SET status=%s, stage=%s, finished_at=%s, result=%s, error=%s, body=NULL,"
                " units_done=%s, units_total=%s, chunks_done=%s, chunks_total=%s, graph_done=%s, graph_total=%s"
                " WHERE id=%s AND worker=%s AND status='running'",
                (status, status, time.time(), Jsonb(result) if result is not None else None,
                 Jsonb(error) if error is not None else None, done, total, *chunks, *graph, job_id, worker))
            return cur.rowcount == 1

    def requeue(self, job_id: str, worker: str, why: str) -> bool:
        """Put a running job back in the queue, its body kept: a store it writes was away (``why``, shown as
        its stage). The take does not count as an attempt: an outage, however long, never fails the job.
        False when another worker took the job meanwhile."""
        with self.db.connection() as conn:
            cur = conn.execute(
                "UPDATE jobs SET status='queued', stage=%s, worker=NULL, attempts=GREATEST(attempts - 1, 0)"
                " WHERE id=%s AND worker=%s AND status='running'", (f"waiting: {why}"[:500], job_id, worker))
            return cur.rowcount == 1

    def prune(self, older_than_s: float) -> int:
        """Forget finished jobs older than that (their results were there to be polled)."""
        with self.db.connection() as conn:
            cur = conn.execute("DELETE FROM jobs WHERE status IN ('done', 'failed') AND finished_at < %s",
                               (time.time() - older_than_s,))
            return cur.rowcount

    def unfinished(self, tenant: str) -> int:
        """How many of ``tenant``'s jobs are queued or running."""
        with self.db.connection() as conn:
            row = conn.execute("SELECT count(*) FROM jobs WHERE tenant=%s AND status IN ('queued', 'running')",
                               (tenant,)).fetchone()
        return int(row[0])

    def writing(self, tenant: str, names: list[str], prefix: str | None = None) -> list[dict[str, Any]]:
        """``tenant``'s queued or running jobs that store a source named by one of ``names`` (``source_key``, or
        the file's ``origin`` on the client; an import's, one of its params' ``IMPORT_SOURCES``) or, with
        ``prefix``, one whose key starts with it (``pending_writes.written``): rows of ``id``, ``status`` and, in
        ``source_key``, the source it stores of those, oldest first."""
        named = "source_key = ANY(%s) OR params->>'origin' = ANY(%s)"
        listed = "s = ANY(%s)"
        args: list[Any] = [names, names]
        if prefix is not None:
            named += " OR left(source_key, length(%s)) = %s"
            listed += " OR left(s, length(%s)) = %s"
            args += [prefix, prefix]
        # An import's first listed source named so; a writer's own key.
        source = (f"CASE WHEN kind = %s THEN (SELECT s FROM jsonb_array_elements_text(params->%s) AS s"
                  f" WHERE {listed} LIMIT 1) WHEN {named} THEN source_key END")
        listed_args = [names] + ([prefix, prefix] if prefix is not None else [])
        with self.db.connection() as conn:
            rows = conn.execute(
                f"SELECT id, status, source FROM (SELECT id, status, created_at, {source} AS source FROM jobs"
                " WHERE tenant=%s AND kind = ANY(%s) AND status IN ('queued', 'running')) AS unfinished"
                " WHERE source IS NOT NULL ORDER BY created_at, id",
                [IMPORT_KIND, IMPORT_SOURCES, *listed_args, *args, tenant, [*WRITER_KINDS, IMPORT_KIND]]).fetchall()
        return [{"id": r[0], "status": r[1], "source_key": r[2]} for r in rows]

    def delete_finished(self, tenant: str) -> int:
        """Forget ``tenant``'s finished jobs (a removed tenant's: their bodies and results held its data)."""
        with self.db.connection() as conn:
            cur = conn.execute("DELETE FROM jobs WHERE tenant=%s AND status IN ('done', 'failed')", (tenant,))
            return cur.rowcount

    @contextmanager
    def source_locks(self, tenant: str, source_keys: Iterable[str], *,
                     shared: Iterable[str] = ()) -> Iterator[None]:
        """Hold the advisory locks of ``shared`` in shared mode (any number of holders at once: a whole tenant's
        key, which every writer of the tenant holds and its removal takes alone), then those of ``source_keys``
        exclusively, waiting for each, on a connection of their own: a holder that dies drops its connection,
        and PostgreSQL releases them. Taken in one order, ``shared`` first, then the sorted keys, so that two
        holders of several never wait on each other."""
        first = [(key, True) for key in dict.fromkeys(_lock_key(tenant, k) for k in shared)]
        then = [(key, False) for key in sorted({_lock_key(tenant, k) for k in source_keys} - {k for k, _ in first})]
        with self.db.connection() as conn:
            taken: list[tuple[str, bool]] = []
            try:
                for key, is_shared in first + then:  # one at a time: the order is what keeps two holders apart
                    conn.execute(_LOCK[is_shared], (key,))
                    taken.append((key, is_shared))
                yield
            finally:
                _unlock(conn, taken)

    @contextmanager
    def try_source_locks(self, tenant: str, source_keys: list[str], *, shared: bool = False) -> Iterator[set[str]]:
        """Of ``source_keys``, those whose advisory lock no one holds (``shared``: no one holds exclusively, nor
        waits to), taken without waiting (on one connection of their own) and held until the block ends; the
        others are being written (or, for a tenant's key, removed) elsewhere."""
        keys = list(dict.fromkeys(_lock_key(tenant, k) for k in source_keys))  # once each: a lock taken twice is held twice
        try_lock = "pg_try_advisory_lock_shared" if shared else "pg_try_advisory_lock"
        with self.db.connection() as conn:
            rows = conn.execute(f"SELECT k, {try_lock}(hashtextextended(k, 0)) FROM unnest(%s::text[]) AS k",
                                (keys,)).fetchall() if keys else []
            taken = [k for k, got in rows if got]
            try:
                yield {json.loads(k)[1] for k in taken}
            finally:
                _unlock(conn, [(k, shared) for k in taken])


_LOCK = {False: "SELECT pg_advisory_lock(hashtextextended(%s, 0))",
         True: "SELECT pg_advisory_lock_shared(hashtextextended(%s, 0))"}


def _lock_key(tenant: str, key: str) -> str:
    """The text an advisory lock is hashed from: unambiguous, and text may hold no NUL byte."""
    return json.dumps([tenant, key])


def _unlock(conn, taken: list[tuple[str, bool]]) -> None:
    """Release the advisory locks ``taken`` ([(key, taken shared)]) in each one's mode."""
    for is_shared in (True, False):
        keys = [key for key, mode in taken if mode is is_shared]
        if keys:
            unlock = "pg_advisory_unlock_shared" if is_shared else "pg_advisory_unlock"
            conn.execute(f"SELECT {unlock}(hashtextextended(k, 0)) FROM unnest(%s::text[]) AS k", (keys,))


_RETURNED = ", ".join("jobs." + c.strip() for c in _PUBLIC.split(",")) + ", jobs.params, jobs.body"


def _taken(row) -> dict[str, Any] | None:
    """A taken job's row: its public columns, ``params`` and ``body``."""
    if row is None:
        return None
    out = _public(row[:-2])
    out["params"], out["body"] = row[-2], bytes(row[-1]) if row[-1] is not None else None
    return out


def _public(row) -> dict[str, Any]:
    names = [c.strip() for c in _PUBLIC.split(",")]
    return dict(zip(names, row))
