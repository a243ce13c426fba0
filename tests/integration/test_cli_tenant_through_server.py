"""`--tenant` through a running server: the API takes a request's tenant from its key alone, so a
server without API keys serves its own tenant only. The CLI says so (no key can help there) and names
the fix; with keys, it names the key to set."""

from __future__ import annotations

import json
from contextlib import contextmanager

import pytest

from agent_memory.api import create_app
from agent_memory.api.testing import serve_in_thread
from agent_memory.core.config import load_settings
from agent_memory.core.errors import ConfigError
from agent_memory.remote import KEY_ENV, RemoteMemory
from tests.helpers import embedded_cli_env, run_cli


@contextmanager
def server(data_dir, **settings):
    # No warm-up: these calls never embed anything, so the model is not loaded.
    app = create_app(load_settings(data_dir=data_dir, **settings), warm=False)
    with serve_in_thread(app) as url:
        yield url


@pytest.fixture()
def cli_env(tmp_path, monkeypatch):
    embedded_cli_env(monkeypatch, tmp_path / "cli-data")
    monkeypatch.delenv(KEY_ENV, raising=False)
    return monkeypatch


@pytest.mark.parametrize("key", [None, "k-stray"])  # a key sent to a server without keys is ignored
def test_a_server_without_keys_says_it_serves_its_own_tenant_only(tmp_path, capsys, cli_env, key):
    if key:
        cli_env.setenv(KEY_ENV, key)
    with server(tmp_path / "served") as url:
        code, out, err = run_cli(capsys, ["--server", url, "list", "--tenant", "acme"])
        assert code == 2 and out == ""
        assert (f"--tenant 'acme': the server at {url} has no API keys and serves only its own tenant 'default'"
                in err), err
        assert "--tenant 'default'" in err and "AGENT_MEMORY_TENANT=acme" in err and "API key in" not in err
        # Its own tenant goes through.
        code, out, _ = run_cli(capsys, ["--server", url, "list", "--tenant", "default"])
        assert code == 0 and json.loads(out)["sources"] == []
        # Found as the data dir's owner, the fix is to stop that server.
        with RemoteMemory(url, owner="pid 1 (agent-memory serve)") as remote, pytest.raises(ConfigError) as refused:
            remote.check_tenant("acme")
        assert "stop the server that owns the data dir" in str(refused.value)
        assert "API key in" not in str(refused.value)


def test_a_server_with_keys_names_the_key_to_set(tmp_path, capsys, cli_env):
    cli_env.setenv(KEY_ENV, "k-globex")
    with server(tmp_path / "served", api_keys={"k-globex": "globex", "k-acme": "acme"}) as url:
        code, _, err = run_cli(capsys, ["--server", url, "stats", "--tenant", "acme"])
        assert code == 2
        assert f"answers for tenant 'globex', the tenant of the API key in {KEY_ENV}" in err, err
        assert "a key bound to 'acme'" in err
        cli_env.setenv(KEY_ENV, "k-acme")
        assert run_cli(capsys, ["--server", url, "list", "--tenant", "acme"])[0] == 0


@pytest.fixture()
def owned(tmp_path, cli_env):
    """A server without API keys owning the CLI's data dir (found through its lock, as `serve`'s), a notes
    file to ingest, and the working directory beside it."""
    data = tmp_path / "cli-data"
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "team.md").write_text("# Team\n\nOrla Vance leads the Kestrel platform team.\n")
    cli_env.chdir(tmp_path)
    with serve_in_thread(create_app(load_settings(data_dir=data), warm=False), owns=data) as url:
        yield url


@pytest.mark.parametrize("argv", [["list"], ["prompt", "Who leads Kestrel?"], ["ingest", "notes"]])
def test_agent_memory_tenant_is_refused_by_a_server_serving_another(owned, capsys, cli_env, argv):
    """AGENT_MEMORY_TENANT is the tenant of CLI commands: through a server that serves only its own, a
    different one is refused (set after the server started, so the server's tenant stays 'default'), and
    nothing is read from or written to the server's tenant."""
    cli_env.setenv("AGENT_MEMORY_TENANT", "acme")
    code, out, err = run_cli(capsys, argv)
    assert code == 2 and out == "", out
    assert (f"AGENT_MEMORY_TENANT='acme': the server at {owned} has no API keys and serves only its own "
            "tenant 'default'") in err, err
    assert "stop the server that owns the data dir" in err and "AGENT_MEMORY_TENANT unset or 'default'" in err
    cli_env.delenv("AGENT_MEMORY_TENANT")
    code, out, _ = run_cli(capsys, ["list"])
    assert code == 0 and json.loads(out)["sources"] == []  # the refused ingest wrote nothing to 'default'


def test_agent_memory_tenant_naming_the_server_s_own_goes_through(owned, capsys, cli_env):
    cli_env.setenv("AGENT_MEMORY_TENANT", "default")
    code, out, _ = run_cli(capsys, ["ingest", "notes", "--json"])
    assert code == 0 and json.loads(out)["files_ingested"] == 1
    code, out, _ = run_cli(capsys, ["list"])
    assert code == 0 and [r["source_id"] for r in json.loads(out)["sources"]] == ["notes/team.md"]
    # --tenant still chooses per call, over the variable, as it does locally.
    cli_env.setenv("AGENT_MEMORY_TENANT", "acme")
    code, out, _ = run_cli(capsys, ["list", "--tenant", "default"])
    assert code == 0 and json.loads(out)["total"] == 1


def test_with_keys_agent_memory_tenant_must_be_the_key_s(tmp_path, capsys, cli_env):
    """With API keys the key decides the tenant: a variable naming another is refused as --tenant is."""
    cli_env.setenv(KEY_ENV, "k-globex")
    with server(tmp_path / "served", api_keys={"k-globex": "globex", "k-acme": "acme"}) as url:
        cli_env.setenv("AGENT_MEMORY_TENANT", "acme")
        code, out, err = run_cli(capsys, ["--server", url, "list"])
        assert code == 2 and out == ""
        assert (f"AGENT_MEMORY_TENANT='acme': the server at {url} answers for tenant 'globex', the tenant of "
                f"the API key in {KEY_ENV}; set {KEY_ENV} to a key bound to 'acme', or unset "
                "AGENT_MEMORY_TENANT to work in 'globex'") in err, err
        cli_env.setenv(KEY_ENV, "k-acme")
        assert run_cli(capsys, ["--server", url, "list"])[0] == 0
        cli_env.delenv("AGENT_MEMORY_TENANT")  # unset: the key's tenant, whatever it is
        cli_env.setenv(KEY_ENV, "k-globex")
        assert run_cli(capsys, ["--server", url, "list"])[0] == 0


def test_a_setting_invalid_here_is_said_and_does_not_stop_a_command_through_a_server(owned, tmp_path, capsys,
                                                                                     cli_env):
    """Through a server, local settings the server applies are its own: one invalid here is said in the one
    note instead of failing the command (without a server it still fails it)."""
    cli_env.setenv("AGENT_MEMORY_EMBEDDING_BATCH_SIZE", "0")
    cli_env.setenv("AGENT_MEMORY_CHUNK_TOKENS", "300")
    code, out, err = run_cli(capsys, ["stats"])
    assert code == 0 and "items" in out, (out, err)
    [note] = [line for line in err.splitlines() if "set here" in line]
    assert note.startswith("note: AGENT_MEMORY_CHUNK_TOKENS, AGENT_MEMORY_TRIPLE_EXTRACTOR set here do not apply "
                           "through a server; AGENT_MEMORY_EMBEDDING_BATCH_SIZE set here is invalid "
                           "(embedding_batch_size: Input should be greater than or equal to 1)"), note
    assert note.endswith("and does not apply through a server: its own settings do"), note
    code, _, local = run_cli(capsys, ["--data-dir", str(tmp_path / "alone"), "stats"])  # no server: it stops
    assert code == 2 and "invalid settings: embedding_batch_size" in local, local
    cli_env.setenv("AGENT_MEMORY_API_KEYS", "not json")  # a client setting, unused by `list`: no stop either
    assert run_cli(capsys, ["list"])[0] == 0


def test_the_tenant_is_checked_through_a_server_even_where_other_settings_are_invalid(owned, capsys, cli_env):
    cli_env.setenv("AGENT_MEMORY_EMBEDDING_BATCH_SIZE", "0")
    cli_env.setenv("AGENT_MEMORY_TENANT", "acme")
    code, out, err = run_cli(capsys, ["list"])
    assert code == 2 and out == ""
    assert "AGENT_MEMORY_TENANT='acme': the server at" in err and "invalid settings" not in err, err


@pytest.mark.parametrize("tenant", ["", "a/b", "acme ", "t\x01x"])
def test_a_tenant_variable_naming_no_tenant_is_refused_through_a_server_as_locally(owned, tmp_path, capsys,
                                                                                   cli_env, tenant):
    cli_env.setenv("AGENT_MEMORY_TENANT", tenant)
    code, out, err = run_cli(capsys, ["list"])
    assert code == 2 and out == ""
    assert "tenant names are non-blank strings" in err and f"got {tenant!r}" in err, err
    code, _, local = run_cli(capsys, ["--data-dir", str(tmp_path / "alone"), "list"])
    assert code == 2 and "tenant names are non-blank strings" in local and f"got {tenant!r}" in local, local


@pytest.mark.parametrize("tenant", ["", " ", "acme ", "a\nb"])
def test_a_tenant_flag_naming_no_tenant_is_refused_through_a_server_as_locally(owned, tmp_path, capsys, tenant):
    """``--tenant ''`` was the default tenant locally and refused through a server: one rule now (core/names.py)."""
    for argv in (["list", "--tenant", tenant], ["--data-dir", str(tmp_path / "alone"), "list", "--tenant", tenant]):
        code, out, err = run_cli(capsys, argv)
        assert code == 2 and out == "", (argv, out)
        assert "tenant names are non-blank strings" in err and f"got {tenant!r}" in err, (argv, err)


def test_an_upload_through_a_server_shows_progress_unless_the_environment_turns_it_off(tmp_path, capsys, cli_env):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "team.md").write_text("# Team\n\nAda runs the Lisbon office.\n", encoding="utf-8")
    with server(tmp_path / "served") as url:
        code, _, err = run_cli(capsys, ["--server", url, "ingest", str(notes)])  # AGENT_MEMORY_NO_PROGRESS=1
        assert code == 0 and "uploading" not in err, err
        cli_env.delenv("AGENT_MEMORY_NO_PROGRESS")
        code, _, err = run_cli(capsys, ["--server", url, "ingest", str(notes)])
        assert code == 0 and "[1/1]" in err and "uploading" in err, err
