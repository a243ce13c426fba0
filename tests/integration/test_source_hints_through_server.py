"""The hint for a source ID that matches nothing ("similar stored IDs: ...") survives a server: the API's 404 for
``GET`` and ``DELETE /v1/sources/{id}`` lists the stored IDs that look like it (``similar``, and in the message),
and `agent-memory inspect` / `forget` through the server that owns the data dir, or through ``--server``, print
the same line as they do on the stores themselves."""

from __future__ import annotations

import json

import httpx
import pytest

from agent_memory.api import create_app
from agent_memory.api.testing import serve_in_thread
from agent_memory.core.config import load_settings
from tests.helpers import api_error, embedded_cli_env, run_cli

MISSED = "corpus/notes/team.md"  # the path from the folder above, not the ID ingestion gave it
HINT = "similar stored IDs: notes/team.md"


@pytest.fixture()
def stored(tmp_path, monkeypatch, capsys):
    """``notes/team.md`` stored by the CLI on its own stores, the working folder above ``corpus``."""
    embedded_cli_env(monkeypatch, tmp_path / "data")
    (tmp_path / "corpus" / "notes").mkdir(parents=True)
    (tmp_path / "corpus" / "notes" / "team.md").write_text("# Team\n\nOrla Vance leads the Kestrel platform team.\n")
    monkeypatch.chdir(tmp_path / "corpus")
    assert run_cli(capsys, ["ingest", "notes"])[0] == 0
    monkeypatch.chdir(tmp_path)
    return tmp_path / "data"


def missed(capsys, argv: list[str]) -> str:
    """The one stderr line of a CLI command that found nothing under ``MISSED``."""
    code, out, err = run_cli(capsys, argv)
    assert code == 1, (out, err)
    lines = [line for line in err.splitlines() if not line.startswith("note: ")]
    assert len(lines) == 1, err
    return lines[0]


def test_inspect_and_forget_hint_alike_on_the_stores_and_through_a_server(stored, capsys):
    local = {command: missed(capsys, [command, MISSED]) for command in ("inspect", "forget")}
    assert all(line.endswith(HINT) for line in local.values()), local
    app = create_app(load_settings(data_dir=stored, triple_extractor="rules"), warm=False)
    with serve_in_thread(app, owns=stored) as url:
        for command, line in local.items():
            assert missed(capsys, [command, MISSED]) == line  # found as the data dir's owner
            assert missed(capsys, ["--server", url, command, MISSED]) == line
        code, out, _ = run_cli(capsys, ["inspect", "notes/team.md"])  # nothing was forgotten by a guess
        assert code == 0 and json.loads(out)["source_id"] == "notes/team.md"


def test_the_apis_404_lists_the_similar_ids(stored):
    app = create_app(load_settings(data_dir=stored, triple_extractor="rules"), warm=False)
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=120) as http:
        for method in ("GET", "DELETE"):
            answer = http.request(method, f"/v1/sources/{MISSED}")
            message = api_error(answer, 404, "not_found")
            assert message == f"no source {MISSED!r} for this tenant; {HINT}", message
            assert answer.json()["similar"] == ["notes/team.md"]
        answer = http.get("/v1/sources/zzzz-nothing-like-it")
        assert api_error(answer, 404, "not_found") == "no source 'zzzz-nothing-like-it' for this tenant"
        assert answer.json()["similar"] == []
        assert http.get("/v1/sources/notes/team.md").status_code == 200
