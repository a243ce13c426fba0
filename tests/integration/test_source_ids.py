"""Source IDs through the CLI and the Python API: relative to a base, the same from any working folder,
never absolute; `forget` takes what `ingest` took and says what it matched, or hints when nothing did."""

from __future__ import annotations

import json

import pytest

from agent_memory.memory import Memory
from tests.helpers import embedded_cli_env, run_cli


@pytest.fixture()
def root(tmp_path, monkeypatch):
    embedded_cli_env(monkeypatch, tmp_path / "data")
    notes = tmp_path / "corpus" / "notes"
    notes.mkdir(parents=True)
    (notes / "team.md").write_text("# Team\n\nOrla Vance leads the Kestrel platform team.\n")
    (tmp_path / "elsewhere").mkdir()
    return tmp_path


def listed(capsys) -> list[str]:
    return [r["source_id"] for r in json.loads(run_cli(capsys, ["list"])[1])["sources"]]


def test_the_same_folder_gets_the_same_ids_from_any_working_folder(root, capsys, monkeypatch):
    monkeypatch.chdir(root)
    assert run_cli(capsys, ["ingest", "corpus/notes", "--json"])[0] == 0
    assert listed(capsys) == ["notes/team.md"]
    monkeypatch.chdir(root / "elsewhere")  # the absolute path, from another folder
    code, out, _ = run_cli(capsys, ["ingest", str(root / "corpus" / "notes"), "--json"])
    assert code == 0 and json.loads(out)["files_unchanged"] == 1
    monkeypatch.chdir(root / "corpus" / "notes")  # `.` inside the folder
    code, out, _ = run_cli(capsys, ["ingest", ".", "--json"])
    assert code == 0 and json.loads(out)["files_unchanged"] == 1
    # One file refreshed alone keeps the folder's ID when given the same base.
    monkeypatch.chdir(root / "corpus")
    code, out, _ = run_cli(capsys, ["ingest", "notes/team.md", "--base", ".", "--json"])
    assert code == 0 and json.loads(out)["files_unchanged"] == 1
    assert listed(capsys) == ["notes/team.md"]
    # Given alone with no base, a file its folder's job stored keeps that ID (the manifest's path matches).
    monkeypatch.chdir(root / "elsewhere")
    code, out, _ = run_cli(capsys, ["ingest", str(root / "corpus" / "notes" / "team.md"), "--json"])
    assert code == 0 and json.loads(out)["files_unchanged"] == 1
    assert listed(capsys) == ["notes/team.md"]
    # A path outside --base is a usage error naming it.
    code, _, err = run_cli(capsys, ["ingest", str(root / "elsewhere"), "--base", str(root / "corpus")])
    assert code == 2 and "not under the base" in err and "elsewhere" in err


def test_a_subfolder_job_names_its_files_as_the_store_already_names_them(root, capsys, monkeypatch):
    """An ID does not depend on the folder a job starts from: after ``ingest notes -r`` stored
    ``notes/sub/deep.md``, ``ingest notes/sub -r`` refreshes it (it stored a second ``sub/deep.md``), and
    a new file there is named from the same base. ``--base`` still names IDs afresh."""
    sub = root / "corpus" / "notes" / "sub"
    sub.mkdir()
    (sub / "deep.md").write_text("# Deep\n\nThe Osprey archive lives on the Tromso server.\n")
    monkeypatch.chdir(root / "corpus")
    assert run_cli(capsys, ["ingest", "notes", "-r", "--json"])[0] == 0
    assert listed(capsys) == ["notes/sub/deep.md", "notes/team.md"]
    (sub / "deep.md").write_text("# Deep\n\nThe Osprey archive moved to the Bergen server.\n")
    (sub / "new.md").write_text("# New\n\nThe Heron budget is 40,000 euros.\n")
    monkeypatch.chdir(sub)
    code, out, _ = run_cli(capsys, ["ingest", ".", "-r", "--json"])
    assert code == 0 and json.loads(out)["files_ingested"] == 2
    assert listed(capsys) == ["notes/sub/deep.md", "notes/sub/new.md", "notes/team.md"]
    code, out, _ = run_cli(capsys, ["ingest", "new.md", "--json"])  # a file given alone, from its own folder
    assert code == 0 and json.loads(out)["files_unchanged"] == 1
    code, out, _ = run_cli(capsys, ["ingest", ".", "--base", ".", "--json"])
    assert code == 0 and listed(capsys) == ["deep.md", "new.md", "notes/sub/deep.md", "notes/sub/new.md",
                                            "notes/team.md"]


@pytest.mark.parametrize("spelling", ["./", "absolute", "id"])
def test_forget_takes_what_ingest_took_and_says_what_it_matched(root, capsys, monkeypatch, spelling):
    monkeypatch.chdir(root / "corpus")
    assert run_cli(capsys, ["ingest", "notes"])[0] == 0
    given = {"./": "./notes/team.md", "absolute": str(root / "corpus" / "notes" / "team.md"),
             "id": "notes/team.md"}[spelling]
    code, out, _ = run_cli(capsys, ["forget", given])
    result = json.loads(out)
    assert code == 0 and result["matched"] == ["notes/team.md"] and result["items"] >= 1
    assert listed(capsys) == []


def test_forget_with_no_match_hints_at_the_stored_ids(root, capsys, monkeypatch):
    monkeypatch.chdir(root)
    assert run_cli(capsys, ["ingest", "corpus/notes"])[0] == 0
    code, out, err = run_cli(capsys, ["forget", "corpus/notes/team.md"])  # the path from here, not the ID
    assert code == 1 and json.loads(out)["matched"] == []
    assert "relative to the base" in err and "notes/team.md" in err
    assert listed(capsys) == ["notes/team.md"]  # nothing removed by a guess



def test_inspect_takes_what_forget_takes_and_hints_when_nothing_matches(root, capsys, monkeypatch):
    monkeypatch.chdir(root / "corpus")
    assert run_cli(capsys, ["ingest", "notes"])[0] == 0
    for given in ("notes/team.md", "./notes/team.md", str(root / "corpus" / "notes" / "team.md")):
        code, out, _ = run_cli(capsys, ["inspect", given])
        assert code == 0 and json.loads(out)["source_id"] == "notes/team.md", given
    code, out, err = run_cli(capsys, ["inspect", "corpus/notes/team.md"])  # the path from elsewhere, not the ID
    assert code == 1 and out == ""  # no `null` on stdout: the hint is on stderr
    [line] = err.splitlines()
    assert "nothing stored under 'corpus/notes/team.md' for tenant 'default'" in line
    assert line.endswith("similar stored IDs: notes/team.md")

def test_two_files_under_one_id_are_refused_with_the_owner_named(root, capsys, monkeypatch):
    for name in ("a", "b"):
        (root / name / "docs").mkdir(parents=True)
        (root / name / "docs" / "README.md").write_text(f"Readme of project {name}: the Kestrel {name} build.\n")
    monkeypatch.chdir(root)
    assert run_cli(capsys, ["ingest", "a/docs"])[0] == 0
    code, out, _ = run_cli(capsys, ["ingest", "b/docs", "--json"])
    [(where, reason)] = json.loads(out)["files_failed"]
    assert code == 1 and where.endswith("b/docs/README.md")
    assert str(root / "a" / "docs" / "README.md") in reason and "--base" in reason
    code, out, _ = run_cli(capsys, ["ingest", "b/docs", "--base", ".", "--json"])  # distinct IDs: both kept
    assert code == 0
    assert listed(capsys) == ["b/docs/README.md", "docs/README.md"]


def test_python_add_file_and_add_paths_never_store_absolute_ids(root, monkeypatch):
    monkeypatch.chdir(root / "elsewhere")
    path = root / "corpus" / "notes" / "team.md"
    with Memory() as memory:
        assert memory.add_file(path).source_ids == ["team.md"]
        assert memory.add_file(path, base=root / "corpus").source_ids == ["notes/team.md"]
        memory.add_paths([root / "corpus"], recursive=True)
        result = memory.prompt("Who leads the Kestrel platform team?", budget=300)
        tags = {p.source_id for p in result.passages}
        assert tags and not any(t.startswith("/") for t in tags)
        assert "corpus/notes/team.md" in tags or "team.md" in tags or "notes/team.md" in tags
        assert memory.forget(str(path))["sources"] >= 1  # the file's absolute path forgets what it matched
        assert memory.matching_sources("never/added") == []


def test_a_file_reached_by_two_paths_is_named_from_the_outer_whatever_their_order(root, capsys, monkeypatch):
    sub = root / "corpus" / "notes" / "sub"
    sub.mkdir()
    (sub / "deep.md").write_text("# Deep\n\nThe Osprey archive lives in Tromso.\n")
    (sub / "blank.md").write_text("\u200b\u2060\n")  # invisible characters only: an empty file
    monkeypatch.chdir(root)
    code, out, _ = run_cli(capsys, ["ingest", "corpus/notes/sub", "corpus/notes", "-r", "--json"])
    report = json.loads(out)
    assert code == 0 and sorted(listed(capsys)) == ["notes/sub/deep.md", "notes/team.md"]
    assert [reason for path, reason in report["files_skipped"] if path.endswith("blank.md")] == ["empty file"]
