"""Ingesting into a data dir embedded by other models fails once, at the start of the job, with the
way out (`agent-memory reindex`): before any file is read or embedded, in the CLI (exit 2, one line),
the Python API and the HTTP API (503 reindex_required, as a question on that data dir answers)."""

from __future__ import annotations

import httpx
import pytest

from agent_memory.api import create_app
from agent_memory.api.testing import serve_in_thread
from agent_memory.cli import main
from agent_memory.core.config import load_settings
from agent_memory.core.errors import ConfigError
from agent_memory.memory import Memory
from agent_memory.remote import KEY_ENV
from agent_memory.services import read_index_format, write_index_format
from tests.helpers import embedded_cli_env

# What a data dir embedded with other models records (agent_memory/services.py).
OTHER_MODELS = {"default_model": "some-other-model", "multilingual_model": None, "multilingual_share": 0.0}


@pytest.fixture()
def embedded_elsewhere(tmp_path, monkeypatch):
    """A folder of two notes and a data dir whose index format names other embedding models."""
    embedded_cli_env(monkeypatch, tmp_path / "data")
    monkeypatch.delenv(KEY_ENV, raising=False)
    (tmp_path / "notes").mkdir()
    for name in ("a.md", "b.md"):
        (tmp_path / "notes" / name).write_text(f"# {name}\n\nPump P-7 moves 40 litres a minute.\n")
    (tmp_path / "data").mkdir()
    write_index_format(tmp_path / "data", {"embedding": OTHER_MODELS})
    # Any file read means the check came too late.
    monkeypatch.setattr("agent_memory.ingest.file_ingestion.read_path", _no_read)
    return tmp_path


def _no_read(*args, **kwargs):
    raise AssertionError("a file was read after the data dir was found to hold other models")


def test_the_cli_refuses_once_before_reading_any_file(embedded_elsewhere, capsys):
    data = embedded_elsewhere / "data"
    code = main(["ingest", str(embedded_elsewhere / "notes"), "-r"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "agent-memory reindex" in lines[0]
    assert "Traceback" not in captured.err
    assert not (data / "embedding-cache.sqlite").exists()  # nothing embedded
    assert read_index_format(data) == {"embedding": OTHER_MODELS}  # and the marker left as it was


def test_the_python_api_refuses_add_paths_and_add_file(embedded_elsewhere):
    with Memory(data_dir=embedded_elsewhere / "data") as memory:
        with pytest.raises(ConfigError, match="agent-memory reindex"):
            memory.add_paths([embedded_elsewhere / "notes"], recursive=True)
        with pytest.raises(ConfigError, match="agent-memory reindex"):
            memory.add_file(embedded_elsewhere / "notes" / "a.md")


def test_an_upload_is_refused_as_a_question_is_and_the_cli_stops_once(embedded_elsewhere, capsys):
    app = create_app(load_settings(data_dir=embedded_elsewhere / "data", triple_extractor="rules"), warm=False)
    with serve_in_thread(app) as url:
        answer = httpx.post(f"{url}/v1/documents", files={"file": ("a.md", b"# a\n\nPump P-7.\n")}, timeout=60)
        assert answer.status_code == 503
        error = answer.json()["error"]
        assert error["code"] == "reindex_required" and "agent-memory reindex" in error["message"]
        assert str(embedded_elsewhere) not in error["message"]  # the server's paths stay its own
        text = httpx.post(f"{url}/v1/documents", json={"text": "Pump P-7.", "source_id": "p7"}, timeout=60)
        assert text.status_code == 503 and text.json()["error"]["code"] == "reindex_required"

        code = main(["--server", url, "ingest", str(embedded_elsewhere / "notes"), "-r", "--keep-missing"])
        captured = capsys.readouterr()
        assert code == 2 and captured.out == ""
        assert captured.err.count("agent-memory reindex") == 1, captured.err
