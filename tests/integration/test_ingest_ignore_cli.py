"""``agent-memory ingest`` honours ``.gitignore`` rules by default (ingest/ignore.py), through the CLI on the
real embedded stores and through the server that owns the data dir: ignored files are counted, not stored;
``--no-ignore`` reads them; a file named alone is read although ignored, and kept by a later walk that
ignores it; a stored file the walk now ignores is forgotten ("removed, now ignored") unless
``--keep-missing``."""

from __future__ import annotations

import contextlib
import json

import pytest

from agent_memory.api import create_app
from agent_memory.api.testing import serve_in_thread
from agent_memory.core.config import load_settings
from agent_memory.remote import KEY_ENV
from tests.helpers import embedded_cli_env, run_cli, write_files

SOURCES = ["repo/README.md", "repo/src/app.py"]


@pytest.fixture()
def repo(tmp_path, monkeypatch):
    """A repository with build output, a dependency folder and logs its .gitignore leaves out."""
    embedded_cli_env(monkeypatch, tmp_path / "data")
    root = write_files(tmp_path / "repo", {
        ".git/HEAD": "ref: refs/heads/main\n",
        ".gitignore": "node_modules/\n*.log\n",
        "README.md": "# Kestrel\n\nOrla Vance leads the Kestrel platform team in Lyon.\n",
        "src/app.py": "def greet():\n    return 'The Heron service answers on port 8080.'\n",
        "src/debug.log": "DEBUG the Osprey cache warmed in 3 s\n",
        "node_modules/left-pad/README.md": "# left-pad\n\nPads strings on the left.\n",
        "build/out.md": "# Build\n\nGenerated: the Pelican bundle, 40 kB.\n",
    })
    monkeypatch.chdir(tmp_path)
    return root


def ingest(capsys, *argv: str) -> tuple[int, dict]:
    code, out, _ = run_cli(capsys, ["ingest", *argv, "--json"])
    return code, json.loads(out)


def listed(capsys) -> list[str]:
    code, out, _ = run_cli(capsys, ["list"])
    assert code == 0
    return [r["source_id"] for r in json.loads(out)["sources"]]


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


def _named_file_stays(repo, capsys, *server: str) -> None:
    code, report = ingest(capsys, *server, "repo", "-r", "repo/src/debug.log")
    assert code == 0 and report["files_ignored"] == 0 and report["files_ingested"] == 4, report
    assert report["now_ignored"] == [] and "debug.log" in listed(capsys)  # named alone: by its name
    code, report = ingest(capsys, *server, "repo", "-r", "repo/src/debug.log")
    assert code == 0 and report["files_unchanged"] == 4 and report["now_ignored"] == []
    # A walk of its folder alone leaves it out, but the user named it once (as `git add -f`): it stays.
    code, report = ingest(capsys, *server, "repo", "-r")
    assert code == 0 and report["now_ignored"] == [] and report["files_ignored"] == 1, report
    assert "debug.log" in listed(capsys)
    # Gone from disk, it goes as any other file of the folder does.
    (repo / "src" / "debug.log").unlink()
    code, report = ingest(capsys, *server, "repo", "-r")
    assert code == 0 and report["gone_from_disk"] == ["debug.log"] and "debug.log" not in listed(capsys), report


def test_a_file_named_alone_is_read_although_ignored_and_a_walk_keeps_it(repo, capsys):
    _named_file_stays(repo, capsys)


def test_a_stored_file_named_later_is_kept_by_the_walk_that_ignores_it(repo, capsys):
    """Walked first, then named (unchanged: nothing read again), then ignored: naming it kept it."""
    assert ingest(capsys, "repo", "-r")[0] == 0
    code, report = ingest(capsys, "repo/build/out.md")
    assert code == 0 and report["files_unchanged"] == 1, report
    (repo / ".gitignore").write_text("node_modules/\n*.log\nbuild/\n")
    code, report = ingest(capsys, "repo", "-r")
    assert code == 0 and report["now_ignored"] == [] and "repo/build/out.md" in listed(capsys), report


def _named_folder_stays(repo, capsys, *server: str) -> None:
    """build/ is ignored (.gitignore: build/); named, it is walked, and what it held is the user's: a walk of
    the repository keeps it; a file added to build/ later, never named, is not read by that walk."""
    (repo / ".gitignore").write_text("node_modules/\n*.log\nbuild/\n")
    code, report = ingest(capsys, *server, "repo/build", "-r")
    assert code == 0 and report["files_ingested"] + report["files_unchanged"] == 1, report
    stored = [sid for sid in listed(capsys) if sid.endswith("out.md")]
    assert len(stored) == 1, listed(capsys)
    (repo / "build" / "later.md").write_text("# Later\n\nThe Crane depot opens at six.\n")
    code, report = ingest(capsys, *server, "repo", "-r")
    assert code == 0 and report["now_ignored"] == [] and stored[0] in listed(capsys), report
    assert not [sid for sid in listed(capsys) if sid.endswith("later.md")]


def test_a_folder_named_although_ignored_stays_when_its_repository_is_walked(repo, capsys):
    _named_folder_stays(repo, capsys)


def test_a_named_file_and_folder_stay_through_the_server(repo, capsys, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    data = repo.parent / "data"
    with serve_in_thread(create_app(load_settings(data_dir=data), warm=False), owns=data):
        _named_file_stays(repo, capsys)
        _named_folder_stays(repo, capsys)


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


def _plain(root) -> None:
    """No repository: plain/'s rules leave out notes/c.txt (.gitignore) and notes/draft2.md (.ignore)."""
    write_files(root, {
        "outer/plain/.gitignore": "*.txt\n", "outer/plain/.ignore": "draft*\n",
        "outer/plain/top.md": "# Plain\n\nThe Kestrel notes start here.\n",
        "outer/plain/notes/a.md": "# A\n\nOrla Vance leads the Kestrel platform team.\n",
        "outer/plain/notes/c.txt": "scratch: the Osprey cache warmed in 3 s\n",
        "outer/plain/notes/draft2.md": "# Draft\n\nThe Pelican bundle is 40 kB.\n",
    })


def _in_order(capsys, folders: list[str], *server: str) -> set[str]:
    """Each folder ingested in turn, then the first again; each job leaves out the two files plain/'s rules
    ignore, stores neither, and removes nothing: the stored files, by their path under outer/plain."""
    for folder in [*folders, folders[0]]:
        code, report = ingest(capsys, *server, folder, "-r")
        assert code == 0 and report["files_ignored"] == 2 and report["now_ignored"] == [], (folder, report)
    ids = listed(capsys)
    assert not [i for i in ids if i.endswith(("c.txt", "draft2.md"))], ids
    return {i.removeprefix("plain/") for i in ids}


@pytest.mark.parametrize("through_server", [False, True])
def test_without_a_repository_the_verdict_does_not_depend_on_the_folder_named(tmp_path, monkeypatch, capsys,
                                                                             through_server):
    _plain(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(KEY_ENV, raising=False)
    stored = []
    for order in (["outer/plain", "outer/plain/notes"], ["outer/plain/notes", "outer/plain"]):
        with _data_dir(tmp_path / f"data-{len(stored)}", monkeypatch, capsys, through_server):
            stored.append(_in_order(capsys, order))
    assert stored[0] == stored[1] == {"top.md", "notes/a.md"}


@contextlib.contextmanager
def _data_dir(data, monkeypatch, capsys, through_server: bool):
    """A fresh data dir for the CLI, served by a server that owns it when ``through_server`` (the walk is the
    client's, the stored IDs the server's)."""
    embedded_cli_env(monkeypatch, data)
    if not through_server:
        yield
        return
    with serve_in_thread(create_app(load_settings(data_dir=data), warm=False), owns=data):
        code, _, err = run_cli(capsys, ["list"])
        assert code == 0 and "working through its HTTP API" in err
        yield


@pytest.mark.parametrize("through_server", [False, True])
def test_without_a_repository_the_rules_reach_up_to_the_base_the_ids_keep(tmp_path, monkeypatch, capsys,
                                                                          through_server):
    """outer/'s rules are the project's when IDs are named from outer (ingest outer/plain first), not when they
    are named from outer/plain (ingest outer/plain/notes first); either way every later job agrees."""
    _plain(tmp_path)
    (tmp_path / "outer" / ".gitignore").write_text("*.rst\n")
    (tmp_path / "outer" / "plain" / "notes" / "e.rst").write_text("The Heron service answers on port 8080.\n")
    monkeypatch.chdir(tmp_path)
    for order, expected in ((["outer/plain", "outer/plain/notes"], ["plain/notes/a.md", "plain/top.md"]),
                            (["outer/plain/notes", "outer/plain"], ["notes/a.md", "notes/e.rst", "top.md"])):
        with _data_dir(tmp_path / f"data-{len(order[0])}", monkeypatch, capsys, through_server):
            for folder in [*order, *order]:
                code, report = ingest(capsys, folder, "-r")
                assert code == 0 and report["now_ignored"] == [], (folder, report)
            assert listed(capsys) == expected
