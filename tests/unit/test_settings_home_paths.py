"""A leading ~ in a path setting is the home folder (a .env is read by no shell that would expand it)."""

from __future__ import annotations

from pathlib import Path

from agent_memory.core.config import load_settings


def test_a_leading_tilde_is_the_home_folder_never_a_folder_named_tilde(tmp_path, monkeypatch):
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    monkeypatch.setenv("AGENT_MEMORY_MODEL_CACHE_DIR", "~/amcache")
    monkeypatch.setenv("AGENT_MEMORY_DATA_DIR", "~/memory")
    settings = load_settings()
    assert settings.model_cache_dir == home / "amcache" and settings.data_dir == home / "memory"

    monkeypatch.delenv("AGENT_MEMORY_MODEL_CACHE_DIR")
    monkeypatch.delenv("AGENT_MEMORY_DATA_DIR")
    (work / ".env").write_text("AGENT_MEMORY_MODEL_CACHE_DIR=~/from-env\nAGENT_MEMORY_DATA_DIR=~/data\n")
    settings = load_settings()
    assert settings.model_cache_dir == home / "from-env" and settings.data_dir == home / "data"
    assert load_settings(data_dir=Path("~/given")).data_dir == home / "given"
    assert not (work / "~").exists()


def test_other_paths_and_the_cache_switch_are_unchanged(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENT_MEMORY_MODEL_CACHE_DIR", "off")
    monkeypatch.setenv("AGENT_MEMORY_DATA_DIR", "rel/data")
    settings = load_settings()
    assert settings.model_cache_dir is None and settings.data_dir == Path("rel/data")
    monkeypatch.setenv("AGENT_MEMORY_DATA_DIR", "a~b")
    assert load_settings().data_dir == Path("a~b")
