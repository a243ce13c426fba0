"""Hostile office files (a probe of the new readers): each is read within bounds or skipped with its reason,
never a hang, a memory blow-up or an exception out of the reader. Every file is built here, small."""

from __future__ import annotations

import zipfile

from agent_memory.core.records import Document
from agent_memory.ingest import office_formats, zip_xml_formats
from agent_memory.ingest.sources import Skipped, load_path
from tests.office_documents import rewrite_part, write_epub, write_odt, write_xlsx


def only_unit(loaded):
    [unit] = loaded
    return unit


def test_a_sheet_stating_a_million_rows_by_16384_columns_for_two_cells_is_read_as_two_cells(tmp_path):
    path = write_xlsx(tmp_path / "sparse.xlsx", {"Data": [["P-7 pumps 40 litres"]]})
    rewrite_part(path, "xl/worksheets/sheet1.xml",
             '<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/'
             '2006/main"><dimension ref="A1:XFD1048576"/><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>P-7 '
             'pumps 40 litres</t></is></c></row><row r="1048576"><c r="XFD1048576"><v>9</v></c></row></sheetData>'
             '</worksheet>')
    doc = only_unit(load_path(path, tenant="t"))  # walked as seventeen billion empty cells before
    assert isinstance(doc, Document) and doc.text == "## Data\n\nP-7 pumps 40 litres\n9"


def test_a_wide_sparse_row_is_its_values_not_thousands_of_separators(tmp_path):
    row = ["north"] + [None] * 200 + ["south"]
    doc = only_unit(load_path(write_xlsx(tmp_path / "wide.xlsx", {"Data": [row] * 3}), tenant="t"))
    assert doc.text == "## Data\n\nnorth | south\nnorth | south\nnorth | south"


def test_a_workbook_stops_at_the_character_cap_and_says_which_sheets_it_left(tmp_path, monkeypatch):
    monkeypatch.setattr(office_formats, "MAX_DOCUMENT_CHARS", 60)
    path = write_xlsx(tmp_path / "big.xlsx", {"A": [[f"row {n} of the first sheet"] for n in range(10)],
                                              "B": [["never read"]]})
    doc = only_unit(load_path(path, tenant="t"))
    assert len(doc.text) < 100 and "never read" not in doc.text
    assert doc.metadata["sheets_cut"] == ["A", "B"] and doc.metadata["max_chars"] == 60


def test_a_zip_bomb_is_refused_from_its_directory_before_anything_inflates(tmp_path):
    path = write_xlsx(tmp_path / "bomb.xlsx", {"Data": [["x"]]})
    with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("xl/media/zeros.bin", b"\0" * (office_formats.MAX_INFLATED_BYTES + 1))
    skipped = only_unit(load_path(path, tenant="t"))
    assert isinstance(skipped, Skipped) and "inflate to" in skipped.reason and "zip bomb" in skipped.reason


def test_an_odt_asking_for_three_billion_spaces_gets_a_bounded_run(tmp_path):
    body = '<text:p>left<text:s text:c="3000000000"/>right<text:s text:c="abc"/>end</text:p>'
    doc = only_unit(load_path(write_odt(tmp_path / "spaces.odt", "Spaces", body), tenant="t"))
    assert doc.text == "left" + " " * zip_xml_formats.MAX_ODF_SPACES + "right end"


def test_nesting_past_the_parser_is_a_skip_with_its_reason_not_a_traceback(tmp_path):
    deep = "<text:section>" * 5000 + "<text:p>x</text:p>" + "</text:section>" * 5000
    skipped = only_unit(load_path(write_odt(tmp_path / "deep.odt", "Deep", deep), tenant="t"))
    assert isinstance(skipped, Skipped) and skipped.reason.startswith("unreadable ODT: RecursionError")


def test_an_epub_reads_each_chapter_once_keeps_the_book_past_a_bad_entry_and_marks_another_encoding(tmp_path):
    path = write_epub(tmp_path / "book.epub", "Heron", "Orla Vance",
                      [("one.xhtml", "<p>The Heron crew reached Lyon.</p>"), ("two.xhtml", "<p>Caf\u00e9 at dawn.</p>")])
    opf = "OEBPS/content.opf"
    with zipfile.ZipFile(path) as archive:
        package = archive.read(opf).decode()
    spine = '<itemref idref="c0"/>' * 20 + '<itemref idref="evil"/><itemref idref="c1"/>'
    package = package.replace('<itemref idref="c0"/><itemref idref="c1"/>', spine).replace(
        "</manifest>", '<item id="evil" href="../../etc/passwd" media-type="application/xhtml+xml"/></manifest>')
    rewrite_part(path, opf, package)
    with zipfile.ZipFile(path) as archive:
        latin = archive.read("OEBPS/text/two.xhtml").decode().encode("latin-1")
    with zipfile.ZipFile(path) as archive:
        parts = {info.filename: archive.read(info) for info in archive.infolist()}
    parts["OEBPS/text/two.xhtml"] = latin
    with zipfile.ZipFile(path, "w") as archive:
        for part, data in parts.items():
            archive.writestr(part, data)
    doc = only_unit(load_path(path, tenant="t"))
    assert doc.text.count("The Heron crew reached Lyon.") == 1 and "Caf\ufffd at dawn." in doc.text
    assert doc.metadata["chapters_missing"] == ["../etc/passwd"] and doc.metadata["chapters_not_utf8"] == [
        "OEBPS/text/two.xhtml"]


def test_a_formula_never_computed_shows_its_formula_and_is_counted(tmp_path):
    """A workbook written by a program holds formulas without values: the cells were dropped in silence."""
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Orders"
    sheet.append(["item", "qty", "price", "total"])
    sheet.append(["saffron", 3, 12.5, "=B2*C2"])
    sheet.append(["sum", None, None, "=SUM(D2:D2)"])
    workbook.save(tmp_path / "orders.xlsx")
    doc = only_unit(load_path(tmp_path / "orders.xlsx", tenant="t"))
    assert "saffron | 3 | 12.5 | =B2*C2" in doc.text and "sum |  |  | =SUM(D2:D2)" in doc.text
    assert doc.metadata["formulas_without_values"] == 2


def test_a_folder_job_through_the_cli_skips_hostile_office_files_with_their_reasons_and_stores_the_rest(
        tmp_path, monkeypatch, capsys):
    """Where the probe saw them: `agent-memory ingest` of a folder. A workbook stating a million-row sheet hung
    the job for good and a zip bomb took gigabytes; now the job ends, each hostile file is a skip (or read
    within bounds) with its reason, and the good file beside them is stored and found."""
    import json

    from tests.helpers import embedded_cli_env, run_cli

    embedded_cli_env(monkeypatch, tmp_path / "data")
    folder = tmp_path / "inbox"
    folder.mkdir()
    sparse = write_xlsx(folder / "sparse.xlsx", {"Data": [["x"]]})
    rewrite_part(sparse, "xl/worksheets/sheet1.xml",
             '<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/'
             '2006/main"><dimension ref="A1:XFD1048576"/><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>Pump '
             'P-7 moves 40 litres</t></is></c></row></sheetData></worksheet>')
    bomb = write_xlsx(folder / "bomb.xlsx", {"Data": [["x"]]})
    with zipfile.ZipFile(bomb, "a", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("xl/media/zeros.bin", b"\0" * (office_formats.MAX_INFLATED_BYTES + 1))
    write_odt(folder / "notes.odt", "Notes", "<text:p>The Heron depot opens at six.</text:p>")
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, ["ingest", "inbox", "-r", "--json"])
    report = json.loads(out)
    assert code == 0 and report["files_ingested"] == 2, (report, err)
    [(skipped, why)] = report["files_skipped"]
    assert skipped.endswith("bomb.xlsx") and "zip bomb" in why
    code, out, _ = run_cli(capsys, ["prompt", "When does the Heron depot open?", "--budget", "400"])
    assert code == 0 and "[S:inbox/notes.odt]" in out and "opens at six" in out
