"""`agent-memory ingest DIR` without -r reads DIR's own files only, and says so when it left subfolders."""

from __future__ import annotations

import pytest

from tests.helpers import run_cli


@pytest.fixture(autouse=True)
def _local(monkeypatch):
    for name in ("AGENT_MEMORY_POSTGRES_URL", "AGENT_MEMORY_NEO4J_URI", "AGENT_MEMORY_QDRANT_URL"):
        monkeypatch.delenv(name, raising=False)


def test_a_folder_of_folders_without_r_says_that_r_reads_them(capsys, tmp_path):
    notes = tmp_path / "notes"
    for sub in ("2024", "2025"):
        (notes / sub).mkdir(parents=True)
        (notes / sub / "harbour.md").write_text("The harbour of Velmora opened in 1892.\n", encoding="utf-8")
    data = ["--data-dir", str(tmp_path / "data")]
    _, out, _ = run_cli(capsys, [*data, "ingest", str(notes)])
    assert "files seen       0" in out
    assert f"warning: 2 subfolder(s) of {str(notes)!r} not read" in out and "without -r" in out, out
    code, out, _ = run_cli(capsys, [*data, "ingest", str(notes), "-r"])
    assert code == 0 and "files ingested   2" in out and "subfolder" not in out, out
