"""The formats a user's folders hold besides PDF and DOCX, read as what they are: PowerPoint, Excel, EPUB,
OpenDocument text, Jupyter notebooks, e-mail and RTF. Each file is made in the test; each is read by its bytes
when misnamed, a file named so that is not one says what it starts with, and without the extra the skip names it."""

from __future__ import annotations

import json
import shutil
import sys
import zipfile

from agent_memory.ingest import office_formats, sources
from agent_memory.ingest.formats import DOCUMENTS_EXTRA
from agent_memory.ingest.sources import SUPPORTED_EXTENSIONS, load_path
from tests.documents import write_docx
from tests.helpers import embedded_cli_env, run_cli
from tests.office_documents import (
    EML,
    RTF,
    notebook,
    only_document,
    only_skip,
    write_epub,
    write_odt,
    write_pptx,
    write_xlsx,
)

DECK = [{"title": "Heron rollout", "lines": ["Heron ships to Lyon in May", "Orla Vance owns the launch"],
         "notes": "Mention the Lyon depot opens at 6."},
        {"lines": ["Pumps on site"], "table": [["pump", "litres a minute"], ["P-7", "40"]]}]


def test_pptx_slide_by_slide_with_titles_tables_and_speaker_notes(tmp_path):
    doc = only_document(load_path(write_pptx(tmp_path / "deck.pptx", DECK), tenant="t"))
    assert doc.text.startswith("## Slide 1: Heron rollout\n\nHeron ships to Lyon in May\nOrla Vance owns the launch")
    assert "Speaker notes: Mention the Lyon depot opens at 6." in doc.text
    assert "## Slide 2\n\nPumps on site" in doc.text and "P-7 | 40" in doc.text
    assert doc.title == "Heron rollout"  # no title in the file's properties: the first slide's
    assert doc.metadata == {"slides": 2, "slides_with_notes": 1}
    titled = only_document(load_path(write_pptx(tmp_path / "t.pptx", DECK, title="Q3 review"), tenant="t"))
    assert titled.title == "Q3 review"


def test_xlsx_sheet_by_sheet_rows_joined_and_a_cap_that_says_what_it_left_out(tmp_path, monkeypatch):
    path = write_xlsx(tmp_path / "pumps.xlsx", {
        "Pumps": [["pump", "litres", "note"], ["P-7", 40, None], [None, None, None], ["P-9", 12.5, "spare"]],
        "Empty": [], "Staff": [["Orla Vance", "night shift"]]}, title="Plant inventory")
    doc = only_document(load_path(path, tenant="t"))
    assert doc.text == ("## Pumps\n\npump | litres | note\nP-7 | 40\nP-9 | 12.5 | spare\n\n"
                        "## Staff\n\nOrla Vance | night shift")
    assert doc.title == "Plant inventory"
    assert doc.metadata == {"sheets": ["Pumps", "Empty", "Staff"], "rows_read": 4}
    monkeypatch.setattr(office_formats, "MAX_SHEET_ROWS", 2)
    cut = only_document(load_path(path, tenant="t"))
    assert "P-9" not in cut.text and "Orla Vance" in cut.text
    assert cut.metadata == {"sheets": ["Pumps", "Empty", "Staff"], "rows_read": 3, "sheets_cut": ["Pumps"],
                            "max_sheet_rows": 2, "max_chars": office_formats.MAX_DOCUMENT_CHARS}


def test_epub_chapters_in_spine_order_with_the_package_metadata(tmp_path):
    path = write_epub(tmp_path / "book.epub", "The Heron Papers", "Orla Vance",
                      [("one.xhtml", "<h1>Arrival</h1><p>The Heron crew reached Lyon on a Tuesday.</p>"),
                       ("two.xhtml", "<nav>Contents</nav><p>Pump P-7 moved 40 litres a minute.</p>")])
    doc = only_document(load_path(path, tenant="t"))
    assert doc.text.index("reached Lyon") < doc.text.index("40 litres") and "Contents" not in doc.text
    assert doc.title == "The Heron Papers"
    assert doc.metadata == {"chapters": 2, "authors": ["Orla Vance"], "published": "2024-03-01"}


def test_odt_headings_paragraphs_lists_and_tables_in_order(tmp_path):
    body = ('<text:h text:outline-level="2">Decisions</text:h>'
            '<text:p>The Osprey budget<text:s text:c="2"/>rises<text:note><text:note-citation>1</text:note-citation>'
            '<text:note-body><text:p>per the board</text:p></text:note-body></text:note>.</text:p>'
            '<text:list><text:list-item><text:p>hire two welders</text:p></text:list-item></text:list>'
            '<table:table><table:table-row><table:table-cell><text:p>P-7</text:p></table:table-cell>'
            '<table:table-cell><text:p>40</text:p></table:table-cell></table:table-row></table:table>')
    doc = only_document(load_path(write_odt(tmp_path / "minutes.odt", "Board minutes", body), tenant="t"))
    assert doc.text == "## Decisions\n\nThe Osprey budget  rises (per the board).\n\n- hire two welders\n\nP-7 | 40"
    assert doc.title == "Board minutes"


def test_a_notebook_reads_as_markdown_and_fenced_code_with_short_outputs(tmp_path):
    raw = notebook([
        {"cell_type": "markdown", "source": "Intro without a heading.\n```\n# not a title\n```"},
        {"cell_type": "markdown", "source": "## Pump study\n\nWe measure the P-7 pump."},
        {"cell_type": "code", "source": "rate = 40\nprint(f'rate={rate}')\ndoc = '```'",
         "outputs": [{"output_type": "stream", "name": "stdout", "text": ["rate=40\n"]},
                     {"output_type": "stream", "name": "stderr", "text": ["DeprecationWarning\n"]}]},
        {"cell_type": "code", "source": "big()", "outputs": [
            {"output_type": "execute_result", "data": {"text/plain": ["row\n"] * 600}, "metadata": {}}]},
        {"cell_type": "code", "source": "fail()", "outputs": [
            {"output_type": "error", "ename": "ValueError", "evalue": "boom", "traceback": []}]},
        {"cell_type": "code", "source": "   "},
    ], language="python")
    (tmp_path / "study.ipynb").write_text(raw)
    doc = only_document(load_path(tmp_path / "study.ipynb", tenant="t"))
    assert doc.title == "Pump study"  # the first heading, not a comment inside a fence
    assert "````python\nrate = 40\nprint(f'rate={rate}')\ndoc = '```'\n````" in doc.text
    assert "Output:\n```\nrate=40\n```" in doc.text
    assert "DeprecationWarning" not in doc.text and "row" not in doc.text and "boom" not in doc.text
    assert '"cell_type"' not in doc.text and "```python\nbig()\n```" in doc.text
    assert doc.metadata == {"markdown_cells": 2, "code_cells": 3, "notebook_language": "python"}


def test_a_malformed_notebook_is_skipped_naming_the_bad_value(tmp_path):
    cases = {"cut.ipynb": '{"cells": [', "list.ipynb": "[1, 2]", "cells.ipynb": '{"cells": "none"}',
             "source.ipynb": json.dumps({"cells": [{"cell_type": "code", "source": 42}]}),
             "cell.ipynb": json.dumps({"cells": ["print(1)"]}),
             "empty.ipynb": json.dumps({"cells": [{"cell_type": "code", "source": ["  \n"]}]})}
    expected = {"cut.ipynb": "not JSON", "list.ipynb": "[1, 2]", "cells.ipynb": "'cells' is 'none'",
                "source.ipynb": "cell 0 'source' is 42", "cell.ipynb": "cell 0 is 'print(1)'",
                "empty.ipynb": "notebook without text (every cell is empty)"}
    for name, raw in cases.items():
        (tmp_path / name).write_text(raw)
        reason = only_skip(load_path(tmp_path / name, tenant="t"))
        assert reason.startswith(("malformed notebook", "notebook without")) and expected[name] in reason, name


def test_an_email_is_its_headers_and_plain_body_attachments_named_not_read(tmp_path):
    (tmp_path / "p7.eml").write_bytes(EML.encode("ascii"))
    doc = only_document(load_path(tmp_path / "p7.eml", tenant="t"))
    assert doc.title == "Heron pump P-7 service window"
    assert "serviced on Thursday by André Falk" in doc.text  # quoted-printable Latin-1, by its declared charset
    assert "HTML twin" not in doc.text and "thursday,early" not in doc.text
    assert doc.text.startswith("From: Orla Vance <orla@kestrel.example>\nTo: Tina Marsh")
    assert doc.metadata == {"from": "Orla Vance <orla@kestrel.example>",
                            "to": ["Tina Marsh <tina@kestrel.example>", "ops@kestrel.example"],
                            "attachments": ["schedule.csv"], "date": "2025-03-04T09:15:00+01:00",
                            "message_id": "<p7-window@kestrel.example>"}


def test_an_html_only_email_is_read_through_the_html_reader_and_a_non_email_is_skipped(tmp_path):
    (tmp_path / "news.eml").write_text("From: news@heron.example\nSubject: Weekly\nDate: someday\n"
                                       "Content-Type: text/html; charset=utf-8\n\n"
                                       "<html><body><nav>Menu</nav><p>Depot opens at 6.</p></body></html>\n")
    doc = only_document(load_path(tmp_path / "news.eml", tenant="t"))
    assert doc.text.endswith("\n\nDepot opens at 6.") and "Menu" not in doc.text
    assert doc.metadata["date_header"] == "someday" and "date" not in doc.metadata  # no date a filter reads
    (tmp_path / "note.eml").write_text("just some words\n")
    assert only_skip(load_path(tmp_path / "note.eml", tenant="t")).startswith("not an EML file")


def test_rtf_is_its_text_and_title_even_saved_as_txt(tmp_path):
    (tmp_path / "minutes.rtf").write_text(RTF)
    (tmp_path / "minutes.txt").write_text(RTF)
    for name in ("minutes.rtf", "minutes.txt"):
        doc = only_document(load_path(tmp_path / name, tenant="t"))
        assert doc.text == "The Kestrel board met in Café Nordwerk.\nDecision: the Osprey budget rises to 40 000 euros."
        assert doc.title == "Kestrel minutes", name
    (tmp_path / "fake.rtf").write_text("plain words")
    assert only_skip(load_path(tmp_path / "fake.rtf", tenant="t")).startswith("not an RTF file")


KESTREL_TEXT = "The Kestrel board met in Café Nordwerk.\nDecision: the Osprey budget rises to 40 000 euros."


def test_rtf_saved_as_txt_after_blank_space_is_read_as_rtf_everywhere(tmp_path, monkeypatch):
    """Its header after blank lines passed the binary check (which strips blank space) but the text was read as
    plain text, control words and all (the parse asked for the header at the very start). One rule decides now,
    on the file's first non-blank bytes: read as RTF whole, streamed or not, with ``\\bin`` data or not."""
    (tmp_path / "blank.txt").write_text("\n\n  \t" + RTF)
    (tmp_path / "bom.txt").write_text("\ufeff\r\n" + RTF)
    blob = bytes(range(0, 32)) * 8 + bytes(range(0x80, 0x100))  # NUL, control characters, bytes UTF-8 refuses
    (tmp_path / "pict.txt").write_bytes(b"\r\n\r\n{\\rtf1\\ansi Heron {\\pict\\bin" + str(len(blob)).encode() + b" "
                                        + blob + b"} pump ready}")
    for name in ("blank.txt", "bom.txt"):
        doc = only_document(load_path(tmp_path / name, tenant="t"))
        assert (doc.text, doc.title) == (KESTREL_TEXT, "Kestrel minutes"), name
    assert only_document(load_path(tmp_path / "pict.txt", tenant="t")).text.split() == ["Heron", "pump", "ready"]
    monkeypatch.setattr(sources, "STREAM_THRESHOLD_BYTES", 64)  # a large one is parsed whole, not streamed as text
    assert only_document(load_path(tmp_path / "blank.txt", tenant="t")).text == KESTREL_TEXT
    monkeypatch.setattr(sources, "MAX_DOCUMENT_BYTES", 128)  # too large to parse whole: skipped, as an .rtf is
    for name in ("blank.txt", "blank.rtf"):
        (tmp_path / name).write_text("\n\n  \t" + RTF)
        assert only_skip(load_path(tmp_path / name, tenant="t")).startswith("RTF file of 223 bytes is too large"), name


def test_text_that_only_mentions_an_rtf_header_is_text_everywhere(tmp_path):
    (tmp_path / "notes.txt").write_text("Paste this header: " + RTF)
    doc = only_document(load_path(tmp_path / "notes.txt", tenant="t"))
    assert doc.text.startswith("Paste this header: {\\rtf1\\ansi") and doc.title == ""

def test_office_and_ebook_files_under_the_wrong_name_are_read_by_their_bytes(tmp_path):
    made = {"deck": write_pptx(tmp_path / "deck.pptx", DECK),
            "book": write_xlsx(tmp_path / "book.xlsx", {"Staff": [["Orla Vance", "night shift"]]}),
            "epub": write_epub(tmp_path / "b.epub", "T", "A", [("c.xhtml", "<p>Heron crew in Lyon.</p>")]),
            "odt": write_odt(tmp_path / "m.odt", "M", "<text:p>Osprey budget rises.</text:p>"),
            "docx": write_docx(tmp_path / "r.docx", "", "Q3", ["Revenue grew 12 percent."], [["a"]])}
    for source, name, expected in (("deck", "deck.docx", "Lyon depot"), ("book", "staff.csv", "Orla Vance | night"),
                                   ("epub", "book.pdf", "Heron crew"), ("odt", "minutes.md", "Osprey budget"),
                                   ("docx", "slides.pptx", "12 percent"), ("book", "sheet.odt", "night shift")):
        shutil.copy(made[source], tmp_path / name)
        doc = only_document(load_path(tmp_path / name, tenant="t"))
        assert expected in doc.text and "PK" not in doc.text, name


def test_a_file_named_as_an_office_file_that_is_not_one_says_what_it_is(tmp_path):
    for name in ("fake.pptx", "fake.xlsx", "fake.epub", "fake.odt"):
        (tmp_path / name).write_text("plain words")
        reason = only_skip(load_path(tmp_path / name, tenant="t"))
        assert reason.startswith(f"not a{'n' if name[5] in 'xeo' else ''} {name[5:].upper()} file")
        assert "b'plain words'" in reason, reason
    with zipfile.ZipFile(tmp_path / "photos.xlsx", "w") as archive:  # a zip, but of something else
        archive.writestr("a.jpg", "x")
    assert "not a zip archive holding xl/workbook.xml" in only_skip(load_path(tmp_path / "photos.xlsx", tenant="t"))


def test_without_the_extra_each_skip_names_it(tmp_path, monkeypatch):
    paths = [write_pptx(tmp_path / "a.pptx", DECK), write_xlsx(tmp_path / "a.xlsx", {"S": [["x"]]})]
    (tmp_path / "a.rtf").write_text(RTF)
    for module in ("pptx", "openpyxl", "striprtf", "striprtf.striprtf"):
        monkeypatch.setitem(sys.modules, module, None)  # importing it now raises ImportError
    for path in [*paths, tmp_path / "a.rtf"]:
        assert DOCUMENTS_EXTRA in only_skip(load_path(path, tenant="t")), path


def test_the_new_extensions_are_supported_and_an_unsupported_one_lists_them_and_the_extra(tmp_path):
    assert {".pptx", ".xlsx", ".epub", ".odt", ".ipynb", ".eml", ".rtf"} <= SUPPORTED_EXTENSIONS
    (tmp_path / "slides.odp").write_bytes(b"PK\x03\x04")
    reason = only_skip(load_path(tmp_path / "slides.odp", tenant="t"))
    assert reason.startswith("unsupported extension '.odp'") and ".pptx" in reason and ".ipynb" in reason
    assert f".pdf, .docx, .pptx, .xlsx, .rtf with the optional extra {DOCUMENTS_EXTRA}" in reason


def test_facts_inside_a_deck_a_workbook_a_notebook_and_an_email_are_found_by_a_prompt(tmp_path, monkeypatch, capsys):
    embedded_cli_env(monkeypatch, tmp_path / "data")
    folder = tmp_path / "inbox"
    folder.mkdir()
    write_pptx(folder / "rollout.pptx", DECK)
    write_xlsx(folder / "turbines.xlsx", {"Sites": [["turbine", "site", "capacity MW"], ["T1", "Brest", 3.2],
                                                    ["T2", "Lorient", 4.1]]})
    (folder / "study.ipynb").write_text(notebook([
        {"cell_type": "markdown", "source": "# Osprey cache study\n\nThe Osprey cache warms in 3 seconds."},
        {"cell_type": "code", "source": "warm_seconds = 3"}]))
    (folder / "p7.eml").write_bytes(EML.encode("ascii"))
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, ["ingest", "inbox", "-r", "--json"])
    report = json.loads(out)
    assert code == 0 and report["files_ingested"] == 4 and not report["files_skipped"], (report, err)
    for question, fact, source in (
            ("Who owns the Heron launch?", "Orla Vance owns the launch", "inbox/rollout.pptx"),
            ("Which site has turbine T2?", "T2 | Lorient", "inbox/turbines.xlsx"),
            ("How long does the Osprey cache take to warm?", "warms in 3 seconds", "inbox/study.ipynb"),
            ("Who services the Heron pump P-7 on Thursday?", "André Falk", "inbox/p7.eml")):
        code, out, _ = run_cli(capsys, ["prompt", question, "--budget", "400"])
        assert code == 0 and fact in out and f"[S:{source}]" in out, (question, out)
    # The e-mail's Date is filterable as front matter dates are.
    where = json.dumps({"date": {"gte": "2025-03-01", "lte": "2025-03-31"}})
    code, out, _ = run_cli(capsys, ["prompt", "Who services the Heron pump?", "--where", where, "--budget", "400"])
    assert code == 0 and "[S:inbox/p7.eml]" in out and "[S:inbox/rollout.pptx]" not in out, out
