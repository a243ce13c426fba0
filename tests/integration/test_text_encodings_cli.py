"""A folder of notes saved in a legacy encoding (GBK, Windows-1252) through the CLI: skipped naming the
setting by default; with ``AGENT_MEMORY_TEXT_ENCODINGS`` read, reported, recalled, and marked in the
stored metadata; README and Makefile read by their names."""

from __future__ import annotations

import json

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
