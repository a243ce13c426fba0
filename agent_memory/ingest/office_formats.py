"""Files read from their bytes, not as text: which format a file is (by its bytes first, its name
second), and the readers of the zips of XML that office suites and e-book tools write: PowerPoint
(.pptx, python-pptx), Excel (.xlsx, openpyxl); EPUB and OpenDocument text (.odt) are read in
``zip_xml_formats.py``. Every zip is sized before it is opened (``_check_inflated``: zip bombs).

``read_document`` is the one door: the size and the bytes are checked, then the kind's reader runs.
Every reader returns ``Read`` or raises ``FormatError`` with the reason the job report shows.
"""

from __future__ import annotations

import zipfile
from itertools import zip_longest
from pathlib import Path

from agent_memory.ingest.formats import (
    MAX_DOCUMENT_BYTES,
    PDF_HEADER_WINDOW,
    PDF_MAGIC,
    FormatError,
    Read,
    _missing_extra,
    read_docx,
    read_pdf,
)
from agent_memory.ingest.mail_and_notebooks import read_eml
from agent_memory.ingest.zip_xml_formats import MAX_DOCUMENT_CHARS, read_epub, read_odt

ZIP_MAGIC = b"PK\x03\x04"
# The part each Office Open XML zip holds (a .docx renamed .pptx is read as the DOCX it is).
OOXML_PARTS = {".docx": "word/document.xml", ".pptx": "ppt/presentation.xml", ".xlsx": "xl/workbook.xml"}
# The first entry of an EPUB or OpenDocument zip, a file named "mimetype", holds this text.
ZIP_MIMETYPES = {".epub": "application/epub+zip", ".odt": "application/vnd.oasis.opendocument.text"}
# Rows read from one sheet. A sheet past this is a data dump: its further rows add bulk to every prompt
# search, not facts a person asks for; the metadata says how many were read and which sheets hold more.
MAX_SHEET_ROWS = 5_000
# What all the parts of one zip may inflate to. A file is parsed whole up to MAX_DOCUMENT_BYTES on disk, but
# a zip bomb inflates a thousandfold: a 3 MB deck holding 3 GiB of zeros took 6 GB of memory to open.
MAX_INFLATED_BYTES = 4 * MAX_DOCUMENT_BYTES
# A row this wide is data, not a table a person reads across: its empty cells are left out, not written as
# " | " each (2,000 rows holding A and XFD came out as 98 MB of separators).
WIDE_ROW_CELLS = 50


def _zip_kind(archive: zipfile.ZipFile) -> str | None:
    names = set(archive.namelist())
    for kind, part in OOXML_PARTS.items():
        if part in names:
            return kind
    if "mimetype" in names and archive.getinfo("mimetype").file_size < 200:
        mimetype = archive.read("mimetype").decode("ascii", errors="replace").strip()
        return next((kind for kind, name in ZIP_MIMETYPES.items() if name == mimetype), None)
    return None


def sniff_document(path: Path, head: bytes) -> str | None:
    """The kind (``.pdf``, ``.docx``, ``.pptx``, ``.xlsx``, ``.epub``, ``.odt``) the file's bytes say it is,
    whatever its name; else None. Magic numbers and zip parts, not the extension: a PDF saved as ``.txt``
    would otherwise be stored as its PDF syntax, and a DOCX named ``.pdf`` refused with a parser error that
    hides what it is. Here a PDF must start with its header (a note that quotes ``%PDF-`` further in is text)."""
    if head.startswith(PDF_MAGIC):
        return ".pdf"
    if head.startswith(ZIP_MAGIC):
        try:
            with zipfile.ZipFile(path) as archive:
                return _zip_kind(archive)
        except (OSError, zipfile.BadZipFile, KeyError):
            return None
    return None


def not_a(kind: str, head: bytes) -> FormatError:
    """The skip of a file named as ``kind`` whose bytes are not one (they are shown)."""
    if kind == ".pdf":
        what = f"no {PDF_MAGIC.decode()} header"
    elif kind in OOXML_PARTS:
        what = f"not a zip archive holding {OOXML_PARTS[kind]}"
    else:
        what = f"not a zip archive whose mimetype is {ZIP_MIMETYPES[kind]}"
    name = kind[1:].upper()
    article = "an" if name[0] in "AEFHILMNORSX" else "a"  # as said aloud: an EPUB, an XLSX, a PDF
    return FormatError(f"not {article} {name} file ({what}): it starts with {head[:16]!r}")


def read_document(path: Path, kind: str, head: bytes, size: int, sniffed: str | None) -> Read:
    """``path`` read as ``kind``: its bytes said so (``sniffed``, what ``sniff_document`` found), or its name
    did; a file named so whose bytes are not one is a ``not_a`` skip, a zip of another kind too (its kind
    would have been sniffed)."""
    if size > MAX_DOCUMENT_BYTES:
        raise FormatError(f"{kind} file of {size} bytes is too large to parse whole")
    if kind == ".pdf":
        if PDF_MAGIC not in head[:PDF_HEADER_WINDOW]:
            raise not_a(kind, head)
    elif kind != ".eml" and sniffed != kind:
        raise not_a(kind, head)
    if kind not in (".pdf", ".eml"):
        _check_inflated(path, kind)
    try:
        return DOCUMENT_READERS[kind](path)
    except FormatError:
        raise
    except Exception as exc:  # noqa: BLE001 - a hostile or damaged file: a skip with its reason, never a crash
        # Nesting past the parser's recursion, a bad number in an attribute, a compression method zipfile
        # lacks, corrupt deflate data: each reader's own guards name what they know, this names the rest.
        raise FormatError(f"unreadable {kind[1:].upper()}: {type(exc).__name__}: {str(exc)[:300]}") from None


def _check_inflated(path: Path, kind: str) -> None:
    """Refuse a zip whose parts would inflate past ``MAX_INFLATED_BYTES`` together, or one XML part past
    ``MAX_DOCUMENT_BYTES``, from the sizes its directory states, before any part is inflated. (zipfile checks
    each part's stated size as it reads it, so a part cannot inflate past what is stated here.)"""
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
    except (OSError, zipfile.BadZipFile) as exc:
        raise FormatError(f"damaged {kind[1:].upper()} (its zip directory does not read: {exc})") from None
    total = sum(info.file_size for info in infos)
    if total > MAX_INFLATED_BYTES:
        raise FormatError(f"its parts inflate to {total} bytes together, past the {MAX_INFLATED_BYTES} a document "
                          "is opened at (a zip bomb, or media far larger than its text)")
    for info in infos:
        if info.filename.endswith((".xml", ".rels", ".opf", ".xhtml", ".html", ".htm", ".ncx")) \
                and info.file_size > MAX_DOCUMENT_BYTES:
            raise FormatError(f"the part {info.filename!r} inflates to {info.file_size} bytes, too large to parse whole")


def _text_lines(text: str) -> str:
    """Office text with its soft line breaks (vertical tab) as lines, blank lines and edges dropped."""
    lines = (line.strip() for line in text.replace("\v", "\n").splitlines())
    return "\n".join(line for line in lines if line)


def _shapes(shapes):
    """Every shape, those inside groups too, in the slide's order."""
    for shape in shapes:
        inner = getattr(shape, "shapes", None)  # a group shape holds shapes of its own
        if inner is not None:
            yield from _shapes(inner)
        else:
            yield shape


def read_pptx(path: Path) -> Read:
    """Slide by slide (python-pptx): a ``## Slide N: <title>`` heading, so the splitter keeps a slide's text
    together, then its text frames and tables (cells `` | ``-joined), then its speaker notes marked as such.
    The title from the file's properties, else the first slide's."""
    try:
        from pptx import Presentation
    except ImportError:
        raise _missing_extra("PPTX", "python-pptx") from None
    try:
        deck = Presentation(str(path))
        blocks, titles, notes = [], [], 0
        for number, slide in enumerate(deck.slides, start=1):
            title_shape = slide.shapes.title
            title = _text_lines(title_shape.text_frame.text) if title_shape is not None else ""
            titles.append(title.replace("\n", " "))
            parts = [f"## Slide {number}: {titles[-1]}" if title else f"## Slide {number}"]
            for shape in _shapes(slide.shapes):
                if title_shape is not None and shape.shape_id == title_shape.shape_id:
                    continue
                if getattr(shape, "has_table", False) and shape.has_table:
                    parts.append("\n".join(" | ".join(_text_lines(cell.text).replace("\n", " ") for cell in row.cells)
                                           for row in shape.table.rows))
                elif shape.has_text_frame and (text := _text_lines(shape.text_frame.text)):
                    parts.append(text)
            if slide.has_notes_slide and (said := _text_lines(slide.notes_slide.notes_text_frame.text)):
                parts.append(f"Speaker notes: {said}")
                notes += 1
            if len(parts) > 1 or title:
                blocks.append("\n\n".join(parts))
        title = (deck.core_properties.title or "").strip() or next((t for t in titles if t), "")
    except Exception as exc:  # noqa: BLE001 - a damaged zip or XML raises many types
        raise FormatError(f"unreadable PPTX: {type(exc).__name__}: {exc}") from None
    if not blocks:
        raise FormatError("PPTX without text")
    return Read("\n\n".join(blocks), title, {"slides": len(titles), "slides_with_notes": notes})


def _cell(value) -> str:
    if value is None:
        return ""
    if hasattr(value, "isoformat"):  # dates and times: ISO text, as front matter dates are stored
        return value.isoformat()
    return str(value).strip()


def _sheet_rows(sheet, formulas, room: int) -> tuple[list[str], bool, int]:
    """The first ``MAX_SHEET_ROWS`` rows of a sheet that hold a value, within ``room`` characters, cells
    `` | ``-joined without the empty cells at their end (a row wider than ``WIDE_ROW_CELLS`` without any empty
    cell), and whether the sheet holds more (then left unread: counting them read a million-row sheet for 73 s).

    The dimensions the sheet states are dropped first: openpyxl pads every row out to them, and a 4.7 KB sheet
    stating A1:XFD1048576 for two cells was walked as seventeen billion empty cells.

    ``formulas``: the same sheet read for its formulas. A formula whose value was never computed (a workbook
    written by a program, not saved by a spreadsheet) has no value to read: its formula is shown instead
    ("=SUM(D2:D3)"), and counted (the third value returned), rather than the cell dropped in silence."""
    sheet.reset_dimensions()
    formulas.reset_dimensions()
    rows: list[str] = []
    uncomputed = 0
    for values, written in zip(sheet.iter_rows(values_only=True), formulas.iter_rows(values_only=True)):
        cells = []
        for value, formula in zip_longest(values, written):
            if value is None and isinstance(formula, str) and formula.startswith("="):
                value, uncomputed = formula, uncomputed + 1
            cells.append(_cell(value))
        while cells and not cells[-1]:
            cells.pop()
        if not cells:
            continue
        if len(rows) == MAX_SHEET_ROWS:
            return rows, True, uncomputed
        if len(cells) > WIDE_ROW_CELLS:
            cells = [cell for cell in cells if cell]
        line = " | ".join(cells)
        room -= len(line) + 1
        if room < 0:
            return rows, True, uncomputed
        rows.append(line)
    return rows, False, uncomputed


def read_xlsx(path: Path) -> Read:
    """Sheet by sheet (openpyxl, read only, the values last computed rather than formulas): a ``## <sheet>``
    heading, then each row's cells `` | ``-joined; fully empty rows skipped, trailing empty cells dropped.
    At most ``MAX_SHEET_ROWS`` rows a sheet and ``MAX_DOCUMENT_CHARS`` in all: ``rows_read`` says how many rows
    were read, ``sheets_cut`` which sheets hold more, left unread."""
    try:
        import openpyxl
    except ImportError:
        raise _missing_extra("XLSX", "openpyxl") from None
    blocks, names, cut = [], [], []
    read = uncomputed = 0
    room = MAX_DOCUMENT_CHARS
    try:
        # A file object, not the path: openpyxl refuses a name not ending .xlsx (a misnamed workbook is one).
        with path.open("rb") as handle, path.open("rb") as formula_handle:
            workbook = openpyxl.load_workbook(handle, read_only=True, data_only=True)
            written = openpyxl.load_workbook(formula_handle, read_only=True, data_only=False)
            try:
                for sheet, formulas in zip(workbook.worksheets, written.worksheets):
                    names.append(sheet.title)
                    if room <= 0:
                        cut.append(sheet.title)
                        continue
                    rows, more, without_value = _sheet_rows(sheet, formulas, room)
                    uncomputed += without_value
                    if more:
                        cut.append(sheet.title)
                    read += len(rows)
                    if rows:
                        blocks.append(f"## {sheet.title}\n\n" + "\n".join(rows))
                        room -= len(blocks[-1])
                title = (workbook.properties.title or "").strip()
            finally:
                workbook.close()
                written.close()
    except Exception as exc:  # noqa: BLE001 - a damaged zip or XML raises many types
        raise FormatError(f"unreadable XLSX: {type(exc).__name__}: {exc}") from None
    if not blocks:
        raise FormatError("XLSX without values")
    metadata: dict = {"sheets": names, "rows_read": read}
    if uncomputed:
        metadata["formulas_without_values"] = uncomputed
    if cut:
        metadata |= {"sheets_cut": cut, "max_sheet_rows": MAX_SHEET_ROWS, "max_chars": MAX_DOCUMENT_CHARS}
    return Read("\n\n".join(blocks), title, metadata)


# Each kind read from the file's bytes, by its reader.
DOCUMENT_READERS = {".pdf": read_pdf, ".docx": read_docx, ".pptx": read_pptx, ".xlsx": read_xlsx,
                    ".epub": read_epub, ".odt": read_odt, ".eml": read_eml}
