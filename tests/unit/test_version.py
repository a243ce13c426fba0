"""One version, stated by every surface: the command line, the health checks, the OpenAPI document, MCP."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

import agent_memory
from agent_memory.api import create_app
from agent_memory.cli import main
from agent_memory.core.config import load_settings
from agent_memory.core.version import __version__
from agent_memory.mcp_server.server import build_server

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_pyproject_reads_the_one_version():
    text = PYPROJECT.read_text(encoding="utf-8")
    project = text.split("[project]", 1)[1].split("\n[", 1)[0]
    assert not re.search(r'^version\s*=', project, re.M) and 'dynamic = ["version"]' in project
    assert 'version = {attr = "agent_memory.core.version.__version__"}' in text
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", __version__) and agent_memory.__version__ == __version__


def test_the_command_prints_its_version(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"agent-memory {__version__}"


class _State:
    def __init__(self, checks: dict[str, str]) -> None:
        self.checks = checks

    def readiness(self) -> dict[str, str]:
        return self.checks


def test_health_checks_and_openapi_state_the_version(tmp_path):
    app = create_app(load_settings(data_dir=tmp_path), warm=False)  # no lifespan: the routes alone answer
    assert app.openapi()["info"]["version"] == __version__

    async def get(path: str, checks: dict[str, str]) -> httpx.Response:
        app.state.api = _State(checks)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
            return await client.get(path)

    assert asyncio.run(get("/healthz", {})).json() == {"status": "ok", "version": __version__}
    ready = asyncio.run(get("/readyz", {"model": "ok"}))
    assert ready.status_code == 200 and ready.json()["version"] == __version__
    loading = asyncio.run(get("/readyz", {"model": "loading"}))
    assert loading.status_code == 503 and loading.json()["version"] == __version__


def test_the_mcp_server_states_the_version():
    server = build_server(SimpleNamespace(), lambda ctx: None)
    assert server.version == __version__
