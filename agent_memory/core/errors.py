"""One root exception and a few meaningful subclasses.

Callers catch ``AgentMemoryError`` for anything this package raises on purpose;
the subclasses say which part failed so surfaces (CLI, API) can map them to exit
codes and HTTP statuses without string matching.
"""

from __future__ import annotations

import asyncio
import linecache
import logging
import os
import uuid
from typing import Any, Callable, Mapping, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")

# What a server shows its clients in place of its data dir's path (api/errors.py); a client on the same machine,
# which found the server through the data dir, puts the path back (remote/responses.py).
HIDDEN_DATA_DIR = "<data dir>"
# This package's folder: a ``raise`` in a file under it is one of ours (``raised_by_us``).
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class AgentMemoryError(Exception):
    """Root of every error raised on purpose by agent-memory."""


class ConfigError(AgentMemoryError):
    """Settings are missing, contradictory or point at something unusable."""


class IndexFormatError(ConfigError):
    """The data dir's vectors were written in another keyword format or by other embedding models than this
    process writes: ``agent-memory reindex`` moves them (nothing is mixed meanwhile)."""


class StoreError(AgentMemoryError):
    """A vector or graph store failed an operation."""


class StoreUnavailableError(StoreError):
    """A store cannot be reached or opened (server down, path locked)."""


class DimensionMismatchError(StoreError):
    """A collection exists with another vector size than the embedder produces."""


class IngestError(AgentMemoryError):
    """An input could not be ingested (the job reports it and goes on)."""


class BudgetError(AgentMemoryError):
    """A token budget cannot be met (e.g. smaller than the question itself)."""


class LLMError(AgentMemoryError):
    """The configured LLM endpoint failed or answered something unusable."""


class NotFoundError(AgentMemoryError):
    """A named session, source or job does not exist."""


class SourceNotFoundError(NotFoundError):
    """Nothing is stored under a source ID; ``similar``: the stored IDs that look like it, best first (the hint the
    CLI prints, which the HTTP API's 404 carries to a CLI working through it)."""

    def __init__(self, message: str, similar: list[str] | tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.similar = list(similar)


class SourceBusyError(AgentMemoryError):
    """A forget named a source that a job, queued or running, will store: forgotten now, it would be stored again
    once the job runs, the forget undone. Nothing was removed; ``jobs``: those jobs' IDs (the HTTP
    API answers 409 ``source_busy``)."""

    def __init__(self, message: str, jobs: list[str] | tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.jobs = list(jobs)


class BackupError(AgentMemoryError):
    """A backup cannot be made as asked: its destination is taken or lies inside the data dir, or a store lives
    on a server, whose own backup tool copies it (the message names it)."""


class ClosedError(AgentMemoryError):
    """An object was used after its ``close()``: a closed ``Memory`` holds no data dir (another may have
    opened it since), so it never opens its stores again; open a new one."""


class JobInterrupted(AgentMemoryError):
    """The process is stopping: a background job ends at its next unit boundary instead of writing on
    while the stores close (its spooled copy runs again at the next start)."""


class JobGivenUp(JobInterrupted):
    """A background job interrupted too often (each run ended by a stop, or its process or worker killed) is
    not run again: what its runs stored was taken out, and its record fails with this message."""


class InternalError(AgentMemoryError):
    """A native library failed inside one request with a non-``Exception`` error (e.g. a Rust panic
    surfacing through pyo3): that request fails, the process and other requests go on."""


def new_error_id() -> str:
    """The ID of one unexpected error: what a client is told, and what the server's log shows it under."""
    return uuid.uuid4().hex[:16]


def internal_message(error_id: str) -> str:
    """What a client learns of an unexpected error: that it happened and its ID, nothing of its text."""
    return f"internal error; the server's log has its details under error ID {error_id}"


def refused_value_message(error_id: str) -> str:
    """What a client learns of a ValueError that no check of ours raised (``raised_by_us``): that a value of its
    request was refused, and the ID its details are logged under, nothing of the text (a library's may name a
    server path or its own internals)."""
    return ("a value in the request could not be used; the server's log has the details under error ID "
            f"{error_id}")


def raised_by_us(exc: BaseException) -> bool:
    """Whether ``exc`` was raised by a ``raise`` statement of this package: a check of ours, whose message says
    what was wrong with the value and names it. Not one a library raised (its innermost frame is the library's,
    also when our code re-raises it), nor one a builtin our code called raised (``int('x')``, a codec): their
    text is not written for a client, and may name a server path, a query or a library's internals."""
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    filename = os.path.abspath(tb.tb_frame.f_code.co_filename)
    line = linecache.getline(filename, tb.tb_lineno).strip()
    return filename.startswith(_PACKAGE_DIR) and (line == "raise" or line.startswith("raise "))


def passthrough(exc: BaseException) -> bool:
    """An error that is no native failure: ordinary exceptions, exits and cancellations."""
    return isinstance(exc, (Exception, KeyboardInterrupt, SystemExit, GeneratorExit, asyncio.CancelledError))


def contained(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)``, with a non-``Exception`` error from native code raised as InternalError,
    so the caller's ``except Exception`` isolates it like any other failure."""
    try:
        return fn(*args, **kwargs)
    except BaseException as exc:
        if passthrough(exc):
            raise
        log.error("native failure in %s: %s: %s", getattr(fn, "__name__", fn), type(exc).__name__, exc)
        raise InternalError(f"internal failure ({type(exc).__name__}); the request was not completed") from exc


def problem_of(error: Mapping[str, Any]) -> str:
    """The message of one pydantic error as a person reads it: a validator's own ValueError already names the
    value and the fix, so pydantic's "Value error, " prefix goes."""
    return str(error.get("msg", "")).removeprefix("Value error, ")
