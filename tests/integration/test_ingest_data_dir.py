"""A folder job never walks into the memory's own data dir (its stores, catalog and spooled jobs are
not memory), says so once, and a file named inside it is refused with the reason."""

from __future__ import annotations

import json

import pytest

from agent_memory.cli import main
from agent_memory.ingest.discovery import NOT_WALKED, named_files
from agent_memory.ingest.report import IngestReport
from tests.helpers import embedded_cli_env


@pytest.fixture()
def project(tmp_path, monkeypatch):
    """A project folder holding its notes and the data dir, with a spooled job's body in the data dir (JSON
    with a ``text`` field, which would read as a document) and a staged upload."""
    root = tmp_path / "project"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "pump.md").write_text("# Pumps\n\nPump P-7 in Hall Nordwerk moves 40 litres a minute.\n")
    job = root / "data" / "pending-jobs" / "j1"
    job.mkdir(parents=True)
    (job / "body.json").write_text(json.dumps({"text": "Scanner Quovadis counted 44 pallets.", "id": "leak"}))
    staged = root / "data" / "staged-uploads" / "upload-1"  # an upload a server was reading
    staged.mkdir(parents=True)
    (staged / "dock.md").write_text("Dock 4 closes at nine.\n")
    embedded_cli_env(monkeypatch, root / "data")
    return root


def test_a_folder_job_passes_the_data_dir_by_once(project, capsys):
    capsys.readouterr()
    assert main(["ingest", str(project), "-r", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [path for path, _ in report["files"]] == [str(project / "notes" / "pump.md")]
    assert report["files_seen"] == 1 and report["files_skipped"] == []
    notes = [w for w in report["warnings"] if NOT_WALKED in w]
    assert notes == [f"{project / 'data'}: {NOT_WALKED}"]

    capsys.readouterr()
    assert main(["list"]) == 0
    assert [row["source_id"] for row in json.loads(capsys.readouterr().out)["sources"]] == ["project/notes/pump.md"]


def test_a_file_named_inside_the_data_dir_is_refused(project, capsys):
    body = project / "data" / "pending-jobs" / "j1" / "body.json"
    capsys.readouterr()
    assert main(["ingest", str(body), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    [(path, reason)] = report["files_failed"]
    assert path == str(body) and "inside the data dir" in reason and "copy the file out" in reason
    assert report["files_seen"] == 0


def test_the_data_dir_is_known_by_its_resolved_path(project):
    """Another spelling of the data dir (a link to it, a relative path with '..') is the same folder:
    neither is walked, and the report says so once."""
    (project / "data-link").symlink_to(project / "data", target_is_directory=True)
    report = IngestReport()
    spelled = project / "notes" / ".." / "data"
    files = named_files([project], recursive=True, glob=None, report=report, data_dir=spelled)
    assert [path for path, _ in files] == [project / "notes" / "pump.md"]
    assert sum(NOT_WALKED in w for w in report.warnings) == 1 and report.files_skipped == []
