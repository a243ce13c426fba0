"""``agent-memory ingest`` honours ``.gitignore`` rules by default (ingest/ignore.py), through the CLI on the
real embedded stores and through the server that owns the data dir: ignored files are counted, not stored;
``--no-ignore`` reads them; a file named alone is read although ignored; a stored file the walk now ignores
is forgotten ("removed, now ignored") unless ``--keep-missing``."""

from __future__ import annotations

import json

import pytest

from agent_memory.api import create_app
from agent_memory.api.testing import serve_in_thread
from agent_memory.core.config import load_settings
from agent_memory.remote import KEY_ENV
from tests.helpers import embedded_cli_env, run_cli

SOURCES = ["repo/README.md", "repo/src/app.py"]


@pytest.fixture()
def repo(tmp_path, monkeypatch):
    """A repository with build output, a dependency folder and logs its .gitignore leaves out."""
    embedded_cli_env(monkeypatch, tmp_path / "data")
    root = tmp_path / "repo"
    for name, text in {
        ".git/HEAD": "ref: refs/heads/main\n",
        ".gitignore": "node_modules/\n*.log\n",
        "README.md": "# Kestrel\n\nOrla Vance leads the Kestrel platform team in Lyon.\n",
        "src/app.py": "def greet():\n    return 'The Heron service answers on port 8080.'\n",
        "src/debug.log": "DEBUG the Osprey cache warmed in 3 s\n",
        "node_modules/left-pad/README.md": "# left-pad\n\nPads strings on the left.\n",
        "build/out.md": "# Build\n\nGenerated: the Pelican bundle, 40 kB.\n",
    }.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    return root


def ingest(capsys, *argv: str) -> tuple[int, dict]:
    code, out, _ = run_cli(capsys, ["ingest", *argv, "--json"])
    return code, json.loads(out)


def listed(capsys) -> list[str]:
    code, out, _ = run_cli(capsys, ["list"])
    assert code == 0
    return [r["source_id"] for r in json.loads(out)]


def test_ignored_files_are_counted_not_stored_and_no_ignore_reads_them(repo, capsys):
    code, report = ingest(capsys, "repo", "-r")
    assert code == 0 and report["files_ingested"] == 3 and report["files_ignored"] == 1, report
    assert report["ignored_folders"] == ["repo/node_modules"] and not report["files_skipped"]
    assert listed(capsys) == ["repo/README.md", "repo/build/out.md", "repo/src/app.py"]
    code, out, _ = run_cli(capsys, ["-v", "ingest", "repo", "-r"])
    assert code == 0 and "files ignored    1 (and 1 folders not walked)" in out and "ignored folder: repo/node_modules" in out
    code, report = ingest(capsys, "repo", "-r", "--no-ignore")
    assert code == 0 and report["files_ignored"] == 0 and report["ignored_folders"] == [] and report["files_ingested"] == 2
    assert "repo/src/debug.log" in listed(capsys) and "repo/node_modules/left-pad/README.md" in listed(capsys)


def test_a_subfolder_honours_the_repository_roots_rules(repo, capsys):
    code, report = ingest(capsys, "repo/src", "-r")
    assert code == 0 and report["files_ingested"] == 1 and report["files_ignored"] == 1, report
    assert listed(capsys) == ["src/app.py"]


def test_a_file_named_alone_is_read_although_ignored(repo, capsys):
    code, report = ingest(capsys, "repo", "-r", "repo/src/debug.log")
    assert code == 0 and report["files_ignored"] == 0 and report["files_ingested"] == 4, report
    assert report["now_ignored"] == [] and "debug.log" in listed(capsys)  # named alone: by its name
    # Named with its folder again, it stays; a folder job alone mirrors what its walk reads, so it goes.
    code, report = ingest(capsys, "repo", "-r", "repo/src/debug.log")
    assert code == 0 and report["files_unchanged"] == 4 and report["now_ignored"] == []
    code, report = ingest(capsys, "repo", "-r")
    assert code == 0 and report["now_ignored"] == ["debug.log"] and "debug.log" not in listed(capsys)


def _now_ignored(repo, capsys, *server: str) -> None:
    """Stored, then build/ added to .gitignore: kept with --keep-missing, else forgotten as now ignored."""
    assert ingest(capsys, *server, "repo", "-r")[0] == 0
    assert "repo/build/out.md" in listed(capsys)
    (repo / ".gitignore").write_text("node_modules/\n*.log\nbuild/\n")
    code, report = ingest(capsys, *server, "repo", "-r", "--keep-missing")
    assert code == 0 and report["now_ignored"] == [] and "repo/build/out.md" in listed(capsys)
    code, out, _ = run_cli(capsys, [*server, "-v", "ingest", "repo", "-r"])
    assert code == 0 and "removed, now ignored: 1" in out and "now ignored: repo/build/out.md" in out, out
    assert listed(capsys) == SOURCES
    code, report = ingest(capsys, *server, "repo", "-r")  # nothing left to remove; the README stays
    assert code == 0 and report["now_ignored"] == [] and report["gone_from_disk"] == []
    assert listed(capsys) == SOURCES


def test_a_stored_file_now_ignored_is_forgotten_unless_kept(repo, capsys):
    _now_ignored(repo, capsys)
    code, report = ingest(capsys, "repo", "-r", "--no-ignore")  # read again: nothing is ignored
    assert code == 0 and "repo/build/out.md" in listed(capsys)
    code, report = ingest(capsys, "repo", "-r")
    assert [str(repo / "build" / "out.md"), "removed: now ignored"] in [list(f) for f in report["files"]]


def test_a_stored_file_now_ignored_is_forgotten_through_the_server(repo, capsys, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    data = repo.parent / "data"
    with serve_in_thread(create_app(load_settings(data_dir=data), warm=False), owns=data):
        code, out, err = run_cli(capsys, ["ingest", "repo", "-r", "--json"])  # the walk is the client's
        assert code == 0 and "working through its HTTP API" in err and json.loads(out)["files_ignored"] == 1
        _now_ignored(repo, capsys)
