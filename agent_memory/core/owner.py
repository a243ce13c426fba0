"""Who owns a data dir: one process at a time opens its embedded stores.

The embedded stores (Qdrant Edge's shards, LadybugDB, the SQLite session file) lock their files
to one process, and two writers on one SQLite session file break each other's sequence numbers.
So the process that opens them takes an exclusive ``flock`` on ``<data dir>/owner.lock`` first
and writes who it is there (pid, command, and for ``serve`` its address and URL). The kernel
releases the lock when that process exits, even on SIGKILL, so a dead owner never blocks anyone:
the file's text is only believed while its lock is held.

A ``Memory`` built from settings (the Python API) owns its data dir the same way, unless this process
already holds it (the CLI and ``serve`` own it, then build their ``Memory``).

The CLI asks ``current_holder`` before it opens anything: a live ``serve`` means "go through its
HTTP API" (``agent_memory/remote/``); any other live owner means "cannot proceed", with the
holder and the fix in the message, instead of a store's own "WouldBlock" after the model loaded.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Iterator

from agent_memory.core.errors import ConfigError

LOCK_NAME = "owner.lock"
# A reader takes the lock shared for an instant to learn whether anyone holds it; an owner
# starting in that instant tries again this many times before it believes the data dir is taken.
_CLAIM_TRIES = 20
_CLAIM_PAUSE_S = 0.05
# The command name a ``Memory`` built from settings owns its data dir under (agent_memory/memory/memory.py).
PYTHON_COMMAND = "python"
# The data dirs this process holds, by resolved path, with the command holding each. An flock
# conflicts with another open file even in the same process, so a ``Memory`` built inside a
# command's ``own`` block (the CLI's, serve's) shares that hold instead of taking its own.
_held: dict[Path, str] = {}


class DataDirBusyError(ConfigError):
    """Another live process owns the data dir (its holder is in the message)."""

    def __init__(self, message: str, holder: Holder | None = None) -> None:
        super().__init__(message)
        self.holder = holder


@dataclass(frozen=True)
class Holder:
    pid: int
    command: str
    started: str
    address: str | None = None  # host:port a server listens on
    url: str | None = None  # where a client on this machine reaches it

    def describe(self) -> str:
        where = f" serving {self.url} (listening on {self.address})" if self.url else ""
        return f"pid {self.pid} (agent-memory {self.command}{where}, since {self.started})"


def lock_path(data_dir: str | Path) -> Path:
    return Path(data_dir) / LOCK_NAME


def client_url(host: str, port: int) -> str:
    """The URL a client on this machine uses for a server listening on ``host``: a wildcard
    address (0.0.0.0, ::) is reached on loopback."""
    if host in ("0.0.0.0", ""):
        host = "127.0.0.1"
    elif host in ("::", "[::]"):
        host = "[::1]"
    elif ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}"


def _read(handle: IO[str]) -> Holder:
    handle.seek(0)
    text = handle.read().strip()
    try:
        data = json.loads(text)
        return Holder(**{k: data.get(k) for k in ("pid", "command", "started", "address", "url")})
    except (ValueError, TypeError):  # written by an older version, or still being written
        return Holder(pid=0, command="(unknown)", started="?")


def current_holder(data_dir: str | Path) -> Holder | None:
    """The live owner of ``data_dir``, or None when no process holds it (a stale file is ignored)."""
    path = lock_path(data_dir)
    try:
        handle = path.open("r")
    except FileNotFoundError:
        return None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read(handle)
            for _ in range(_CLAIM_TRIES):  # the owner writes its line just after taking the lock
                if holder.pid:
                    break
                time.sleep(_CLAIM_PAUSE_S)
                holder = _read(handle)
            return holder
        fcntl.flock(handle, fcntl.LOCK_UN)
        return None


def held_here(data_dir: str | Path) -> str | None:
    """The command under which this process holds ``data_dir``, or None when it does not."""
    return _held.get(Path(data_dir).resolve())


# A data dir this process cannot write: on a read-only file system, or not this user's to write.
_NOT_WRITABLE = (errno.EROFS, errno.EACCES, errno.EPERM)


def not_writable_message(data_dir: str | Path, exc: OSError) -> str:
    """Why a data dir cannot be opened when its owner lock cannot be written, and what to do."""
    where = Path(data_dir).resolve()
    why = "is on a read-only file system" if exc.errno == errno.EROFS else "is not writable by this user"
    return (f"the data dir {where} {why}: agent-memory writes there even to read it (its owner lock, "
            f"{LOCK_NAME}, and its stores' files); copy it somewhere writable (cp -a {where} <writable folder>) "
            "and give the copy with --data-dir or AGENT_MEMORY_DATA_DIR")


def busy_message(data_dir: str | Path, holder: Holder, doing: str, command: str = "") -> str:
    if holder.url and doing == "serve":
        return (f"cannot serve: the data dir {data_dir} is already served by {holder.describe()}; use that "
                f"server (commands on this data dir go through it), stop it first, or serve another --data-dir")
    # Commands that can go through a server never get here while one runs (the CLI routes them first).
    if command == PYTHON_COMMAND:
        fix = ("a Memory opens the stores themselves: go through the server's HTTP API (docs/api.md), or stop "
               "the server first, or open another data dir" if holder.url else
               "wait for it to finish or stop it, or open another data dir; to use one data dir from several "
               "processes at once, run `agent-memory serve` on it and go through its HTTP API")
        return f"cannot {doing}: the data dir {data_dir} is owned by {holder.describe()}; {fix}"
    fix = ("this command needs the stores themselves: stop the server first, or use another --data-dir"
           if holder.url else
           "wait for it to finish or stop it; to use one data dir from several commands at once, run "
           "`agent-memory serve` on it: the CLI and `agent-memory mcp` then go through its HTTP API")
    return f"cannot {doing}: the data dir {data_dir} is owned by {holder.describe()}; {fix}"


@contextmanager
def own(data_dir: str | Path, command: str, *, address: str | None = None, url: str | None = None,
        doing: str | None = None) -> Iterator[Holder]:
    """Hold ``data_dir`` for this process until the block ends; raise ``DataDirBusyError`` naming
    the holder when another live process owns it."""
    data_dir = Path(data_dir)
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        handle = lock_path(data_dir).open("a+")
    except OSError as exc:
        if exc.errno not in _NOT_WRITABLE:
            raise
        raise ConfigError(not_writable_message(data_dir, exc)) from exc
    try:
        for attempt in range(_CLAIM_TRIES):
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if attempt == _CLAIM_TRIES - 1:
                    holder = _read(handle)
                    raise DataDirBusyError(busy_message(data_dir, holder, doing or f"run {command}", command),
                                           holder) from None
                time.sleep(_CLAIM_PAUSE_S)  # perhaps only a reader's instant look (current_holder)
        me = Holder(pid=os.getpid(), command=command, started=time.strftime("%Y-%m-%d %H:%M:%S %Z"),
                    address=address, url=url)
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps(asdict(me)))
        handle.flush()
        held = data_dir.resolve()
        _held[held] = command
        try:
            yield me
        finally:
            _held.pop(held, None)
    finally:
        handle.close()  # closing the descriptor releases the lock

