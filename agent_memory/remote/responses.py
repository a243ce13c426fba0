"""A server's answers read back into this library's types: a refused request as the error a local call
raises (a 404 naming the stored IDs like the one asked as a ``SourceNotFoundError`` carrying them, a 409
``source_busy`` as a ``SourceBusyError`` naming its jobs), and a
prompt's JSON as a ``PromptResult``."""

from __future__ import annotations

import os
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from agent_memory.core.errors import (
    HIDDEN_DATA_DIR,
    AgentMemoryError,
    ConfigError,
    NotFoundError,
    SourceBusyError,
    SourceNotFoundError,
)

# The prompt's types are imported by ``prompt_result``, the one reader of them: the other answers (and the
# commands that read only those) do not load the retrieval package.
if TYPE_CHECKING:
    from agent_memory.retrieval.types import PromptResult

KEY_ENV = "AGENT_MEMORY_API_KEY"


class RemoteError(AgentMemoryError):
    """The server refused a request: its status, error code and message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{message} (HTTP {status} {code})")
        self.status, self.code, self.message = status, code, message


class RemoteSourceBusyError(RemoteError, SourceBusyError):
    """A server's ``409 source_busy``: a ``SourceBusyError``, as a local forget raises it, with the jobs the body
    names, and a ``RemoteError`` with its status and code."""

    def __init__(self, status: int, code: str, message: str, jobs: list[str]) -> None:
        RemoteError.__init__(self, status, code, message)
        self.jobs = jobs


def refusal(response: httpx.Response, url: str, data_dir: str | os.PathLike | None = None) -> AgentMemoryError:
    """The error a refused request raises: a missing key is a configuration error, a 404 a NotFoundError
    (a ``SourceNotFoundError`` with the IDs like it when the body names them), any other a RemoteError
    with the body's code and message (the start of the text when the body is no error JSON). ``data_dir``:
    the path a server on this machine hides as ``<data dir>``, put back."""
    similar = jobs = None
    try:
        body = response.json()
        error = body["error"]
        code, message = str(error.get("code")), str(error.get("message"))
        similar, jobs = body.get("similar"), body.get("jobs")
    except (ValueError, KeyError, TypeError, AttributeError):
        code, message = "error", response.text[:300]
    if data_dir is not None:
        message = message.replace(HIDDEN_DATA_DIR, str(Path(data_dir).resolve()))
    if response.status_code == 401:
        return ConfigError(f"the server at {url} needs an API key: {message}; set {KEY_ENV} to a key "
                           "from its AGENT_MEMORY_API_KEYS (its tenant is the one you work in)")
    if response.status_code == 404:
        if isinstance(similar, list):  # a source ID that matched nothing: the IDs like it, for the hint
            return SourceNotFoundError(message, [str(s) for s in similar])
        return NotFoundError(message)
    if response.status_code == 409 and code == "source_busy":
        return RemoteSourceBusyError(409, code, message, [str(j) for j in jobs] if isinstance(jobs, list) else [])
    return RemoteError(response.status_code, code, message)


def prompt_result(data: dict[str, Any]) -> PromptResult:
    """``PromptResult.debug_dict()`` back into a PromptResult (what ``render_dump`` reads)."""
    from agent_memory.retrieval.types import Decision, Passage, PromptResult

    known = {f.name for f in fields(PromptResult)}
    out = {k: v for k, v in data.items() if k in known}
    out["passages"] = [_record(Passage, p) for p in data.get("passages", [])]
    for name in ("assembly_drops", "decisions"):
        out[name] = [_record(Decision, d) for d in data.get(name, [])]
    return PromptResult(**out)


def _record(cls, data: dict[str, Any]):
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in names})
