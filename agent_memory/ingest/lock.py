"""One ingestion job per data dir at a time: the second fails fast and says how to proceed.

Two jobs on one data dir would interleave "write new items, then delete stale ones" on the
same sources and race on the catalog's manifests. The lock is an advisory ``flock`` on
``<data dir>/ingest.lock``: the kernel releases it when the holder exits, even on SIGKILL,
so a crashed job never leaves a stale lock behind. Choice: fail fast (exit status 2 with the
holder's pid and what to do) rather than wait: a job that silently waits behind a long
ingestion looks hung, and the caller can simply run it again when the first one is done.
"""

from __future__ import annotations

import fcntl
import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from agent_memory.core.errors import IngestError

LOCK_NAME = "ingest.lock"


@contextmanager
def ingest_lock(data_dir: Path) -> Iterator[None]:
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / LOCK_NAME
    handle = path.open("a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise IngestError(f"another ingestion job ({holder}) is running on the data dir {data_dir}: wait for it "
                          f"to finish and run this one again, or use another --data-dir (lock: {path})") from None
    try:
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}, started {time.strftime('%Y-%m-%d %H:%M:%S')}")
        handle.flush()
        yield
    finally:
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()
