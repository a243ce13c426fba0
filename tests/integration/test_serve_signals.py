"""`agent-memory serve` stopped by SIGTERM (systemd, docker stop) or SIGINT (Ctrl-C) shuts down gracefully
and exits 0: a service manager must not mark a clean stop as a failure."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from agent_memory.core.owner import current_holder

ROOT = Path(__file__).resolve().parents[2]
ENV = {"AGENT_MEMORY_LLM_MODEL": "", "AGENT_MEMORY_QDRANT_URL": None, "AGENT_MEMORY_NEO4J_URI": None,
       "AGENT_MEMORY_POSTGRES_URL": None, "AGENT_MEMORY_API_KEYS": None, "AGENT_MEMORY_NO_PROGRESS": "1"}


STAMPED = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} INFO ")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_serve(data_dir: Path, port: int, log: Path, command: tuple[str, ...] = ("serve",)) -> subprocess.Popen:
    environ = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name, value in ENV.items():
        environ.pop(name, None) if value is None else environ.__setitem__(name, value)
    with log.open("w") as out:
        return subprocess.Popen([sys.executable, "-m", "agent_memory.cli", "--data-dir", str(data_dir), *command,
                                 "--host", "127.0.0.1", "--port", str(port)],
                                cwd=ROOT, env=environ, stdout=out, stderr=subprocess.STDOUT)


def wait_up(proc: subprocess.Popen, url: str, timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"serve exited with {proc.returncode} during startup"
        try:
            if httpx.get(f"{url}/healthz", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise TimeoutError("serve did not answer /healthz")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=lambda sig: sig.name)
def test_a_stop_signal_is_a_clean_exit(sig, tmp_path):
    data_dir, port, log = tmp_path / "data", free_port(), tmp_path / "serve.log"
    proc = start_serve(data_dir, port, log)
    try:
        wait_up(proc, f"http://127.0.0.1:{port}")
        assert httpx.get(f"http://127.0.0.1:{port}/v1/whoami", timeout=30).status_code == 200
        proc.send_signal(sig)
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    text = log.read_text()
    assert code == 0, text
    assert "Finished server process" in text and "interrupted" not in text and "Traceback" not in text, text
    assert "GET /healthz" not in text  # answered health checks stay out of the access log (api/server.py)
    # README: serve stamps each line with its time, uvicorn's own (start, stop, the access log) too.
    uvicorn_lines = [line for line in text.splitlines() if "server process" in line or "GET /v1/whoami" in line]
    assert len(uvicorn_lines) == 3 and all(STAMPED.match(line) for line in uvicorn_lines), text
    assert current_holder(data_dir) is None  # the data dir is free again


def test_mcp_over_http_stopped_by_sigterm_exits_0(tmp_path):
    """`mcp --http` ran uvicorn.run, which re-raised the signal after its clean shutdown: exit 143."""
    data_dir, port, log = tmp_path / "data", free_port(), tmp_path / "mcp.log"
    proc = start_serve(data_dir, port, log, ("mcp", "--http"))
    try:
        deadline = time.monotonic() + 180
        while True:  # up once its port accepts a connection
            assert proc.poll() is None, log.read_text()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 0, log.read_text()
    assert current_holder(data_dir) is None
