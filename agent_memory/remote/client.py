"""``RemoteMemory``: a running ``agent-memory serve`` as the CLI's and the MCP server's memory, the same
calls through its HTTP API instead of the stores it owns (``agent_memory/core/owner.py``). The API key
comes from ``AGENT_MEMORY_API_KEY`` (a server beyond loopback, or one with ``AGENT_MEMORY_API_KEYS``,
needs one); the server answers for that key's tenant. The ingestion job over files and folders is
``upload_job.py``; reading the answers back, ``responses.py``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Iterable, Sequence
from urllib.parse import quote

import httpx

from agent_memory.core.errors import ConfigError, NotFoundError, SourceNotFoundError, StoreUnavailableError
from agent_memory.core.progress import CHUNKS_STAGE, GRAPH_STAGE, Progress
from agent_memory.remote.responses import KEY_ENV, RemoteError, prompt_result, refusal

# The ingestion job (its walk, ignore rules and file formats) and the stored-file record are imported by the
# calls that use them (``ingest_paths``, ``files_under``), and the report and prompt types serve annotations
# alone: a command that only reads through the server (stats, list, inspect ...) does not wait for the
# ingestion and retrieval packages and what they load.
if TYPE_CHECKING:
    from agent_memory.ingest.missing import StoredFile
    from agent_memory.ingest.report import IngestReport
    from agent_memory.retrieval.types import PromptResult

CONNECT_WAIT_S = 15.0


def _quoted(source_id: str) -> str:
    return quote(source_id, safe="/")


class RemoteMemory:
    """The HTTP API of one server, with the calls the CLI and the MCP tools make."""

    def __init__(self, url: str, api_key: str | None = None, *, timeout: float = 300.0,
                 owner: str | None = None, data_dir: str | os.PathLike | None = None) -> None:
        self.url = url.rstrip("/")
        self.api_key = api_key if api_key is not None else (os.environ.get(KEY_ENV) or None)
        self.owner = owner  # "pid 123 (...)" when found through the data dir's lock file
        # Found through that lock file, the server runs on this machine, on this data dir: the "<data dir>" its
        # messages show clients in place of its path is put back (the user named the path already).
        self.data_dir = data_dir
        headers = {"X-API-Key": self.api_key} if self.api_key else {}
        self.client = httpx.Client(base_url=self.url, headers=headers, timeout=timeout)

    # ---- plumbing ---------------------------------------------------------------------------------
    def request(self, method: str, path: str, *, ok: Sequence[int] = (200,), key: str | None = None,
                headers: dict[str, str] | None = None, **kwargs: Any) -> httpx.Response:
        headers = {**({"X-API-Key": key} if key else {}), **(headers or {})} or None
        # A server takes its data dir before it listens: one found through the lock file may still be
        # starting, so a refused connection is tried again for a few seconds (nothing was sent).
        deadline = time.monotonic() + (CONNECT_WAIT_S if self.owner else 0.0)
        while True:
            try:
                response = self.client.request(method, path, headers=headers, **kwargs)
                break
            except httpx.ConnectError as exc:
                if time.monotonic() < deadline:
                    time.sleep(0.5)
                    continue
                raise self._unreachable(exc) from None
            except httpx.TransportError as exc:
                raise self._unreachable(exc) from None
        if response.status_code in ok:
            return response
        raise refusal(response, self.url, self.data_dir)

    def _unreachable(self, exc: Exception) -> StoreUnavailableError:
        who = f" ({self.owner})" if self.owner else ""
        return StoreUnavailableError(f"the server at {self.url}{who} did not answer: {exc}")

    def json(self, method: str, path: str, **kwargs: Any) -> Any:
        return self.request(method, path, **kwargs).json()

    def tenant(self) -> str:
        """The tenant this client's key reads and writes on the server."""
        return self.json("GET", "/v1/whoami")["tenant"]

    def check_tenant(self, wanted: str | None, *, given_as: str = "--tenant") -> str:
        """The server's tenant for this key; a tenant wanted (``--tenant``, or ``AGENT_MEMORY_TENANT`` as
        ``given_as``) that differs cannot be served through it (the API takes a request's tenant from its key
        alone, never from the request): refused, so nothing is read from or written to another tenant."""
        tenant = self.tenant()
        if wanted and wanted != tenant:
            raise ConfigError(self._other_tenant(wanted, tenant, given_as))
        return tenant

    def _other_tenant(self, wanted: str, tenant: str, given_as: str = "--tenant") -> str:
        """Why the tenant ``wanted`` (given as ``--tenant`` or an environment variable) cannot go through
        this server, and the fix."""
        flag = given_as.startswith("--")
        where = f"{given_as} {wanted!r}" if flag else f"{given_as}={wanted!r}"
        where += f": the server at {self.url}"
        # Its own tenant: --tenant names it; a variable is unset (or names it).
        own = f"--tenant {tenant!r}" if flag else f"{given_as} unset or {tenant!r}"
        if self.api_key and self._needs_key():
            unset = "" if flag else f", or unset {given_as} to work in {tenant!r}"
            return (f"{where} answers for tenant {tenant!r}, the tenant of the API key in {KEY_ENV}; "
                    f"set {KEY_ENV} to a key bound to {wanted!r}{unset}")
        # No API keys there: every request works in the server's own tenant, and no key can change that.
        if self.owner:
            fix = ("stop the server that owns the data dir and run the command again (without a server it "
                   f"opens the data dir itself), or run it with {own}")
        else:
            fix = (f"run the command with {own}, or against a server started with "
                   f"AGENT_MEMORY_TENANT={wanted}, or with API keys (AGENT_MEMORY_API_KEYS) and a key bound to {wanted!r}")
        return f"{where} has no API keys and serves only its own tenant {tenant!r}; {fix}"

    def _needs_key(self) -> bool:
        """Whether the server refuses a request without a key: one with no API keys ignores any key sent."""
        request = self.client.build_request("GET", "/v1/whoami")
        request.headers.pop("X-API-Key", None)
        try:
            return self.client.send(request).status_code == 401
        except httpx.TransportError:
            return True  # no answer: keep the key's explanation

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> RemoteMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- documents ----------------------------------------------------------------------------------
    def ingest_paths(self, paths: Sequence[str | Path], *, recursive: bool = False, glob: str | None = None,
                     progress: bool = False, base: str | Path | None = None,
                     keep_missing: bool = False, data_dir: str | Path | None = None,
                     ignore_rules: bool = True) -> IngestReport:
        """The ingestion job over files and folders, each file uploaded to the server under the source ID
        a local job gives it (its path relative to ``base``, default the folder holding each path given).
        Unless ``keep_missing``, the stored files of the folders given that are gone from disk are forgotten
        first, as a local job does; that needs the server owning the data dir (``owner``), the one the
        uploads tell their path to (through another, a warning says they were not looked for).
        ``data_dir``: that server's data dir on this machine, never walked nor uploaded, as in a local job.
        The walk is this machine's (the server only takes uploads), ignore rules included (``ignore_rules``);
        the stored files it now ignores are forgotten as the gone ones are."""
        from agent_memory.remote.upload_job import ingest_through

        return ingest_through(self, paths, recursive=recursive, glob=glob, progress=progress, base=base,
                              keep_missing=keep_missing, data_dir=data_dir, ignore_rules=ignore_rules)

    def upload(self, path: Path, source_id: str, *, metadata: str | None = None,
               progress: Progress | None = None, named_by_user: bool = True,
               named_by_path: bool = False) -> dict[str, Any]:
        """One file under ``source_id``; a big one waits for its job, reporting the job's progress.
        ``named_by_user``: False for a file a folder's walk reached (the server's manifest records it).
        ``named_by_path``: ``source_id`` is named from the file's path (the CLI's naming): the server refuses
        it when another existing file holds that ID (409 source_id_held), as a local job does; said only with
        the client path (to the server that owns our data dir), the one thing that check compares."""
        with Path(path).open("rb") as handle:
            form = {"source_id": source_id, **({"metadata": metadata} if metadata else {})}
            if self.owner:  # the server owns our data dir, on this machine: forget and inspect take this path
                form["client_path"] = os.path.abspath(path)
                form["named_by_path"] = "true" if named_by_path else "false"
            if not named_by_user:
                form["named_by_user"] = "false"
            response = self.request("POST", "/v1/documents", ok=(200, 202),
                                    files={"file": (Path(path).name, handle)}, data=form)
        return self.answer(response, progress)

    def answer(self, response: httpx.Response, progress: Progress | None = None, *,
               key: str | None = None) -> dict[str, Any]:
        """A write's answer: the body of a 200, or the result of the job a 202 queued (waited for)."""
        data = response.json()
        return self.wait_job(data["job_id"], progress, key=key) if response.status_code == 202 else data

    def wait_job(self, job_id: str, progress: Progress | None = None, poll_s: float = 0.5, *,
                 key: str | None = None) -> dict[str, Any]:
        while True:
            job = self.json("GET", f"/v1/jobs/{job_id}", key=key)
            if progress:
                progress(job.get("stage") or job["status"], job.get("units_done", 0), job.get("units_total", 0))
                for stage in (CHUNKS_STAGE, GRAPH_STAGE):  # inside a unit: as a local job reports them
                    if job.get(f"{stage}_total"):
                        progress(stage, job[f"{stage}_done"], job[f"{stage}_total"])
            if job["status"] == "done":
                return job.get("result") or {}
            if job["status"] == "failed":
                error = job.get("error") or {}
                raise RemoteError(400, str(error.get("code", "job_failed")), str(error.get("message", "job failed")))
            time.sleep(poll_s)

    def add(self, text: str, *, source_id: str, title: str = "", metadata: dict | None = None,
            key: str | None = None) -> list[str]:
        body = {"text": text, "source_id": source_id, "title": title, "metadata": metadata or {}}
        data = self.answer(self.request("POST", "/v1/documents", ok=(200, 202), json=body, key=key), key=key)
        return list(data.get("source_ids") or [])

    def forget(self, source_id: str, *, key: str | None = None) -> dict[str, int]:
        """Counts removed (all zero when nothing matched). While a job holds the server's write lock the
        forget is queued behind it (202): waited for here, as an upload's job is."""
        return self.forget_or_similar(source_id, key=key)[0]

    def forget_or_similar(self, source_id: str, *, key: str | None = None) -> tuple[dict[str, int], list[str]]:
        """:meth:`forget`'s counts and, when nothing matched, the stored IDs the server found like ``source_id``
        (none known for a forget queued behind a job)."""
        nothing = {"sources": 0, "items": 0, "triples": 0}
        try:
            data = self.answer(self.request("DELETE", f"/v1/sources/{_quoted(source_id)}", ok=(200, 202), key=key),
                               key=key)
        except SourceNotFoundError as exc:
            return nothing, exc.similar
        except NotFoundError:
            return nothing, []
        except RemoteError as exc:
            if exc.code != "not_found":  # the queued forget found nothing: as the inline answer's 404
                raise
            return nothing, []
        return {k: int(data.get(k, 0)) for k in ("sources", "items", "triples")}, []

    def forget_files(self, file_ids: list[str], *, key: str | None = None) -> dict:
        """``forget`` of each of ``file_ids`` in one request (``DELETE /v1/sources?file_ids=``; at most a batch of
        ``core/limits.forget_batches``): the counts removed and ``not_found``, those that matched nothing. Queued
        behind a running job (202), it is waited for."""
        response = self.request("DELETE", "/v1/sources", ok=(200, 202), params={"file_ids": list(file_ids)}, key=key)
        return self.answer(response, key=key)

    def import_export(self, body: Iterable[bytes] | IO[bytes], *, progress: Progress | None = None) -> dict[str, Any]:
        """``POST /v1/import``: an export's JSON Lines (a binary file, sent with its length, or an iterable of
        byte chunks) imported into the key's tenant; the report, waited for when the server imports it as a job."""
        response = self.request("POST", "/v1/import", ok=(200, 202), content=body,
                                headers={"Content-Type": "application/x-ndjson"})
        return self.answer(response, progress)

    # ---- upkeep ---------------------------------------------------------------------------------------
    def stats(self, soon_days: float = 1.0) -> dict[str, Any]:
        return self.json("GET", "/v1/stats", params={"soon_days": soon_days})

    def list_sources(self, *, prefix: str = "", kind: str | None = None, offset: int = 0,
                     limit: int = 50) -> list[dict]:
        params = {"prefix": prefix, "offset": offset, "limit": limit, **({"kind": kind} if kind else {})}
        return self.json("GET", "/v1/sources", params=params)["sources"]

    def files_under(self, folder: str, page: int = 1000) -> list[StoredFile]:
        """Every file the server recorded under ``folder`` (``GET /v1/files``)."""
        from agent_memory.ingest.missing import StoredFile

        out: list[StoredFile] = []
        while True:
            response = self.request("GET", "/v1/files", params={"under": folder, "offset": len(out), "limit": page})
            try:
                rows = [StoredFile(str(row["file_id"]), str(row["path"]), row.get("named_by_user") is True)
                        for row in response.json()["files"]]
            except (ValueError, KeyError, TypeError) as exc:
                raise RemoteError(response.status_code, "bad_answer",
                                  f"GET /v1/files?under={folder!r} answered {response.text[:200]!r} ({exc!r})") from None
            out += rows
            if len(rows) < page:
                return out

    def inspect(self, source_id: str, *, full: bool = False) -> dict | None:
        return self.inspect_or_similar(source_id, full=full)[0]

    def inspect_or_similar(self, source_id: str, *, full: bool = False) -> tuple[dict | None, list[str]]:
        """The source as stored, or None and the stored IDs the server found like ``source_id``."""
        try:
            return self.json("GET", f"/v1/sources/{_quoted(source_id)}", params={"full": "true"} if full else None), []
        except SourceNotFoundError as exc:
            return None, exc.similar
        except NotFoundError:
            return None, []

    def delete_session(self, session_id: str, *, forget: bool = False, key: str | None = None) -> dict[str, Any]:
        """The session deleted (``forget``: its archived turns too); queued behind a running job (202),
        waited for here. NotFoundError when the server has no such session."""
        response = self.request("DELETE", f"/v1/sessions/{quote(session_id, safe='')}", ok=(200, 202),
                                params={"forget": str(forget).lower()}, key=key)
        try:
            return self.answer(response, key=key)
        except RemoteError as exc:
            if exc.code == "not_found":
                raise NotFoundError(str(exc)) from None
            raise

    def gc(self) -> dict[str, Any]:
        return self.answer(self.request("POST", "/v1/gc", ok=(200, 202)))

    def check(self, *, repair: bool = False, adopt: bool = False, key: str | None = None) -> dict[str, Any]:
        """``POST /v1/check``: the key's tenant's stores compared (and with ``repair`` mended); with an admin
        ``key``, every tenant's."""
        params = {"repair": str(repair).lower(), "adopt": str(adopt).lower()}
        return self.answer(self.request("POST", "/v1/check", params=params, ok=(200, 202), key=key), key=key)

    # ---- questions and sessions -----------------------------------------------------------------------
    def prompt(self, body: dict[str, Any], *, key: str | None = None) -> PromptResult:
        return prompt_result(self.json("POST", "/v1/prompt", json=body, key=key))

    def search(self, body: dict[str, Any], *, key: str | None = None) -> dict[str, Any]:
        return self.json("POST", "/v1/search", json=body, key=key)

    def add_message(self, session_id: str, message: dict, *, retention: str | None = None,
                    key: str | None = None) -> int:
        body = {"message": message, **({"retention": retention} if retention else {})}
        return int(self.json("POST", f"/v1/sessions/{quote(session_id, safe='')}/messages", json=body, key=key)["seq"])

    def add_messages(self, session_id: str, messages: list[dict], *, retention: list[str | None] | None = None,
                     key: str | None = None) -> list[int]:
        """``POST /v1/sessions/{id}/messages/batch``: all of them in one transaction, or none (one class per
        message in ``retention``; None: unclassified)."""
        classes = retention or [None] * len(messages)
        body = {"messages": [{"message": m, **({"retention": r} if r else {})} for m, r in zip(messages, classes)]}
        path = f"/v1/sessions/{quote(session_id, safe='')}/messages/batch"
        return [int(seq) for seq in self.json("POST", path, json=body, key=key)["seqs"]]

    def view(self, session_id: str, budget: int, *, key: str | None = None) -> dict[str, Any]:
        return self.json("GET", f"/v1/sessions/{quote(session_id, safe='')}/view", params={"budget": budget},
                         key=key)

