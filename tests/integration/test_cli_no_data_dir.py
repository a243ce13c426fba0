"""Commands that read (or remove) what is stored never create a data dir: on one that does not exist they
say so, naming it, and exit 1; `ingest` is what creates it."""

from __future__ import annotations

import json

import pytest

from tests.helpers import embedded_cli_env, run_cli

NOT_CREATING = [["stats"], ["list"], ["inspect", "notes/x.md"], ["prompt", "Who is the CFO?"],
                ["forget", "notes/x.md"], ["gc"]]


@pytest.mark.parametrize("argv", NOT_CREATING, ids=lambda argv: argv[0])
def test_a_missing_data_dir_is_named_not_created(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    embedded_cli_env(monkeypatch, tmp_path / "unused")
    monkeypatch.setenv("AGENT_MEMORY_DATA_DIR", "data")  # relative, as the default: the message says where
    code, out, err = run_cli(capsys, argv)
    assert code == 1 and out == ""
    assert err.strip() == (f"error: no data dir at {tmp_path.resolve() / 'data'}: nothing is stored there yet "
                           "(`agent-memory ingest` creates it; --data-dir or AGENT_MEMORY_DATA_DIR choose another)")
    assert list(tmp_path.iterdir()) == []

    code, _, err = run_cli(capsys, ["--data-dir", str(tmp_path / "elsewhere"), *argv])
    assert code == 1 and f"no data dir at {tmp_path / 'elsewhere'}:" in err
    assert list(tmp_path.iterdir()) == []


def test_the_empty_tenant_note_names_the_data_dir(tmp_path, monkeypatch, capsys):
    data = tmp_path / "data"
    data.mkdir()  # exists, holds nothing yet: the stores open, and the note says where it looked
    embedded_cli_env(monkeypatch, data)
    code, out, err = run_cli(capsys, ["list"])
    assert code == 0 and json.loads(out)["sources"] == [] and json.loads(out)["total"] == 0
    assert f"tenant 'default' holds no stored memory in the data dir {data.resolve()}; no tenant holds any yet" in err
