"""Who writes a source holds its lock (:class:`SourceLocks`): one writer at a time in this process and, with
PostgreSQL, across processes (``postgres_jobs.PostgresJobStore.source_locks``); a tenant's removal holds its
whole key (``TENANT_KEY``)."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterable, Iterator

# The lock key of a whole tenant: no source or file ID is empty. Every writer of the tenant holds it shared, its
# removal exclusively (``SourceLocks.hold_tenant``).
TENANT_KEY = ""


class SourceLocks:
    """Who writes a source holds its lock: one writer at a time in this process (re-ingesting a
    source is not atomic) and, with PostgreSQL, the source's advisory lock across processes; a repair
    (ingest/consistency.py) leaves what a writer holds alone. Each writer also holds its tenant's key
    (``TENANT_KEY``) in shared mode for as long as it holds its sources' keys, taken before them: the tenant's
    removal takes that key exclusively (``hold_tenant``), so it waits for every writer of the tenant in every
    process, and a writer that comes meanwhile waits for it.

    One lock order, so that no two writers wait on each other: the process's write lock first (``Memory``'s),
    then the tenant's key, then the source locks, several at once in one sorted order (``hold_many``), several
    tenants' in sorted tenant order. A key this thread holds already is not taken again (a file's lock covers the
    writes of its records; a tenant held exclusively covers its writers' shared hold): asked for on another
    connection, it would wait on itself."""

    def __init__(self, job_store=None) -> None:
        self.process = threading.RLock()
        self.job_store = job_store
        self._mine = threading.local()  # per thread: what it holds across processes (``_held``)

    @property
    def shared(self) -> bool:
        """Whether other processes write these stores (PostgreSQL): only then do the keys matter."""
        return self.job_store is not None

    def _held(self) -> dict[tuple[str, str], bool]:
        """This thread's keys held across processes: {(tenant, key): held exclusively}."""
        return self._mine.__dict__.setdefault("held", {})

    def hold(self, tenant: str, source_id: str):
        return self.hold_many(tenant, [source_id])

    @contextmanager
    def hold_many(self, tenant: str, source_ids: Iterable[str]) -> Iterator[None]:
        """Hold the locks of ``source_ids`` (waiting for them) until the block ends, and the tenant's key in
        shared mode before them."""
        mine = self._held()
        new = sorted({key for key in source_ids if (tenant, key) not in mine})
        with self.process:
            if self.job_store is None or not new:
                yield
                return
            tenant_too = (tenant, TENANT_KEY) not in mine
            with self.job_store.source_locks(tenant, new, shared=[TENANT_KEY] if tenant_too else []):
                with self._holding(mine, [(tenant, key) for key in new], exclusive=True), \
                        self._holding(mine, [(tenant, TENANT_KEY)] if tenant_too else [], exclusive=False):
                    yield

    @contextmanager
    def hold_tenant(self, tenant: str) -> Iterator[None]:
        """Hold the whole tenant's key exclusively until the block ends: taken once no writer of the tenant holds
        it (in any process), and every writer that comes meanwhile waits. Not for a thread that writes the
        tenant already (a ``hold_many`` of it around this): it would wait for itself."""
        mine = self._held()
        held = mine.get((tenant, TENANT_KEY))
        if held is False:
            raise RuntimeError(f"the removal of tenant {tenant!r} was asked for by a thread that writes it: "
                               "it would wait for its own write")
        with self.process:
            if self.job_store is None or held:
                yield
                return
            with self.job_store.source_locks(tenant, [TENANT_KEY]), \
                    self._holding(mine, [(tenant, TENANT_KEY)], exclusive=True):
                yield

    @contextmanager
    def try_hold(self, tenant: str, source_ids: list[str]) -> Iterator[set[str]]:
        """Of ``source_ids``, those no writer in another process holds, held without waiting until the block
        ends (a writer that comes then waits for it); the others are being written there. For a caller that
        holds this process's write lock, so no writer of its own runs: this process's lock is not taken (a
        writer here takes it after the write lock, and never waits here). Without PostgreSQL every one: no
        other process writes these stores."""
        if self.job_store is None:
            yield set(source_ids)
            return
        mine = self._held()
        own = {key for key in source_ids if (tenant, key) in mine}
        with self.job_store.try_source_locks(tenant, [key for key in source_ids if key not in own]) as free, \
                self._holding(mine, [(tenant, key) for key in free], exclusive=True):
            yield free | own

    @contextmanager
    def try_hold_tenant(self, tenant: str) -> Iterator[bool]:
        """Whether no removal of the tenant runs (nor waits to) in another process; if so, the tenant's key is
        held in shared mode, without waiting, until the block ends: writers go on beside it, and a removal that
        comes meanwhile waits for it. For a repair (ingest/consistency.py), which holds this process's write lock:
        this process's lock is not taken, as in :meth:`try_hold`. Without PostgreSQL True: no other process
        removes the tenant."""
        mine = self._held()
        if self.job_store is None or (tenant, TENANT_KEY) in mine:
            yield True
            return
        with self.job_store.try_source_locks(tenant, [TENANT_KEY], shared=True) as free, \
                self._holding(mine, [(tenant, TENANT_KEY)] if free else [], exclusive=False):
            yield bool(free)

    @staticmethod
    @contextmanager
    def _holding(mine: dict[tuple[str, str], bool], keys: list[tuple[str, str]], *, exclusive: bool) -> Iterator[None]:
        """``keys`` recorded as this thread's until the block ends (a nested hold does not take them again)."""
        mine.update(dict.fromkeys(keys, exclusive))
        try:
            yield
        finally:
            for key in keys:
                mine.pop(key, None)
