"""A folder job leaves memory mirroring the folder: the stored files it would have read that are gone
from disk (renamed, moved, deleted) are forgotten from every store, and only those (ingest/missing.py);
``--keep-missing`` keeps them. Through the CLI on the real embedded stores."""

from __future__ import annotations

import json
import re
import shlex

import pytest

from agent_memory.cli import main
from agent_memory.core.records import SearchFilter
from agent_memory.ingest.ownership import FILE_KEY
from agent_memory.memory import Memory
from tests.helpers import embedded_cli_env, unreadable_folder

TEAM = "# Team\n\nOrla Vance leads the Kestrel platform team in Lyon.\n"


@pytest.fixture()
def root(tmp_path, monkeypatch):
    embedded_cli_env(monkeypatch, tmp_path / "data")
    notes = tmp_path / "notes"
    (notes / "sub").mkdir(parents=True)
    (notes / "team.md").write_text(TEAM)
    (notes / "budget.md").write_text("# Budget\n\nThe Heron project budget is 40,000 euros for 2026.\n")
    (notes / "todo.txt").write_text("Renew the Pelican domain before March.\n")
    (notes / "sub" / "deep.md").write_text("# Deep\n\nThe Osprey archive lives on the Tromso server.\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def ingest(capsys, *argv) -> tuple[int, dict]:
    capsys.readouterr()
    code = main(["ingest", *argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def listed(capsys) -> list[str]:
    capsys.readouterr()
    main(["list"])
    return [r["source_id"] for r in json.loads(capsys.readouterr().out)["sources"]]


ALL = ["notes/budget.md", "notes/sub/deep.md", "notes/team.md", "notes/todo.txt"]


def test_a_renamed_file_answers_only_under_its_new_id(root, capsys):
    assert ingest(capsys, "notes", "-r")[0] == 0
    (root / "notes" / "team.md").rename(root / "notes" / "crew.md")
    code, report = ingest(capsys, "notes", "-r")
    assert code == 0 and report["gone_from_disk"] == ["notes/team.md"] and report["files_ingested"] == 1
    assert [str(root / "notes" / "team.md"), "removed: gone from disk"] in report["files"]
    assert listed(capsys) == ["notes/budget.md", "notes/crew.md", "notes/sub/deep.md", "notes/todo.txt"]
    with Memory() as memory:  # gone from every store, as `forget` does it
        assert not list(memory.services.vectors.scroll(SearchFilter(tenant="default", source_ids=["notes/team.md"])))
        assert memory.services.graph.delete_by_source("default", "notes/team.md") == 0
        assert memory.services.catalog.get("default", FILE_KEY + "notes/team.md") is None
        result = memory.prompt("Who leads the Kestrel platform team?", budget=400)
        cited = {p.source_id for p in result.passages}
        assert "notes/crew.md" in cited and "notes/team.md" not in cited and "notes/team.md" not in result.prompt


def test_a_deleted_file_is_removed_unless_kept(root, capsys):
    assert ingest(capsys, "notes", "-r")[0] == 0
    (root / "notes" / "budget.md").unlink()
    code, report = ingest(capsys, "notes", "-r", "--keep-missing")
    assert code == 0 and report["gone_from_disk"] == [] and listed(capsys) == ALL
    capsys.readouterr()
    assert main(["-v", "ingest", "notes", "-r"]) == 0
    out = capsys.readouterr().out
    assert "removed, gone from disk: 1" in out and "gone from disk: notes/budget.md" in out
    assert listed(capsys) == ALL[1:]


def test_only_what_this_walk_reaches_is_removed(root, capsys):
    assert ingest(capsys, "notes", "-r")[0] == 0
    (root / "notes" / "todo.txt").unlink()
    (root / "notes" / "sub" / "deep.md").unlink()
    # Outside the glob, and below the folder without -r: not this walk's files.
    code, report = ingest(capsys, "notes", "--glob", "*.md")
    assert code == 0 and report["gone_from_disk"] == [] and listed(capsys) == ALL
    # Files given one by one never remove anything.
    code, report = ingest(capsys, "notes/team.md", "notes/budget.md")
    assert code == 0 and report["gone_from_disk"] == [] and listed(capsys) == ALL
    code, report = ingest(capsys, "notes", "--glob", "*.txt")  # the walk reaches todo.txt now
    assert report["gone_from_disk"] == ["notes/todo.txt"]
    code, report = ingest(capsys, "notes", "-r")
    assert report["gone_from_disk"] == ["notes/sub/deep.md"] and listed(capsys) == ["notes/budget.md", "notes/team.md"]


def test_text_sources_and_a_sibling_folder_are_untouched(root, capsys):
    (root / "notes2").mkdir()
    (root / "notes2" / "other.md").write_text("# Other\n\nThe Crane depot opens at six.\n")
    assert ingest(capsys, "notes", "notes2", "-r")[0] == 0
    with Memory() as memory:  # no file behind it, though its ID reads as a path under the folder
        memory.add("Typed note: the Finch meeting moved to Friday.", source_id="notes/typed.md")
    (root / "notes2" / "other.md").unlink()  # gone, but under notes2/, not notes/
    (root / "notes" / "todo.txt").unlink()
    code, report = ingest(capsys, "notes", "-r")
    assert code == 0 and report["gone_from_disk"] == ["notes/todo.txt"]
    assert listed(capsys) == ["notes/budget.md", "notes/sub/deep.md", "notes/team.md", "notes/typed.md",
                              "notes2/other.md"]


def test_a_renamed_file_of_records_keeps_its_records(root, capsys):
    rows = [{"id": "r1", "text": "Alpha record about apples."}, {"id": "r2", "text": "Beta record about pears."}]
    (root / "notes" / "rows.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    assert ingest(capsys, "notes")[0] == 0
    (root / "notes" / "rows.jsonl").rename(root / "notes" / "records.jsonl")
    code, report = ingest(capsys, "notes")  # the gone file goes first, so its IDs are free to claim
    assert code == 0 and report["gone_from_disk"] == ["notes/rows.jsonl"] and not report["files_failed"]
    assert {"r1", "r2"} <= set(listed(capsys))


def test_a_missing_folder_removes_nothing_and_fails(root, capsys):
    assert ingest(capsys, "notes", "-r")[0] == 0
    (root / "notes").rename(root / "moved-away")
    code, report = ingest(capsys, "notes", "-r")
    assert code == 1 and report["paths_missing"] == ["notes"] and report["gone_from_disk"] == []
    assert listed(capsys) == ALL


def test_an_unreadable_folder_removes_nothing_and_fails(root, capsys, monkeypatch):
    assert ingest(capsys, "notes", "-r")[0] == 0
    (root / "notes" / "todo.txt").unlink()  # gone, yet a folder that cannot be listed vouches for nothing
    folder = root / "notes"
    with unreadable_folder(monkeypatch, folder):
        code, report = ingest(capsys, "notes", "-r")
    assert code == 1 and report["gone_from_disk"] == [] and "unreadable folder" in report["files_failed"][0][1]
    assert listed(capsys) == ALL


def test_a_folder_above_the_base_is_an_error_exit(root, capsys):
    capsys.readouterr()
    assert main(["ingest", "--base", "notes/sub", "notes"]) == 2
    err = capsys.readouterr().err
    assert "not under the base" in err and "'notes'" in err


def test_memory_add_paths_mirrors_the_folder_unless_told_to_keep(root):
    with Memory() as memory:
        memory.add_paths(["notes"], recursive=True)
        (root / "notes" / "todo.txt").unlink()
        kept = memory.add_paths(["notes"], recursive=True, keep_missing=True)
        assert kept.gone_from_disk == [] and memory.matching_sources("notes/todo.txt") == ["notes/todo.txt"]
        mirrored = memory.add_paths(["notes"], recursive=True)
        assert mirrored.gone_from_disk == ["notes/todo.txt"] and memory.matching_sources("notes/todo.txt") == []


def test_a_folder_moved_under_the_same_ids_is_mirrored_from_where_it_is_now(root, capsys, monkeypatch):
    """Found unchanged after a move (the same IDs, read from another working folder), a file's manifest records
    where it is now: deleting it there is mirrored, and `forget` takes its new path (the manifest kept the old
    path, under no folder a job walks, and the deleted file went on answering)."""
    assert ingest(capsys, "notes", "-r")[0] == 0
    (root / "moved").mkdir()
    (root / "notes").rename(root / "moved" / "notes")
    monkeypatch.chdir(root / "moved")
    code, report = ingest(capsys, "notes", "-r")
    assert code == 0 and report["files_unchanged"] == 4 and report["gone_from_disk"] == []
    (root / "moved" / "notes" / "todo.txt").unlink()
    code, report = ingest(capsys, "notes", "-r")
    assert code == 0 and report["gone_from_disk"] == ["notes/todo.txt"]
    capsys.readouterr()
    assert main(["forget", str(root / "moved" / "notes" / "team.md")]) == 0
    assert json.loads(capsys.readouterr().out)["matched"] == ["notes/team.md"]
    assert listed(capsys) == ["notes/budget.md", "notes/sub/deep.md"]


def shown_path(capsys, source_id: str) -> str:
    capsys.readouterr()
    assert main(["inspect", source_id]) == 0
    return json.loads(capsys.readouterr().out)["catalog"]["path"]


def test_a_source_names_where_its_file_is_after_a_relative_job_and_a_move(root, capsys, monkeypatch):
    """A citation's source leads to its file: `inspect` showed the path as the job was given it (`notes/team.md`,
    relative to a working folder no one remembers), and after a move still the old one, where the manifest had
    the new; a record left unchanged by a changed file kept it too."""
    records = [{"id": "kite", "text": "The Kite pump is red."}, {"id": "rook", "text": "The Rook pump is grey."}]
    (root / "notes" / "pumps.json").write_text(json.dumps(records))
    assert ingest(capsys, "notes", "-r")[0] == 0
    assert shown_path(capsys, "notes/team.md") == str(root / "notes" / "team.md")
    assert shown_path(capsys, "kite") == str(root / "notes" / "pumps.json")

    (root / "moved").mkdir()
    (root / "notes").rename(root / "moved" / "notes")
    records[1]["text"] = "The Rook pump is grey and loud."  # kite's record is unchanged
    (root / "moved" / "notes" / "pumps.json").write_text(json.dumps(records))
    monkeypatch.chdir(root / "moved")
    code, report = ingest(capsys, "notes", "-r")
    assert code == 0 and report["files_unchanged"] == 4 and report["files_ingested"] == 1
    moved = root / "moved" / "notes"
    assert shown_path(capsys, "notes/team.md") == str(moved / "team.md")  # found unchanged
    assert shown_path(capsys, "notes/sub/deep.md") == str(moved / "sub" / "deep.md")
    assert shown_path(capsys, "kite") == shown_path(capsys, "rook") == str(moved / "pumps.json")


@pytest.mark.parametrize("which", ["the file", "its folder"])
def test_records_held_by_a_file_gone_with_its_renamed_folder_are_refused_naming_the_forget(root, capsys, which):
    """The refusal said to forget 'it' and named the gone file's ID: that the file is gone from disk (its folder
    renamed) was not said, nor which command frees the IDs; running the folder job on the old path does not
    (the folder is missing, nothing is removed). Each command it names does."""
    rows = [{"id": "r1", "text": "Alpha record about apples."}, {"id": "r2", "text": "Beta record about pears."}]
    (root / "notes" / "rows.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    assert ingest(capsys, "notes", "-r")[0] == 0
    (root / "notes").rename(root / "notes-2024")
    code, report = ingest(capsys, "notes-2024", "-r")
    [(path, reason)] = report["files_failed"]
    assert code == 1 and path == "notes-2024/rows.jsonl"
    assert (f"record 'r1' refused: that source ID belongs to the file 'notes/rows.jsonl'; that file is gone from "
            f"disk (it was read at {str(root / 'notes' / 'rows.jsonl')!r}): ") in reason, reason
    assert "record 'r2' refused: that source ID belongs to the file 'notes/rows.jsonl' too" in reason
    commands = re.findall(r"`agent-memory ([^`]+)`", reason)
    assert commands == ["forget notes/rows.jsonl", "forget --prefix notes/"]
    capsys.readouterr()
    assert main(shlex.split(commands[0] if which == "the file" else commands[1])) == 0
    code, report = ingest(capsys, "notes-2024", "-r")
    assert code == 0 and not report["files_failed"], report["files_failed"]
    stored = listed(capsys)
    assert {"r1", "r2", "notes-2024/team.md"} <= set(stored)
    assert ("notes/team.md" in stored) == (which == "the file")  # the prefix forgets the old folder's files too


def test_records_held_by_a_file_still_on_disk_are_refused_naming_the_forget(root, capsys):
    (root / "notes" / "rows.jsonl").write_text(json.dumps({"id": "r1", "text": "Alpha record about apples."}))
    (root / "other").mkdir()
    (root / "other" / "copy.jsonl").write_text(json.dumps({"id": "r1", "text": "Alpha record, copied."}))
    assert ingest(capsys, "notes", "-r")[0] == 0
    code, report = ingest(capsys, "other")
    [(_, reason)] = report["files_failed"]
    assert code == 1 and reason == ("record 'r1' refused: that source ID belongs to the file 'notes/rows.jsonl'; "
                                    "forget it first (`agent-memory forget notes/rows.jsonl`), or give the record "
                                    "another id")
