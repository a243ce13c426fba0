"""Hostile notebooks, e-mails and RTF files (ingest/mail_and_notebooks.py): each is made in the test and is
either read, its bad parts left out and said so, or skipped with a reason naming the bad value, never an
exception out of the reader and never a slow parse (cases are small enough to be fast once capped)."""

from __future__ import annotations

import json

import pytest

from agent_memory.ingest import mail_and_notebooks
from agent_memory.ingest.sources import load_path
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
