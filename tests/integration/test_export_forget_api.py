"""The export, a session's raw messages and the bulk forgets over HTTP, each for the API key's tenant only; and
the CLI's `export`, `import` and `forget --prefix/--all` through the server that owns the data dir."""

from __future__ import annotations

import json
import sys

import httpx
import pytest

from agent_memory.api import create_app
from agent_memory.api.testing import serve_in_thread
from agent_memory.cli import main
from agent_memory.core.config import load_settings
from agent_memory.remote import KEY_ENV
from tests.helpers import api_error, embedded_cli_env, run_cli

A = {"X-API-Key": "key-alpha"}
B = {"X-API-Key": "key-beta"}


@pytest.fixture(scope="module")
def http(tmp_path_factory):
    data = tmp_path_factory.mktemp("export-api")
    settings = load_settings(data_dir=data, triple_extractor="rules", qdrant_url=None, neo4j_uri=None,
                             postgres_url=None, llm_model=None, api_keys={"key-alpha": "alpha", "key-beta": "beta"})
    with serve_in_thread(create_app(settings, warm=False)) as url, httpx.Client(base_url=url, timeout=120) as client:
        for headers, tenant in ((A, "alpha"), (B, "beta")):
            for n in range(3):
                body = {"source_id": f"notes/{tenant}-{n}", "text": f"The {tenant} note {n} names the Heron server."}
                assert client.post("/v1/documents", json=body, headers=headers).status_code == 200
            body = {"source_id": f"keep/{tenant}", "text": f"The {tenant} keeper stays."}
            assert client.post("/v1/documents", json=body, headers=headers).status_code == 200
            for n in range(3):
                message = {"message": {"role": "user", "content": f"{tenant} message {n}", "timestamp": 1767603600 + n}}
                assert client.post("/v1/sessions/chat/messages", json=message, headers=headers).status_code == 200
        yield client


def test_the_export_holds_the_key_s_tenant_only(http):
    response = http.get("/v1/export", headers=A)
    assert response.status_code == 200 and response.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in response.text.splitlines()]
    assert lines[0]["tenant"] == "alpha" and lines[-1] == {"type": "end", "sources": 4, "files": 0, "sessions": 1,
                                                                  "messages": 3}
    assert "beta" not in response.text
    assert api_error(http.get("/v1/export"), 401, "unauthorized")


def test_a_session_s_raw_messages_paged(http):
    page = http.get("/v1/sessions/chat/messages", params={"limit": 2}, headers=A).json()
    assert page["total"] == 3 and page["next_offset"] == 2 and len(page["messages"]) == 2
    assert page["messages"][0] == {"seq": 0, "message": {"role": "user", "content": "alpha message 0"},
                                   "timestamp": 1767603600.0, "retention": None, "status": "active"}
    rest = http.get("/v1/sessions/chat/messages", params={"offset": 2}, headers=A).json()
    assert [m["seq"] for m in rest["messages"]] == [2] and rest["next_offset"] is None
    assert "no session 'nobody'" in api_error(http.get("/v1/sessions/nobody/messages", headers=A), 404)


def test_forgetting_a_prefix_or_the_whole_tenant_over_http(http):
    removed = http.delete("/v1/sources", params={"prefix": "notes/"}, headers=B).json()
    assert removed["prefix"] == "notes/" and removed["sources"] == 3 and removed["items_per_kind"]["chunk"] == 3
    assert http.get("/v1/sources", params={"prefix": "notes/"}, headers=A).json()["total"] == 3  # alpha's stay
    assert http.delete("/v1/sources", params={"prefix": "notes/"}, headers=B).json()["sources"] == 0
    api_error(http.delete("/v1/sources", params={"prefix": ""}, headers=B), 422)
    message = api_error(http.delete("/v1/tenant", params={"confirm": "alpha"}, headers=B), 422, "invalid_request")
    assert "this key's tenant is 'beta', got 'alpha'" in message
    assert http.get("/v1/sources", headers=B).json()["total"] == 4  # refused: the keeper and 3 turns stay
    gone = http.delete("/v1/tenant", params={"confirm": "beta"}, headers=B).json()
    assert gone["tenant"] == "beta" and gone["sessions"] == 1 and gone["messages"] == 3 and gone["sources"] == 4
    assert gone["items_per_kind"] == {"chunk": 1, "summary": 0, "turn": 3}
    assert http.get("/v1/sources", headers=B).json()["total"] == 0 and http.get("/v1/sessions", headers=B).json() == {
        "sessions": []}
    assert http.get("/v1/sources", headers=A).json()["total"] == 3 + 1 + 3 and http.get("/v1/export", headers=A).text.count(
        '"type": "message"') == 3


@pytest.fixture()
def owned(tmp_path, monkeypatch):
    """A data dir with two notes and a session of tenant 'default', owned by a server in this process."""
    data = tmp_path / "data"
    embedded_cli_env(monkeypatch, data)
    monkeypatch.delenv(KEY_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("# A\n\nThe Kestrel team meets on Mondays.\n")
    (tmp_path / "notes" / "b.md").write_text("# B\n\nThe Heron archive lives in Tromso.\n")
    with serve_in_thread(create_app(load_settings(data_dir=data), warm=False), owns=data) as url:
        assert main(["ingest", "notes", "--json"]) == 0
        with httpx.Client(base_url=url) as client:
            message = {"message": {"role": "user", "content": "Ship it on Friday."}}
            assert client.post("/v1/sessions/s1/messages", json=message).status_code == 200
        yield tmp_path


def test_the_cli_exports_and_forgets_through_the_server(owned, capsys):
    out = owned / "default.jsonl"
    code, _, err = run_cli(capsys, ["export", "--out", str(out)])
    assert code == 0 and "working through its HTTP API" in err and "2 sources, 1 sessions, 1 messages" in err, err
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["source_id"] for r in lines if r["type"] == "source"] == ["notes/a.md", "notes/b.md"]
    assert lines[-1]["type"] == "end"
    code, stdout, _ = run_cli(capsys, ["forget", "--prefix", "notes/a"])
    assert code == 0 and json.loads(stdout)["sources"] == 1 and json.loads(stdout)["files"] == 1
    code, stdout, _ = run_cli(capsys, ["forget", "--all", "--tenant", "default", "--yes"])
    assert code == 0 and json.loads(stdout)["sessions"] == 1 and json.loads(stdout)["sources"] == 2  # b.md, s1/m0
    code, stdout, _ = run_cli(capsys, ["list"])
    assert code == 0 and json.loads(stdout)["total"] == 0


def test_the_cli_imports_through_the_server_as_it_does_without_one(owned, capsys, monkeypatch):
    out = owned / "default.jsonl"
    assert run_cli(capsys, ["export", "--out", str(out)])[0] == 0
    code, stdout, err = run_cli(capsys, ["import", str(out)])
    assert code == 0 and "working through its HTTP API" in err, err
    assert "imported into tenant 'default'" in stdout and "sources unchanged  2" in stdout
    assert "sessions unchanged 1" in stdout
    code, stdout, _ = run_cli(capsys, ["forget", "--prefix", "notes/a"])
    assert code == 0 and json.loads(stdout)["files"] == 1
    code, stdout, _ = run_cli(capsys, ["import", str(out), "--json"])
    report = json.loads(stdout)
    assert code == 0 and report["sources_written"] == 1 and report["sources_unchanged"] == 1, report
    assert report["files_recorded"] == 1 and report["complete"] and report["skipped"] == []
    # The file's record came back with it: ingesting the folder through the server reads nothing again.
    code, stdout, _ = run_cli(capsys, ["ingest", "notes", "--json"])
    assert code == 0 and json.loads(stdout)["files_unchanged"] == 2 and json.loads(stdout)["files_ingested"] == 0
    # From stdin, and a bad line is a skip by its number, exit 1, as without a server.
    lines = out.read_text().splitlines()
    stdin = owned / "stdin.jsonl"
    stdin.write_text("\n".join([*lines, "{broken"]) + "\n")
    with stdin.open() as handle:
        monkeypatch.setattr(sys, "stdin", handle)
        code, stdout, _ = run_cli(capsys, ["import", "-"])
    assert code == 1 and f"skipped line {len(lines) + 1}: not JSON" in stdout, stdout


def test_an_import_through_the_server_goes_into_its_tenant_only(owned, capsys):
    out = owned / "acme.jsonl"
    assert run_cli(capsys, ["export", "--out", str(out)])[0] == 0
    lines = out.read_text().splitlines()
    header = {**json.loads(lines[0]), "tenant": "acme"}
    out.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    # Without --tenant an import goes into the tenant the export names, which this server does not serve.
    code, stdout, err = run_cli(capsys, ["import", str(out)])
    assert code == 2 and stdout == ""
    assert "the export is of tenant 'acme'" in err and "--tenant 'default'" in err, err
    code, _, err = run_cli(capsys, ["import", str(out), "--tenant", "acme"])
    assert code == 2 and "serves only its own tenant 'default'" in err, err
    code, stdout, _ = run_cli(capsys, ["import", str(out), "--tenant", "default"])
    assert code == 0 and "imported into tenant 'default'" in stdout
    code, _, err = run_cli(capsys, ["import", str(owned / "notes" / "a.md")])
    assert code != 0 and "not an agent-memory export" in err, err


def test_a_source_edited_in_the_export_and_imported_through_the_server_is_read_from_its_file_again(owned, capsys):
    out = owned / "default.jsonl"
    assert run_cli(capsys, ["export", "--out", str(out)])[0] == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    for record in records:
        if record.get("source_id") == "notes/a.md":
            record["text"] += " EDITED with Zorblax."
    out.write_text("".join(json.dumps(record) + "\n" for record in records))
    code, stdout, _ = run_cli(capsys, ["import", str(out), "--json"])
    report = json.loads(stdout)
    assert code == 0 and report["sources_written"] == 1 and report["files_recorded"] == 0, report
    assert "file 'notes/a.md': 1 of its 1 sources now hold text or metadata other than" in report["warnings"][0], report
    code, stdout, _ = run_cli(capsys, ["ingest", "notes", "--json"])
    assert code == 0 and json.loads(stdout)["files_ingested"] == 1 and json.loads(stdout)["files_unchanged"] == 1
    code, stdout, _ = run_cli(capsys, ["export"])
    assert code == 0 and "Kestrel team meets on Mondays" in stdout and "Zorblax" not in stdout
