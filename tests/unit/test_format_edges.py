"""What a day of real files brings: text in UTF-16/32, files under the wrong extension, a JSONL line cut
short, one huge line, a file padded with blank lines, a folder link back up the tree. Each is read,
or skipped with a reason that names what is wrong; nothing is stored as garbage."""

from __future__ import annotations

import json
import os
import shutil

from agent_memory.core.records import Document
from agent_memory.ingest import decoding, sources
from agent_memory.ingest.discovery import discover_files
from agent_memory.ingest.json_records import load_json_text
from agent_memory.ingest.report import IngestReport
from agent_memory.ingest.sources import EMPTY_FILE, Skipped, TextStream, Transcript, load_path
from tests.documents import write_docx, write_pdf


def _one(loaded):
    [unit] = loaded
    return unit


def test_utf16_and_utf32_with_a_byte_order_mark_are_read_as_text(tmp_path):
    """Windows tools save "Unicode" text as UTF-16 with a mark: it is text, not binary content."""
    text = "# Bern\n\nThe Bern office has 8 staff; Zürich has 12.\n"
    for name, encoding in (("le.md", "utf-16"), ("be.txt", "utf-16-be"), ("wide.txt", "utf-32")):
        data = text.encode(encoding)
        if encoding == "utf-16-be":
            data = b"\xfe\xff" + data
        (tmp_path / name).write_bytes(data)
        doc = _one(load_path(tmp_path / name, tenant="t", source_id=name))
        assert isinstance(doc, Document), (name, doc)
        assert doc.text == text, name
    (tmp_path / "blank.txt").write_bytes(" \n\t\n".encode("utf-16"))
    assert _one(load_path(tmp_path / "blank.txt", tenant="t")).reason == EMPTY_FILE


def test_text_not_in_utf8_is_skipped_naming_its_bytes_and_what_is_read(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("Café crème".encode("latin-1"))
    skip = _one(load_path(path, tenant="t"))
    assert isinstance(skip, Skipped) and skip.reason.startswith("invalid UTF-8 at byte 3")
    assert "b'\\xe9" in skip.reason and "save the file as UTF-8" in skip.reason


def test_a_large_file_is_checked_and_streamed_in_its_encoding_with_offsets_into_the_file(tmp_path, monkeypatch):
    monkeypatch.setattr(sources, "STREAM_THRESHOLD_BYTES", 1000)
    monkeypatch.setattr(sources, "SEGMENT_CHARS", 700)
    monkeypatch.setattr(decoding, "READ_BLOCK", 64)
    text = "".join(f"Line {n}: the Bern office ships on day {n}.\r\n" for n in range(200))  # Windows line ends
    (tmp_path / "big.txt").write_bytes(text.encode("utf-16"))
    stream = _one(load_path(tmp_path / "big.txt", tenant="t", source_id="big.txt"))
    assert isinstance(stream, TextStream)
    segments = list(stream.segments())
    assert "".join(s for _, s in segments) == text and len(segments) > 1
    assert all(text[offset:offset + len(s)] == s for offset, s in segments)  # CRLF kept: offsets are exact
    # A bad byte deep in a large file is named at its offset in the file, not in the block read.
    bad = b"x" * 20_000 + b"\xff" + b"y" * 100
    (tmp_path / "bad.txt").write_bytes(bad)
    assert _one(load_path(tmp_path / "bad.txt", tenant="t")).reason.startswith("invalid UTF-8 at byte 20000 ")


def test_segments_of_one_long_line_never_cut_a_word(tmp_path, monkeypatch):
    monkeypatch.setattr(sources, "SEGMENT_CHARS", 1000)
    text = " ".join(f"token{n}" for n in range(3000))  # one line, no breaks
    stream = TextStream(source_id="s", path=tmp_path / "none", tenant="t", content_hash="h", text=text)
    segments = list(stream.segments())
    assert "".join(s for _, s in segments) == text and len(segments) > 10
    words = {f"token{n}" for n in range(3000)}
    assert all(set(s.split()) <= words for _, s in segments)  # every word whole, in one segment


def test_a_pdf_or_docx_under_the_wrong_extension_is_read_by_its_bytes(tmp_path):
    pdf = write_pdf(tmp_path / "manual.pdf", [["The Helsinki plant runs three shifts."]])
    docx = write_docx(tmp_path / "review.docx", "", "Q3", ["Revenue grew 12 percent."], [["a"]])
    for source, name in ((pdf, "saved-as.txt"), (pdf, "swapped.docx"), (docx, "swapped.pdf"), (docx, "notes.md")):
        shutil.copy(source, tmp_path / name)
        doc = _one(load_path(tmp_path / name, tenant="t", source_id=name))
        assert isinstance(doc, Document), (name, doc)
        assert "%PDF" not in doc.text and ("three shifts" in doc.text or "12 percent" in doc.text), name
    # A note that quotes a PDF header further in is text.
    (tmp_path / "about.md").write_text("PDF files begin with %PDF-1.7 and end with %%EOF.")
    assert "%PDF-1.7" in _one(load_path(tmp_path / "about.md", tenant="t")).text


def test_a_file_named_pdf_or_docx_that_is_not_one_says_what_it_starts_with(tmp_path):
    (tmp_path / "fake.pdf").write_text("this is not a pdf at all")
    (tmp_path / "fake.docx").write_text("plain words")
    pdf_skip = _one(load_path(tmp_path / "fake.pdf", tenant="t"))
    docx_skip = _one(load_path(tmp_path / "fake.docx", tenant="t"))
    assert pdf_skip.reason.startswith("not a PDF file") and "b'this is not a pd'" in pdf_skip.reason
    assert docx_skip.reason.startswith("not a DOCX file") and "b'plain words'" in docx_skip.reason


def test_text_after_a_blank_first_block_is_not_an_empty_file(tmp_path):
    """An empty file removes what was stored before: only a file blank to its end is one."""
    path = tmp_path / "padded.txt"
    path.write_text("\n" * 10_000 + "The Kaunas office has 4 desks.\n")
    assert "Kaunas" in _one(load_path(path, tenant="t", source_id="padded.txt")).text
    path.write_text("\n" * 10_000)
    assert _one(load_path(path, tenant="t")).reason == EMPTY_FILE


def test_a_jsonl_line_that_does_not_parse_is_skipped_alone_and_the_rest_keep_their_ids():
    lines = [json.dumps({"text": "line one"}), '{"text": "cut sho', json.dumps({"text": "line three"}),
             '{"text": "last line, cut by a crash']
    out = load_json_text("\n".join(lines), tenant="t", source_id="log.jsonl", path="log.jsonl", jsonl=True)
    assert [(d.source_id, d.text) for d in out if isinstance(d, Document)] == [("log.jsonl#0", "line one"),
                                                                              ("log.jsonl#2", "line three")]
    skips = [(s.path, s.reason) for s in out if isinstance(s, Skipped)]
    assert [p for p, _ in skips] == ["log.jsonl#1", "log.jsonl#3"]
    assert all(r.startswith("malformed JSON") for _, r in skips) and "line 4" in skips[1][1]


def test_a_jsonl_transcript_or_file_with_no_parsing_line_stays_one_skip():
    """Turns are numbered by position: a transcript missing a line waits whole, as before. A pretty-printed
    JSON saved as .jsonl is one skip, not one per line."""
    turns = [json.dumps({"speaker": "Anna", "text": f"turn {n}"}) for n in range(3)] + ['{"speaker": "Ben", "te']
    [skip] = load_json_text("\n".join(turns), tenant="t", source_id="chat.jsonl", jsonl=True)
    assert isinstance(skip, Skipped) and "line 4" in skip.reason
    [whole] = load_json_text(json.dumps([{"text": "a"}], indent=2), tenant="t", source_id="p.jsonl", jsonl=True)
    assert isinstance(whole, Skipped) and whole.reason.startswith("malformed JSON")
    [transcript] = load_json_text("\n".join(turns[:3]), tenant="t", source_id="chat.jsonl", jsonl=True)
    assert isinstance(transcript, Transcript) and len(transcript.turns) == 3


def test_a_folder_link_to_a_folder_above_is_a_loop_and_the_walk_stays_inside(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("Not under the folder given.")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.txt").write_text("Alpha.")
    os.symlink("..", notes / "up")  # up -> tmp_path, which holds notes
    os.symlink(".", notes / "here")
    report = IngestReport()
    found = list(discover_files([notes], recursive=True, glob=None, report=report))
    assert found == [notes / "a.txt"]
    skipped = dict(report.files_skipped)
    assert skipped[str(notes / "up")].startswith("symlink loop") and str(tmp_path) in skipped[str(notes / "up")]
    assert skipped[str(notes / "here")].startswith("symlink loop")


def test_a_named_pipe_is_skipped_as_not_a_file_never_missing_nor_dropped(tmp_path):
    folder = tmp_path / "inbox"
    folder.mkdir()
    (folder / "a.txt").write_text("Alpha.")
    os.mkfifo(folder / "pipe.txt")  # opening it would block the job until a writer comes
    report = IngestReport()
    assert list(discover_files([folder], recursive=False, glob=None, report=report)) == [folder / "a.txt"]
    given = IngestReport()
    assert list(discover_files([folder / "pipe.txt"], recursive=False, glob=None, report=given)) == []
    for rep in (report, given):
        assert dict(rep.files_skipped)[str(folder / "pipe.txt")].startswith("not a regular file (a named pipe)")
    assert given.paths_missing == []


def test_a_nul_no_store_holds_skips_its_record_or_file_and_the_rest_go_on(tmp_path):
    """A NUL the binary sniff did not see (past its first 8 KiB, or written as an escape) reached the stores:
    PostgreSQL refuses it, and its ID could never be named again. Its record, or its file, is a skip naming it."""
    records = tmp_path / "notes.jsonl"
    records.write_text("\n".join(json.dumps(r) for r in [
        {"id": "a", "text": "The pump was replaced."}, {"id": "b", "text": "bad \u0000 text"},
        {"id": "c\u0000d", "text": "an ID with a NUL"}, {"id": "e", "text": "The valve holds.", "tag": "x\u0000"}]))
    loaded = load_path(records, tenant="t", source_id="notes.jsonl")
    assert [u.source_id for u in loaded if isinstance(u, Document)] == ["a"]
    reasons = [u.reason for u in loaded if isinstance(u, Skipped)]
    assert len(reasons) == 3 and "NUL" in reasons[0] and "'c\\x00d'" in reasons[1] and "'tag'" in reasons[2], reasons
    late = tmp_path / "late.txt"
    late.write_text("plain words. " * 1000 + "then \x00 a NUL")  # past the 8 KiB the sniff reads
    [skip] = load_path(late, tenant="t", source_id="late.txt")
    assert isinstance(skip, Skipped) and "NUL" in skip.reason
    talk = tmp_path / "talk.json"
    talk.write_text(json.dumps([{"speaker": "Ann", "text": "Hello."}, {"speaker": "Bo", "text": "Hi \u0000"}]))
    loaded = load_path(talk, tenant="t", source_id="talk.json")
    assert all(isinstance(u, Skipped) for u in loaded) and "turn 1" in loaded[0].reason, loaded


def test_a_file_s_id_does_not_depend_on_the_order_the_paths_are_given_in(tmp_path):
    from agent_memory.ingest.discovery import named_files

    (tmp_path / "proj" / "sub").mkdir(parents=True)
    (tmp_path / "proj" / "top.md").write_text("Top notes.\n")
    (tmp_path / "proj" / "sub" / "b.md").write_text("Sub notes.\n")
    ids = []
    for paths in ([tmp_path / "proj", tmp_path / "proj" / "sub"], [tmp_path / "proj" / "sub", tmp_path / "proj"],
                  [tmp_path / "proj" / "sub" / "b.md", tmp_path / "proj"]):
        files = named_files(paths, recursive=True, glob=None, report=IngestReport(), ignore_rules=False)
        ids.append(sorted(source_id for _, source_id in files))
    assert ids[0] == ids[1] == ids[2] == ["proj/sub/b.md", "proj/top.md"]
