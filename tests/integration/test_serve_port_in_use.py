"""`agent-memory serve` (and `mcp --http`) on a port another process listens on: one line naming the port and the fix, exit
2, before the data dir is created or opened and the app starts (uvicorn alone found out after both)."""

from __future__ import annotations

import socket

import pytest

from tests.helpers import embedded_cli_env, run_cli


@pytest.mark.parametrize("command", [["serve"], ["mcp", "--http"]], ids=" ".join)
def test_a_port_in_use_is_refused_before_anything_starts(tmp_path, monkeypatch, capsys, command):
    data_dir = tmp_path / "data"
    embedded_cli_env(monkeypatch, data_dir)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, out, err = run_cli(capsys, [*command, "--host", "127.0.0.1", "--port", str(port)])
    assert code == 2 and out == ""
    assert err.strip() == (f"error: port {port} on 127.0.0.1 is in use (another agent-memory serve? `--port` "
                           "picks another)")
    assert not data_dir.exists()
