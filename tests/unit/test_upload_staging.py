"""Uploads staged under the data dir (agent_memory/stores/staging.py): a start removes what a stopped process
left there, never a folder this process still reads; a backup counts none of it."""

from __future__ import annotations

from agent_memory.core import diskspace
from agent_memory.ingest.backup import check_space
from agent_memory.stores.staging import STAGED_UPLOADS, StagingArea


def test_a_sweep_removes_what_a_stopped_process_left_and_never_a_folder_being_read(tmp_path):
    staging = StagingArea(tmp_path / "data" / STAGED_UPLOADS)
    assert staging.sweep() == []  # nothing staged yet: no folder made
    left = staging.folder / "upload-killed"
    left.mkdir(parents=True)
    (left / "notes.md").write_text("staged by a server that was killed")
    (staging.folder / "stray.part").write_text("half a write")
    reading = staging.stage("upload")
    (reading / "pump.md").write_text("being read now")

    assert staging.sweep() == ["stray.part", "upload-killed"]
    assert sorted(p.name for p in staging.folder.iterdir()) == [reading.name]
    assert (reading / "pump.md").read_text() == "being read now"

    staging.release(reading)
    assert not reading.exists() and staging.sweep() == []


def test_a_backup_leaves_staged_uploads_out_of_the_space_it_needs(tmp_path, monkeypatch):
    data_dir = tmp_path / "data"
    staging = StagingArea(data_dir / STAGED_UPLOADS)
    staged = staging.stage("upload")
    (staged / "big.md").write_bytes(b"x" * (4 * 1024 * 1024))
    (data_dir / "catalog.sqlite").write_bytes(b"y" * 4096)
    monkeypatch.setattr(diskspace, "free_bytes", lambda path: 1024 * 1024)  # room for the stores, not the upload
    check_space(data_dir, tmp_path / "elsewhere", 0)  # no BackupError
    staging.release(staged)
