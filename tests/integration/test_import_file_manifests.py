"""An export's file lines read back: the next ingest of an imported file skips it as unchanged, unless a source
of it is missing, another version of it is stored here, or a source holds text the file did not give (edited in
the export); an imported manifest's path, and a copy of the folder elsewhere. Through the CLI."""

from __future__ import annotations

import json

from tests.helpers import embedded_cli_env, run_cli


def _ingested(capsys, data_dir, folder) -> dict:
    code, stdout, _ = run_cli(capsys, ["--data-dir", str(data_dir), "ingest", str(folder), "--json"])
    assert code == 0, stdout
    return json.loads(stdout)


def test_an_ingest_after_an_import_skips_the_files_it_imported_unchanged_and_reads_a_changed_one(
        tmp_path, monkeypatch, capsys):
    """Ingest a folder, export, import into a fresh data dir: the files' manifests come along, so ingesting the
    same folder there reads and embeds nothing again (it re-read every file); a changed file is still read."""
    embedded_cli_env(monkeypatch, tmp_path / "unused")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nThe Kestrel team meets on Mondays in Lyon.\n")
    (notes / "b.txt").write_text("The Heron archive lives on the Tromso server.\n")
    (notes / "c.jsonl").write_text('{"text": "Record one: Osprey ships in May."}\n'
                                   '{"text": "Record two: Pelican ships in June."}\n')
    (notes / "call.json").write_text(json.dumps({"session_id": "call-9", "turns": [
        {"turn_id": "1", "speaker": "Ana", "timestamp": "2026-05-08", "text": "The Falcon launch moves to July."},
        {"turn_id": "2", "speaker": "Bo", "timestamp": "2026-05-08", "text": "Then I book the Porto venue."}]}))
    assert _ingested(capsys, tmp_path / "a", notes)["files_ingested"] == 4
    out = tmp_path / "export.jsonl"
    assert run_cli(capsys, ["--data-dir", str(tmp_path / "a"), "export", "--out", str(out)])[0] == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    files = {r["file_id"]: r for r in records if r["type"] == "file"}
    assert sorted(files) == ["notes/a.md", "notes/b.txt", "notes/c.jsonl", "notes/call.json"]
    assert files["notes/c.jsonl"]["sources"] == ["notes/c.jsonl#0", "notes/c.jsonl#1"]
    assert records[-1]["files"] == 4

    code, stdout, _ = run_cli(capsys, ["--data-dir", str(tmp_path / "b"), "import", str(out), "--json"])
    assert code == 0 and json.loads(stdout)["files_recorded"] == 4, stdout
    again = _ingested(capsys, tmp_path / "b", notes)
    assert again["files_unchanged"] == 4 and again["files_ingested"] == 0 and again["embeddings_computed"] == 0
    (notes / "b.txt").write_text("The Heron archive moved to the Bergen server.\n")
    changed = _ingested(capsys, tmp_path / "b", notes)
    assert changed["files_ingested"] == 1 and changed["files_unchanged"] == 3
    code, stdout, _ = run_cli(capsys, ["--data-dir", str(tmp_path / "b"), "export"])
    assert "Bergen" in stdout and "Tromso" not in stdout

    # An export written before file lines imports as it did: the next ingest reads every file again.
    old = tmp_path / "old.jsonl"
    old.write_text("".join(line + "\n" for line in out.read_text().splitlines() if '"type": "file"' not in line))
    code, stdout, _ = run_cli(capsys, ["--data-dir", str(tmp_path / "c"), "import", str(old), "--json"])
    # The export's 6 sources (call.json's summary is made again from its turns, and is none of them).
    assert records[-1]["sources"] == 6
    assert code == 0 and json.loads(stdout)["files_recorded"] == 0 and json.loads(stdout)["sources_written"] == 6
    assert _ingested(capsys, tmp_path / "c", notes)["files_unchanged"] == 0

    # One written after file lines but before their source_hashes and the sources' metadata_hash: its files are
    # recorded all the same, and the next ingest of the files as they were exported reads nothing again.
    (notes / "b.txt").write_text("The Heron archive lives on the Tromso server.\n")
    unhashed = tmp_path / "unhashed.jsonl"
    unhashed.write_text("".join(json.dumps({k: v for k, v in json.loads(line).items()
                                            if k not in ("source_hashes", "metadata_hash")}) + "\n"
                                for line in out.read_text().splitlines()))
    assert "source_hashes" not in unhashed.read_text() and "metadata_hash" not in unhashed.read_text()
    code, stdout, _ = run_cli(capsys, ["--data-dir", str(tmp_path / "d"), "import", str(unhashed), "--json"])
    assert code == 0 and json.loads(stdout)["files_recorded"] == 4, stdout
    again = _ingested(capsys, tmp_path / "d", notes)
    assert again["files_unchanged"] == 4 and again["embeddings_computed"] == 0


def test_a_file_is_not_recorded_when_one_of_its_sources_was_not_imported(tmp_path, monkeypatch, capsys):
    embedded_cli_env(monkeypatch, tmp_path / "unused")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "c.jsonl").write_text('{"text": "Record one: Osprey ships in May."}\n'
                                   '{"text": "Record two: Pelican ships in June."}\n')
    _ingested(capsys, tmp_path / "a", notes)
    out = tmp_path / "export.jsonl"
    assert run_cli(capsys, ["--data-dir", str(tmp_path / "a"), "export", "--out", str(out)])[0] == 0
    lines = out.read_text().splitlines()
    broken = tmp_path / "broken.jsonl"
    broken.write_text("".join(line + "\n" for line in lines if '"notes/c.jsonl#1"' not in line or '"file"' in line))
    code, stdout, _ = run_cli(capsys, ["--data-dir", str(tmp_path / "b"), "import", str(broken), "--json"])
    report = json.loads(stdout)
    assert code == 0 and report["files_recorded"] == 0 and report["sources_written"] == 1
    assert "1 of its 2 sources were not imported (first 'notes/c.jsonl#1')" in report["warnings"][0]
    assert _ingested(capsys, tmp_path / "b", notes)["files_ingested"] == 1  # read again: its lost record comes back


def test_an_import_over_another_version_of_a_file_has_the_next_ingest_read_it_again(tmp_path, monkeypatch, capsys):
    """The import writes the exported version's text over the one ingested here: the file's manifest here no
    longer says what is stored, so the next ingest reads the file again (it called it unchanged, and the
    exported text stayed where the file on disk says otherwise)."""
    embedded_cli_env(monkeypatch, tmp_path / "unused")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "b.txt").write_text("The Heron archive lives on the Tromso server.\n")
    _ingested(capsys, tmp_path / "a", notes)
    out = tmp_path / "export.jsonl"
    assert run_cli(capsys, ["--data-dir", str(tmp_path / "a"), "export", "--out", str(out)])[0] == 0
    (notes / "b.txt").write_text("The Heron archive moved to the Bergen server.\n")
    _ingested(capsys, tmp_path / "b", notes)
    code, stdout, _ = run_cli(capsys, ["--data-dir", str(tmp_path / "b"), "import", str(out), "--json"])
    report = json.loads(stdout)
    assert code == 0 and report["sources_written"] == 1 and report["files_recorded"] == 0
    assert "file 'notes/b.txt': this data dir held another version of it" in report["warnings"][0]
    assert _ingested(capsys, tmp_path / "b", notes)["files_ingested"] == 1
    code, stdout, _ = run_cli(capsys, ["--data-dir", str(tmp_path / "b"), "export"])
    assert "Bergen" in stdout and "Tromso" not in stdout


def _edited(lines: list[str], source_id: str, added: str, keep_hashes: bool = True) -> str:
    """The export with ``added`` appended to one source's text, its file line as exported (or, not
    ``keep_hashes``, as an export written before file lines carried their sources' hashes)."""
    out = []
    for line in lines:
        record = json.loads(line)
        if record["type"] == "source" and record["source_id"] == source_id:
            record["text"] += added
        if record["type"] == "file" and not keep_hashes:
            del record["source_hashes"]
        out.append(json.dumps(record) + "\n")
    return "".join(out)


def test_a_source_edited_in_the_export_has_the_next_ingest_read_its_file_again(tmp_path, monkeypatch, capsys):
    """A user appends text to one record in an export and imports it, over the data dir it came from or into a
    fresh one: the import says so, naming the file, and the next ingest reads that file again and stores the
    file's text (it called the file unchanged, and the edited text, which no file holds, stayed)."""
    embedded_cli_env(monkeypatch, tmp_path / "unused")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "c.jsonl").write_text('{"id": "osprey", "text": "Record one: Osprey ships in May."}\n'
                                   '{"id": "pelican", "text": "Record two: Pelican ships in June."}\n')
    (notes / "a.md").write_text("# A\n\nThe Kestrel team meets on Mondays in Lyon.\n")
    _ingested(capsys, tmp_path / "a", notes)
    out = tmp_path / "export.jsonl"
    assert run_cli(capsys, ["--data-dir", str(tmp_path / "a"), "export", "--out", str(out)])[0] == 0
    lines = out.read_text().splitlines()
    file_line = next(json.loads(line) for line in lines if '"notes/c.jsonl"' in line and '"file"' in line)
    assert sorted(file_line["source_hashes"]) == ["osprey", "pelican"]
    edited = tmp_path / "edited.jsonl"
    edited.write_text(_edited(lines, "pelican", " EDITED with Zorblax."))
    warning = ("file 'notes/c.jsonl': 1 of its 2 sources now hold text or metadata other than the file's ingestion stored "
               "(first 'pelican'")
    for data_dir, written, recorded in ((tmp_path / "a", 1, 0), (tmp_path / "b", 3, 1)):
        code, stdout, _ = run_cli(capsys, ["--data-dir", str(data_dir), "import", str(edited), "--json"])
        report = json.loads(stdout)
        assert code == 0 and report["sources_written"] == written and report["files_recorded"] == recorded, report
        assert len(report["warnings"]) == 1 and warning in report["warnings"][0], report["warnings"]
        again = _ingested(capsys, data_dir, notes)
        assert again["files_ingested"] == 1 and again["files_unchanged"] == 1
        code, stdout, _ = run_cli(capsys, ["--data-dir", str(data_dir), "export"])
        assert "Record two: Pelican ships in June." in stdout and "Zorblax" not in stdout
        assert _ingested(capsys, data_dir, notes)["files_unchanged"] == 2  # the file's text, recorded as such

    # An export whose file lines name no hashes (written before them) imports and records its files as it did.
    old = tmp_path / "old.jsonl"
    old.write_text(_edited(lines, "pelican", "", keep_hashes=False))
    code, stdout, _ = run_cli(capsys, ["--data-dir", str(tmp_path / "c"), "import", str(old), "--json"])
    report = json.loads(stdout)
    assert code == 0 and report["files_recorded"] == 2 and report["warnings"] == [], report
    assert _ingested(capsys, tmp_path / "c", notes)["files_unchanged"] == 2


def test_a_source_s_metadata_edited_in_the_export_has_the_next_ingest_write_the_file_s_again(
        tmp_path, monkeypatch, capsys):
    """A user edits one record's metadata in an export, not its text, and imports it, over the data dir it came
    from or into a fresh one: the content hash covers title and text only, so the file was recorded unchanged and
    the edited metadata, which no file has, stayed. Now the import warns naming the file, and the next ingest
    reads the file again and stores the record with the file's metadata."""
    embedded_cli_env(monkeypatch, tmp_path / "unused")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "c.jsonl").write_text('{"id": "osprey", "text": "Record one: Osprey ships in May.", "team": "ops"}\n'
                                   '{"id": "pelican", "text": "Record two: Pelican ships in June.", "team": "ops"}\n')
    _ingested(capsys, tmp_path / "a", notes)
    out = tmp_path / "export.jsonl"
    assert run_cli(capsys, ["--data-dir", str(tmp_path / "a"), "export", "--out", str(out)])[0] == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    pelican = next(r for r in records if r.get("source_id") == "pelican")
    assert pelican["metadata"]["team"] == "ops" and pelican["metadata_hash"]
    pelican["metadata"]["team"] = "Zorblax"
    edited = tmp_path / "edited.jsonl"
    edited.write_text("".join(json.dumps(r) + "\n" for r in records))
    warning = "file 'notes/c.jsonl': 1 of its 2 sources now hold text or metadata other than"
    for data_dir, written in ((tmp_path / "a", 0), (tmp_path / "b", 2)):
        code, stdout, _ = run_cli(capsys, ["--data-dir", str(data_dir), "import", str(edited), "--json"])
        report = json.loads(stdout)
        assert code == 0 and report["sources_written"] == written and report["files_recorded"] == 0, report
        assert len(report["warnings"]) == 1 and warning in report["warnings"][0], report["warnings"]
        again = _ingested(capsys, data_dir, notes)
        assert again["files_ingested"] == 1 and again["sources_written"] == 1, again
        code, stdout, _ = run_cli(capsys, ["--data-dir", str(data_dir), "export"])
        assert code == 0 and "Zorblax" not in stdout and '"team": "ops"' in stdout
        assert _ingested(capsys, data_dir, notes)["files_unchanged"] == 1  # the file's metadata, recorded as such
    # The export as written imports with its file recorded: the next ingest reads nothing again.
    code, stdout, _ = run_cli(capsys, ["--data-dir", str(tmp_path / "c"), "import", str(out), "--json"])
    assert code == 0 and json.loads(stdout)["files_recorded"] == 1 and json.loads(stdout)["warnings"] == [], stdout
    assert _ingested(capsys, tmp_path / "c", notes)["files_unchanged"] == 1


def test_an_import_s_files_ingested_from_a_copy_elsewhere(tmp_path, monkeypatch, capsys):
    """An imported manifest records the path the file had where it was exported. On the same machine, a copy of
    the folder at another path is another live file claiming the same IDs: refused, naming the original, as
    without an import; the original's own path is found unchanged. Once the original is gone, the copy takes the
    manifests over, unchanged, and its deletions are mirrored from where it is."""
    embedded_cli_env(monkeypatch, tmp_path / "unused")
    (tmp_path / "first" / "notes").mkdir(parents=True)
    (tmp_path / "first" / "notes" / "a.md").write_text("# A\n\nThe Kestrel team meets on Mondays in Lyon.\n")
    (tmp_path / "first" / "notes" / "b.txt").write_text("The Heron archive lives on the Tromso server.\n")
    monkeypatch.chdir(tmp_path / "first")
    _ingested(capsys, tmp_path / "a", "notes")
    out = tmp_path / "export.jsonl"
    assert run_cli(capsys, ["--data-dir", str(tmp_path / "a"), "export", "--out", str(out)])[0] == 0
    assert run_cli(capsys, ["--data-dir", str(tmp_path / "b"), "import", str(out)])[0] == 0
    (tmp_path / "copy").mkdir()
    (tmp_path / "copy" / "notes").mkdir()
    for name in ("a.md", "b.txt"):
        (tmp_path / "copy" / "notes" / name).write_bytes((tmp_path / "first" / "notes" / name).read_bytes())
    monkeypatch.chdir(tmp_path / "copy")
    code, stdout, _ = run_cli(capsys, ["--data-dir", str(tmp_path / "b"), "ingest", "notes", "--json"])
    report = json.loads(stdout)
    assert code != 0 and report["files_ingested"] == 0 and len(report["files_failed"]) == 2, stdout
    assert f"is held by another file, '{tmp_path / 'first' / 'notes' / 'a.md'}'" in stdout
    monkeypatch.chdir(tmp_path / "first")
    assert _ingested(capsys, tmp_path / "b", "notes")["files_unchanged"] == 2

    (tmp_path / "first" / "notes" / "a.md").unlink()
    (tmp_path / "first" / "notes" / "b.txt").unlink()
    monkeypatch.chdir(tmp_path / "copy")
    assert _ingested(capsys, tmp_path / "b", "notes")["files_unchanged"] == 2
    (tmp_path / "copy" / "notes" / "b.txt").unlink()
    assert _ingested(capsys, tmp_path / "b", "notes")["gone_from_disk"] == ["notes/b.txt"]
