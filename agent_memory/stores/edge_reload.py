"""Deleted points out of a Qdrant Edge collection's keyword weighting, by reopening its shard.

The IDF modifier of the ``sparse`` vector takes a term's document frequency from the posting lists of the
shard's segments and the document count from their indexed vectors; neither forgets a deleted point until
the segment is rebuilt or the shard loaded again (loading rebuilds the posting lists from the live points).
A forget, a changed file's replaced items or an expiry left the keyword route scoring with the counts of
items gone, and a long-running process ranked a question otherwise than the same data dir after a restart.

What clears them, measured with benchmarks/bench_edge_vacuum.py (2 cores, 384-d, 1% deleted): a reopen
(flush, close, load) 0.16 s at 10k points, 0.84 s at 100k; ``optimize()`` only vacuums a segment of 1000+
vectors with 20%+ deleted (Edge's defaults: at 1% it does nothing), and made to vacuum any deleted point it
took 1.0 s and 5.3 s. Both hold the interpreter lock throughout, so every thread of the process waits: the
reopen, six times shorter, is the mend, run off the request path once deletes have settled
(:class:`Debounced`), while reads wait for the new shard (:class:`SwapGuard`). A vacuum also drops the
deleted points' data from disk; a reopen does not (it never did: nothing called optimize()).
"""

from __future__ import annotations

import logging
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator

log = logging.getLogger(__name__)

# A reopen requested after a delete waits until no delete came for this long: a forget of many sources (one
# delete each) reopens the shard once, after the last.
SETTLE_S = 1.0


class SwapGuard:
    """Readers share the shard; a swap waits for the reads in flight and holds new ones until it is done."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0
        self._swapping = False

    @contextmanager
    def reading(self) -> Iterator[None]:
        with self._cond:
            while self._swapping:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                if not self._readers:
                    self._cond.notify_all()

    @contextmanager
    def swapping(self) -> Iterator[None]:
        with self._cond:
            while self._swapping:
                self._cond.wait()
            self._swapping = True
            while self._readers:
                self._cond.wait()
        try:
            yield
        finally:
            with self._cond:
                self._swapping = False
                self._cond.notify_all()


class Debounced:
    """Calls ``action`` on a daemon thread once ``settle_s`` passed without a new :meth:`request`; the thread
    starts with the first request and ends when :meth:`stop` is called (a pending call is then dropped)."""

    def __init__(self, action: Callable[[], object], name: str, settle_s: float = SETTLE_S) -> None:
        self._action = action
        self._name = name
        self._settle_s = settle_s
        self._wake = threading.Event()
        self._stopped = False
        self._last = 0.0
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()

    def request(self) -> None:
        self._last = time.monotonic()
        with self._start_lock:
            if self._stopped:
                return
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
        self._wake.set()

    def stop(self) -> None:
        with self._start_lock:
            self._stopped = True
        self._wake.set()

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            while not self._stopped and (quiet := time.monotonic() - self._last) < self._settle_s:
                self._wake.wait(self._settle_s - quiet)
                self._wake.clear()
            if self._stopped:
                return
            try:
                self._action()
            except Exception:  # a failed reopen is the store's to report (it marks itself unavailable)
                log.exception("%s failed", self._name)
