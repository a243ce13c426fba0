"""Run the real app under uvicorn on loopback: in a background thread (tests) or as its own
process, the way it is deployed (the benchmarks: a client in the same process would share its GIL)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Iterator

import uvicorn

from agent_memory.core.owner import own
from agent_memory.core.sample_corpus import SAMPLES


@contextmanager
def serve_in_thread(app, host: str = "127.0.0.1", startup_timeout: float = 60.0,
                    owns: Path | None = None) -> Iterator[str]:
    """Yields the base URL once uvicorn accepts connections; shuts the server down on exit. ``owns``: a
    data dir held as ``agent-memory serve`` holds it (owner.lock names this URL), so that the CLI run in
    this process finds the server there and works through it (the app's ``Memory`` shares the hold)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))  # bound before uvicorn starts: no race for a "free" port
    port = sock.getsockname()[1]
    url = f"http://{host}:{port}"
    with ExitStack() as stack:
        stack.callback(sock.close)
        if owns is not None:  # before the lifespan builds the app's Memory, which then shares this hold
            stack.enter_context(own(owns, "serve", address=f"{host}:{port}", url=url))
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="uvicorn", daemon=True)
        thread.start()
        deadline = time.monotonic() + startup_timeout
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("uvicorn exited during startup (see the log above)")
            if time.monotonic() > deadline:
                raise TimeoutError(f"uvicorn did not start within {startup_timeout}s")
            time.sleep(0.05)
        try:
            yield url
        finally:
            server.should_exit = True
            thread.join(timeout=30)


@contextmanager
def serve_in_subprocess(data_dir: Path, env: dict[str, str | None] | None = None, startup_timeout: float = 180.0,
                        log: Path | None = None) -> Iterator[str]:
    """``agent-memory serve`` on a free loopback port in a process of its own, with ``env`` over this
    process's environment (a None value unsets that variable); yields the base URL once /healthz
    answers, and stops the server on exit."""
    import httpx

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    root = Path(__file__).resolve().parents[2]
    environ = {**os.environ, "PYTHONPATH": str(root)}
    for name, value in (env or {}).items():
        if value is None:
            environ.pop(name, None)
        else:
            environ[name] = value
    out = open(log, "w") if log else subprocess.DEVNULL  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_memory.cli", "--data-dir", str(data_dir), "serve", "--host", "127.0.0.1",
         "--port", str(port)],
        cwd=root, env=environ, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + startup_timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"agent-memory serve exited with {proc.returncode} during startup"
                                   + (f" (log: {log})" if log else ""))
            try:
                if httpx.get(f"{url}/healthz", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"agent-memory serve did not answer /healthz within {startup_timeout}s")
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        if log:
            out.close()


def wait_ready(client, timeout: float = 300.0) -> dict:
    """Poll /readyz until 200 (the model loads in the background); raise with the last answer."""
    import httpx

    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = client.get("/readyz")
        except httpx.TransportError:
            # The server closed an idle keep-alive connection as the poll reused it: on a loaded machine the
            # warm-up can hold the GIL past uvicorn's keep-alive timeout. Poll again on a new connection.
            time.sleep(0.25)
            continue
        if last.status_code == 200:
            return last.json()
        time.sleep(0.25)
    raise TimeoutError(f"/readyz not ready after {timeout}s: {last.status_code if last else '-'} "
                       f"{last.text if last else ''}")


def sample_files() -> list[Path]:
    return sorted(p for p in SAMPLES.rglob("*") if p.is_file() and not p.name.startswith("."))


def upload_samples(client, headers: dict[str, str] | None = None, files: list[Path] | None = None) -> list[dict]:
    """Upload the sample corpus through POST /v1/documents, one file each, IDs like the CLI's
    (``samples/docs/...``). Returns the responses' JSON."""
    out = []
    for path in files or sample_files():
        source_id = str(path.relative_to(SAMPLES.parent))
        with path.open("rb") as handle:
            response = client.post("/v1/documents", headers=headers or {},
                                   files={"file": (path.name, handle)}, data={"source_id": source_id})
        if response.status_code != 200:
            raise AssertionError(f"uploading {path} failed: {response.status_code} {response.text}")
        out.append(response.json())
    return out
