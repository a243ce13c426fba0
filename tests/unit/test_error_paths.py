"""Error messages hide the server's data dir where it stands as a path, never inside a word or an ID: a
plain substring replace once read ``metadata/notes.md`` as ``meta<data dir>/notes.md``."""

from __future__ import annotations

from pathlib import Path

from agent_memory.api.errors import hide_data_dir


def test_a_relative_data_dir_inside_a_word_or_an_id_stays(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "catalog.sqlite").touch()
    data = Path("data")
    assert hide_data_dir("no source 'metadata/notes.md'", data) == "no source 'metadata/notes.md'"
    assert hide_data_dir("no job 'nodata'", data) == "no job 'nodata'"
    assert hide_data_dir("the data dir is full", data) == "the data dir is full"
    # A source ID of the client's own that starts like the data dir: nothing in the data dir is named so.
    assert hide_data_dir("no source 'data/notes.md'", data) == "no source 'data/notes.md'"
    assert hide_data_dir("cannot open data/catalog.sqlite: locked", data) == "cannot open <data dir>/catalog.sqlite: locked"
    assert hide_data_dir(f"cannot open '{tmp_path}/data/catalog.sqlite'", data) == "cannot open '<data dir>/catalog.sqlite'"


def test_a_job_id_holding_the_data_dirs_name_stays(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d1").mkdir()
    assert hide_data_dir("no job '4c2eb0e67d19486c'", Path("d1")) == "no job '4c2eb0e67d19486c'"


def test_an_absolute_data_dir_is_hidden_as_a_path_only():
    data = Path("/abs/path/to/data")
    assert hide_data_dir("disk I/O error on /abs/path/to/data/catalog.sqlite", data) == (
        "disk I/O error on <data dir>/catalog.sqlite")
    assert hide_data_dir("data dir /abs/path/to/data is held", data) == "data dir <data dir> is held"
    assert hide_data_dir("'/abs/path/to/data'.", data) == "'<data dir>'."
    # Another folder whose name starts or ends like it is no mention of it.
    assert hide_data_dir("/abs/path/to/data2/x and /abs/path/to/data.bak", data) == (
        "/abs/path/to/data2/x and /abs/path/to/data.bak")
    assert hide_data_dir("/srv/abs/path/to/data/x", data) == "/srv/abs/path/to/data/x"
