"""Hostile notebooks, e-mails and RTF files (ingest/mail_and_notebooks.py): each is made in the test and is
either read, its bad parts left out and said so, or skipped with a reason naming the bad value, never an
exception out of the reader and never a slow parse (cases are small enough to be fast once capped)."""

from __future__ import annotations

import json
import time

import pytest

from agent_memory.core.records import Document
from agent_memory.ingest import mail_and_notebooks, mbox, zip_xml_formats
from agent_memory.ingest.sources import Skipped, load_path
from tests.office_documents import only_document, only_skip


@pytest.mark.parametrize("raw", ["[" * 100_000, '{"metadata": ' + '{"a": ' * 100_000 + "1" + "}" * 100_000 + "}",
                                 '{"cells": [' + "[" * 100_000 + "]" * 100_000 + "]}"])
def test_a_notebook_nested_past_the_recursion_limit_is_a_skip_not_a_recursion_error(tmp_path, raw):
    (tmp_path / "deep.ipynb").write_text(raw)
    assert only_skip(load_path(tmp_path / "deep.ipynb", tenant="t")).startswith(
        "malformed notebook: JSON nested too deeply to read")


def test_a_bad_value_nested_just_under_the_limit_is_shown_short(tmp_path):
    nested = "[" * 900 + "]" * 900  # parses; a plain repr of it in the reason would recurse past the limit
    (tmp_path / "n.ipynb").write_text('{"cells": [' + nested + "]}")
    reason = only_skip(load_path(tmp_path / "n.ipynb", tenant="t"))
    assert reason.startswith("malformed notebook: cell 0 is [[[") and len(reason) < 200


@pytest.mark.parametrize("output, key, found", [
    ({"output_type": "stream", "name": "stdout", "text": [1, 2, 3]}, "text", "a list holding int"),
    ({"output_type": "execute_result", "data": {"text/plain": [{"a": 1}]}}, "data.text/plain", "a list holding dict"),
    ({"output_type": "execute_result", "data": {"text/plain": 7}}, "data.text/plain", "int")])
def test_an_output_whose_text_is_not_text_is_left_out_and_named(tmp_path, output, key, found):
    good = {"output_type": "stream", "name": "stdout", "text": ["accuracy 0.91\n"]}
    cells = [{"cell_type": "markdown", "source": "# Run"},
             {"cell_type": "code", "source": "train()", "outputs": [output, good]}]
    (tmp_path / "outlist.ipynb").write_text(json.dumps({"cells": cells}))
    doc = only_document(load_path(tmp_path / "outlist.ipynb", tenant="t"))
    assert "train()" in doc.text and "accuracy 0.91" in doc.text
    assert doc.metadata["malformed_outputs"] == [f"cell 1 output 0: {key!r} is {found}, not text or a list of lines"]


def test_a_cell_source_list_of_numbers_names_the_cell_and_the_type(tmp_path):
    (tmp_path / "s.ipynb").write_text(json.dumps({"cells": [{"cell_type": "code", "source": ["x", 1]}]}))
    reason = only_skip(load_path(tmp_path / "s.ipynb", tenant="t"))
    assert reason.startswith("malformed notebook: cell 0 'source' is ['x', 1] (a list holding int)")


def test_a_cell_type_that_is_no_name_is_said_as_such(tmp_path):
    (tmp_path / "celltype.ipynb").write_text(json.dumps({"cells": [{"cell_type": 5, "source": "x"}]}))
    assert only_skip(load_path(tmp_path / "celltype.ipynb", tenant="t")) == (
        "malformed notebook: cell 0's 'cell_type' is 5 (int), not one of markdown, code, raw")


def test_an_unexpected_error_inside_the_notebook_reader_becomes_a_skip(tmp_path, monkeypatch):
    def broken(*_):
        raise TypeError("sequence item 0: expected str instance, int found")
    monkeypatch.setattr(mail_and_notebooks, "_fenced", broken)
    (tmp_path / "x.ipynb").write_text(json.dumps({"cells": [{"cell_type": "code", "source": "x"}]}))
    assert only_skip(load_path(tmp_path / "x.ipynb", tenant="t")) == (
        "malformed notebook: TypeError: sequence item 0: expected str instance, int found")


def test_a_mail_to_twenty_thousand_addresses_shows_a_few_and_counts_the_rest(tmp_path):
    addresses = ", ".join(f"user{n}@example.com" for n in range(20_000))
    subject = "S" * 1_000_000
    (tmp_path / "many.eml").write_text(f"From: a@heron.example\nTo: {addresses}\nCc: {addresses}\n"
                                       f"Subject: {subject}\n\nThe pump is fixed.\n")
    doc = only_document(load_path(tmp_path / "many.eml", tenant="t"))
    shown = mail_and_notebooks.MAX_ADDRESSES
    assert doc.metadata["to"] == [f"user{n}@example.com" for n in range(shown)]
    assert doc.metadata["to_more"] == doc.metadata["cc_more"] == 20_000 - shown
    assert "To: user0@example.com, user1@example.com" in doc.text
    assert f"user{shown - 1}@example.com \u2026 and {20_000 - shown} more\n" in doc.text
    assert f"user{shown}@example.com" not in doc.text
    assert len(doc.title) == mail_and_notebooks.MAX_TITLE_CHARS and doc.title.endswith("\u2026")
    subject_line = next(line for line in doc.text.splitlines() if line.startswith("Subject: "))
    assert len(subject_line) == len("Subject: ") + mail_and_notebooks.MAX_LINE_CHARS
    assert doc.text.endswith("The pump is fixed.") and len(doc.text) < 10_000


def test_a_header_with_an_encoded_line_break_is_read_on_one_line(tmp_path):
    (tmp_path / "inject.eml").write_text("From: =?utf-8?q?Evil=0D=0ABcc:_x@y.example?= <e@x.example>\n"
                                         "To: a@heron.example\nSubject: =?utf-8?q?hi=0Athere?=\n\nBody text.\n")
    doc = only_document(load_path(tmp_path / "inject.eml", tenant="t"))
    assert doc.metadata["from"] == "Evil Bcc: x@y.example <e@x.example>"
    assert doc.text.startswith("From: Evil Bcc: x@y.example <e@x.example>\nTo: a@heron.example\n")
    assert doc.text.endswith("Body text.") and "\r" not in doc.text


def test_rtf_binary_data_does_not_refuse_the_file_and_is_not_read_as_text(tmp_path):
    blob = bytes(range(0x80, 0x94)) + b"}{\\"  # not UTF-8, and braces and a backslash inside the data
    (tmp_path / "bin.rtf").write_bytes(b"{\\rtf1\\ansi Heron {\\pict\\bin" + str(len(blob)).encode() + b" " + blob
                                       + b"} pump \\bin3 \xff\xfe\xfd ready}")
    doc = only_document(load_path(tmp_path / "bin.rtf", tenant="t"))
    assert doc.text.split() == ["Heron", "pump", "ready"]
    assert "decoded_from" not in doc.metadata


def test_rtf_whose_binary_data_holds_nul_bytes_is_read_not_skipped_as_binary(tmp_path):
    """A picture written as ``\\bin`` data early in the file put NUL and control bytes in the first block the
    binary sniff reads: the whole document was skipped as "binary content"."""
    blob = bytes(range(0, 32)) * 40 + bytes(range(0x80, 0x100))  # NUL, control characters, bytes UTF-8 refuses
    rtf = (b"{\\rtf1\\ansi Heron {\\pict\\bin" + str(len(blob)).encode() + b" " + blob + b"} pump ready}")
    for name in ("pict.rtf", "pict.txt"):  # by its header, whatever its name
        (tmp_path / name).write_bytes(rtf)
        assert only_document(load_path(tmp_path / name, tenant="t")).text.split() == ["Heron", "pump", "ready"]
    (tmp_path / "fake.rtf").write_bytes(b"\x00" * 64 + b"{\\rtf1 not at the start}")
    assert only_skip(load_path(tmp_path / "fake.rtf", tenant="t")) == "binary content"


def test_rtf_text_after_a_stray_closing_brace_is_kept(tmp_path):
    (tmp_path / "unbal2.rtf").write_text("{\\rtf1\\ansi text }}}}}} more text }")
    assert only_document(load_path(tmp_path / "unbal2.rtf", tenant="t")).text == "text  more text"
    (tmp_path / "esc.rtf").write_text("{\\rtf1\\ansi a \\} b {\\b c} d}\n")  # escapes and groups as they were
    assert only_document(load_path(tmp_path / "esc.rtf", tenant="t")).text == "a } b c d"


def test_a_mail_body_of_8_bit_bytes_with_no_charset_is_read_as_windows_1252(tmp_path):
    """No charset named: the library read "Caf\\xe9" as a replacement mark (a probe)."""
    path = tmp_path / "visit.eml"
    path.write_bytes(b"From: a@b.example\nSubject: Visit\n\nCaf\xe9 cr\xe8me at the Gen\xe8ve office.\n")
    assert only_document(load_path(path, tenant="t")).text.endswith("Caf\u00e9 cr\u00e8me at the Gen\u00e8ve office.")


# ---- mail archives (.mbox, ingest/mbox.py) ------------------------------------------------------------------

def _message(n: int, subject: str, body: bytes, headers: bytes = b"") -> bytes:
    return (b"From sender%d@heron.example Mon Jan  6 09:00:00 2025\n" % n + b"From: Ana <ana@heron.example>\n"
            + b"Subject: " + subject.encode() + b"\nDate: Mon, 6 Jan 2025 09:%02d:00 +0000\n" % n + headers
            + b"\n" + body + b"\n")


def test_an_mbox_is_one_document_per_message_under_stable_ids(tmp_path):
    html = b"<html><body><nav>Menu</nav><p>The Kestrel pump is back in bay 3.</p></body></html>"
    archive = (_message(0, "Pump", b"The pump failed.\n>From the depot log: valve stuck.")
               + _message(1, "Fixed", html, b"Content-Type: text/html; charset=utf-8\n")
               + _message(2, "Caf\u00e9", "Caf\u00e9 ferm\u00e9 lundi.".encode("cp1252")))  # 8-bit, no charset
    (tmp_path / "box.mbox").write_bytes(archive)
    first = sources_of(tmp_path / "box.mbox")
    assert [d.source_id for d in first] == ["mail/box.mbox#0", "mail/box.mbox#1", "mail/box.mbox#2"]
    pump, fixed, cafe = first
    assert pump.title == "Pump" and pump.metadata["date"] == "2025-01-06T09:00:00+00:00"
    assert pump.text.startswith("From: Ana <ana@heron.example>\nDate: ")
    assert "\nFrom the depot log: valve stuck." in pump.text  # mboxrd's ">From " read back
    assert "The Kestrel pump is back in bay 3." in fixed.text and "Menu" not in fixed.text
    assert "Caf\u00e9 ferm\u00e9 lundi." in cafe.text and cafe.title == "Caf\u00e9"
    again = sources_of(tmp_path / "box.mbox")
    assert [(d.source_id, d.text, d.metadata) for d in again] == [(d.source_id, d.text, d.metadata) for d in first]


def sources_of(path):
    loaded = load_path(path, tenant="t", source_id=f"mail/{path.name}")
    assert all(isinstance(unit, Document) for unit in loaded), loaded
    return loaded


def test_an_mbox_of_two_hundred_thousand_messages_reads_the_cap_and_counts_the_rest(tmp_path):
    (tmp_path / "list.mbox").write_bytes(b"".join(
        b"From x@y Mon Jan  6 09:00:00 2025\nSubject: m%d\n\nhi %d\n\n" % (n, n) for n in range(200_000)))
    started = time.monotonic()
    loaded = load_path(tmp_path / "list.mbox", tenant="t", source_id="list.mbox")
    assert time.monotonic() - started < 60  # bounded: the messages past the cap are counted, not parsed
    cap = mbox.MAX_MBOX_MESSAGES
    docs, [left] = loaded[:-1], loaded[-1:]
    assert len(docs) == cap and all(isinstance(d, Document) for d in docs)
    assert docs[-1].source_id == f"list.mbox#{cap - 1}" and docs[-1].title == f"m{cap - 1}"
    assert isinstance(left, Skipped) and left.reason.startswith(f"{200_000 - cap:,} more messages not read")
    assert f"first {cap:,} messages" in left.reason


@pytest.mark.parametrize("raw, reason", [
    (b"Remember to water the ferns.\n", "not an mbox file (no 'From ' line first): it starts with b'Remember"),
    (b"From the desk of Ana\n", "not an mbox file (its 'From ' line is not followed by a mail header such as "
                                "'Subject:'): nothing follows it"),
    (b"From the desk of Ana\nwater the ferns\n", "not an mbox file (its 'From ' line is not followed by a mail "
                                                 "header such as 'Subject:'): the next line starts with b'water")])
def test_a_file_named_mbox_that_is_not_mail_is_a_skip_with_its_reason(tmp_path, raw, reason):
    (tmp_path / "notes.mbox").write_bytes(raw)
    assert only_skip(load_path(tmp_path / "notes.mbox", tenant="t")).startswith(reason)


@pytest.mark.parametrize("line", [b"word " * 10_000_000 + b"\n", b"a line of the body\n" * 2_700_000])
def test_a_message_of_fifty_megabytes_is_cut_and_the_next_one_is_read(tmp_path, line):
    (tmp_path / "big.mbox").write_bytes(_message(0, "Huge", line) + _message(1, "After", b"The small one."))
    huge, after = load_path(tmp_path / "big.mbox", tenant="t", source_id="big.mbox")
    cap = zip_xml_formats.MAX_DOCUMENT_CHARS
    assert isinstance(huge, Document) and len(huge.text) == cap and huge.metadata["max_chars"] == cap
    assert huge.metadata["max_message_bytes"] == mbox.MAX_MESSAGE_BYTES
    assert isinstance(after, Document) and after.source_id == "big.mbox#1" and "The small one." in after.text


def test_a_message_that_cannot_be_read_is_a_skip_of_its_own(tmp_path):
    empty = b"From x@y Mon Jan  6 09:00:00 2025\nX-Note: nothing else\n\n"
    (tmp_path / "mixed.mbox").write_bytes(_message(0, "Kept", b"First.") + empty + _message(2, "Also", b"Third."))
    first, bad, third = load_path(tmp_path / "mixed.mbox", tenant="t", source_id="mixed.mbox")
    assert isinstance(bad, Skipped) and bad.path.endswith("mixed.mbox#1")
    assert bad.reason == "e-mail without a subject or a text body"
    assert (first.source_id, third.source_id) == ("mixed.mbox#0", "mixed.mbox#2")


def test_an_mbox_saved_as_txt_is_read_as_the_text_it_is(tmp_path):
    """Text formats are known by their name, mail too (an .eml saved as .txt is text); only what would be
    unreadable as text is sniffed (a PDF, a zip, RTF's control words). Headers read as text still say who wrote
    what, when."""
    raw = _message(0, "Pump", b"The pump failed.")
    (tmp_path / "mail.txt").write_bytes(raw)
    doc = only_document(load_path(tmp_path / "mail.txt", tenant="t"))
    assert doc.text == raw.decode() and doc.title == ""
