"""A folder of notes saved in a legacy encoding (GBK, Windows-1252) through the CLI: skipped naming the
setting by default; with ``AGENT_MEMORY_TEXT_ENCODINGS`` read, reported, recalled, and marked in the
stored metadata; README and Makefile read by their names."""

from __future__ import annotations

import json

from agent_memory.ingest import file_ingestion
from tests.helpers import embedded_cli_env, run_cli

DIARY = "三月十二日，我和李娜在杭州西湖边的茶馆喝了龙井茶。\n"


def test_legacy_encoded_notes_are_read_once_the_encoding_is_named(tmp_path, monkeypatch, capsys):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "diary.txt").write_bytes(DIARY.encode("gbk"))
    (notes / "README").write_text("These notes belong to the Kestrel project.\n")
    embedded_cli_env(monkeypatch, tmp_path / "data")

    code, out, _ = run_cli(capsys, ["ingest", str(notes), "--json"])
    report = json.loads(out)
    [(path, reason)] = report["files_skipped"]
    assert path.endswith("diary.txt") and "AGENT_MEMORY_TEXT_ENCODINGS" in reason
    assert report["files_ingested"] == 1  # the README, by its name

    monkeypatch.setenv("AGENT_MEMORY_TEXT_ENCODINGS", "gb18030")
    code, out, _ = run_cli(capsys, ["ingest", str(notes), "--json"])
    report = json.loads(out)
    assert code == 0 and report["files_ingested"] == 1 and not report["files_skipped"]
    assert any("diary.txt: not UTF-8, read as gb18030" in w for w in report["warnings"])

    code, out, _ = run_cli(capsys, ["inspect", "notes/diary.txt"])
    items = json.loads(out)["items"]
    assert code == 0 and any(i["text"] == DIARY.strip() for i in items)
    assert all(i["metadata"].get("decoded_from") == "gb18030" for i in items)

    code, out, _ = run_cli(capsys, ["prompt", "我和李娜在哪里喝茶？", "--budget", "300"])
    assert code == 0 and "[S:notes/diary.txt]" in out and "西湖" in out


def _ingest(capsys, notes) -> dict:
    code, out, _ = run_cli(capsys, ["ingest", str(notes), "-r", "--json"])
    assert code in (0, 1), out
    return json.loads(out)


def _texts(capsys, source_id: str) -> list[tuple[str, str | None]]:
    code, out, _ = run_cli(capsys, ["inspect", source_id])
    assert code == 0, out
    return [(i["text"], i["metadata"].get("decoded_from")) for i in json.loads(out)["items"]]


def test_a_file_read_in_another_encoding_now_is_stored_again(tmp_path, monkeypatch, capsys):
    """Mojibake stored under one setting is replaced once the setting names the file's encoding; the same
    setting again reads nothing; a UTF-8 neighbour is never read again."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "diary.txt").write_bytes(DIARY.encode("gbk"))
    (notes / "plain.md").write_text("The Kestrel notes are in UTF-8.\n")
    embedded_cli_env(monkeypatch, tmp_path / "data")

    monkeypatch.setenv("AGENT_MEMORY_TEXT_ENCODINGS", "latin-1")  # decodes any bytes: mojibake
    assert _ingest(capsys, notes)["files_ingested"] == 2
    [(text, read_as)] = _texts(capsys, "notes/diary.txt")
    assert read_as == "latin-1" and text != DIARY.strip()

    monkeypatch.setenv("AGENT_MEMORY_TEXT_ENCODINGS", "gb18030,latin-1")
    report = _ingest(capsys, notes)
    assert report["files_ingested"] == 1 and report["files_unchanged"] == 1  # plain.md
    assert any("diary.txt: stored read as latin-1, read as gb18030 now" in w for w in report["warnings"])
    assert _texts(capsys, "notes/diary.txt") == [(DIARY.strip(), "gb18030")]

    decoded = []  # the files decoded to decide: diary.txt only, never the UTF-8 file (its hash decides)
    real = file_ingestion.fallback_now
    monkeypatch.setattr(file_ingestion, "fallback_now", lambda path, names: decoded.append(path.name) or real(path, names))
    report = _ingest(capsys, notes)  # the same setting: the same reading, nothing stored again
    assert report["files_unchanged"] == 2 and report["files_ingested"] == 0 and decoded == ["diary.txt"]


def test_a_file_no_encoding_reads_now_keeps_its_stored_version_and_says_so(tmp_path, monkeypatch, capsys):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "diary.txt").write_bytes(DIARY.encode("gbk"))
    embedded_cli_env(monkeypatch, tmp_path / "data")
    monkeypatch.setenv("AGENT_MEMORY_TEXT_ENCODINGS", "gb18030")
    assert _ingest(capsys, notes)["files_ingested"] == 1

    monkeypatch.delenv("AGENT_MEMORY_TEXT_ENCODINGS")
    for _ in range(2):  # skipped each time, its stored version kept each time
        report = _ingest(capsys, notes)
        [(path, reason)] = report["files_skipped"]
        assert path.endswith("diary.txt") and reason.startswith("invalid UTF-8 at byte 0 ")
        assert reason.endswith("the version stored before (read as gb18030) is kept (forget it to remove it)")
        assert report["files_unchanged"] == 0 and not report["now_ignored"] and not report["gone_from_disk"]
        assert _texts(capsys, "notes/diary.txt") == [(DIARY.strip(), "gb18030")]

    monkeypatch.setenv("AGENT_MEMORY_TEXT_ENCODINGS", "gb18030")  # named again: as stored, nothing read
    assert _ingest(capsys, notes)["files_unchanged"] == 1
