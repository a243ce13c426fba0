"""An empty tenant's answer says it is empty and names the tenants that hold data, to callers allowed
to see them: the CLI and Python yes; over HTTP only when no API key binds callers to one tenant."""

from __future__ import annotations

import json

import httpx
import pytest

from agent_memory.api import create_app
from agent_memory.api.routes_upkeep import NOTE_HEADER
from agent_memory.api.testing import serve_in_thread, wait_ready
from agent_memory.cli import main
from agent_memory.core.config import load_settings
from agent_memory.memory import Memory
from tests.helpers import embedded_cli_env

QUESTION = "Who leads the Kestrel platform team?"


@pytest.fixture()
def data_dir(tmp_path, monkeypatch):
    embedded_cli_env(monkeypatch, tmp_path / "data")
    with Memory(tenant="acme") as memory:
        memory.add("Orla Vance leads the Kestrel platform team.", source_id="notes/team")
    return tmp_path / "data"


def test_python_and_cli_name_the_tenants_with_data(data_dir, capsys):
    with Memory() as memory:
        assert memory.tenants() == ["acme"]
        result = memory.prompt(QUESTION, budget=300)
        [note] = [d.reason for d in result.decisions if d.action == "empty tenant"]
        assert "'default' holds no stored memory" in note and "acme" in note
        assert not [d for d in memory.prompt(QUESTION, budget=300, tenant="acme").decisions
                    if d.action == "empty tenant"]
    for argv in (["list"], ["stats", "--tenant", "default"], ["prompt", QUESTION, "--json"]):
        capsys.readouterr()
        assert main(argv) == 0
        captured = capsys.readouterr()
        assert "tenants with data: acme" in captured.err, argv
        json.loads(captured.out)  # stdout stays the JSON scripts read
    capsys.readouterr()
    assert main(["list", "--tenant", "acme"]) == 0
    assert "note:" not in capsys.readouterr().err


def _empty_answers(data_dir, **settings) -> tuple[str, list[str]]:
    app = create_app(load_settings(data_dir=data_dir, **settings))
    headers = {"X-API-Key": "key-empty"} if settings.get("api_keys") else {}
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=120) as client:
        wait_ready(client)
        listed = client.get("/v1/sources", headers=headers)
        stats = client.get("/v1/stats", headers=headers)
        dump = client.post("/v1/prompt", headers=headers, json={"question": QUESTION, "budget": 300})
        assert listed.status_code == stats.status_code == dump.status_code == 200
        assert listed.json()["sources"] == [] and listed.headers[NOTE_HEADER] == stats.headers[NOTE_HEADER]
        notes = [d["reason"] for d in dump.json()["decisions"] if d["action"] == "empty tenant"]
        return listed.headers[NOTE_HEADER], notes


def test_http_names_other_tenants_only_without_api_keys(data_dir):
    note, [dump_note] = _empty_answers(data_dir, api_keys={"key-empty": "empty", "key-acme": "acme"})
    assert "'empty' holds no stored memory" in note and "acme" not in note and "acme" not in dump_note
    note, [dump_note] = _empty_answers(data_dir)  # no keys, loopback: one operator, the server's tenant
    assert "'default' holds no stored memory" in note and "tenants with data: acme" in note
    assert "acme" in dump_note
