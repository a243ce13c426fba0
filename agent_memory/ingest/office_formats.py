"""Files read from their bytes, not as text: which format a file is (by its bytes first, its name
second), and the readers of the zips of XML that office suites and e-book tools write: PowerPoint
(.pptx, python-pptx), Excel (.xlsx, openpyxl), EPUB and OpenDocument text (.odt) with the standard
library's zipfile and ElementTree (expat refuses entity expansion bombs; no external entity is fetched).

``read_document`` is the one door: the size and the bytes are checked, then the kind's reader runs.
Every reader returns ``Read`` or raises ``FormatError`` with the reason the job report shows.
"""

from __future__ import annotations

import posixpath
import zipfile
from pathlib import Path
from urllib.parse import unquote
from xml.etree import ElementTree

from agent_memory.ingest.formats import (
    MAX_DOCUMENT_BYTES,
    PDF_HEADER_WINDOW,
    PDF_MAGIC,
    FormatError,
    Read,
    _missing_extra,
    html_to_text,
    read_docx,
    read_pdf,
)
from agent_memory.ingest.mail_and_notebooks import read_eml

ZIP_MAGIC = b"PK\x03\x04"
# The part each Office Open XML zip holds (a .docx renamed .pptx is read as the DOCX it is).
OOXML_PARTS = {".docx": "word/document.xml", ".pptx": "ppt/presentation.xml", ".xlsx": "xl/workbook.xml"}
# The first entry of an EPUB or OpenDocument zip, a file named "mimetype", holds this text.
ZIP_MIMETYPES = {".epub": "application/epub+zip", ".odt": "application/vnd.oasis.opendocument.text"}
# Rows read from one sheet. A sheet past this is a data dump: its further rows add bulk to every prompt
# search, not facts a person asks for; how many were read and how many left out is in the metadata.
MAX_SHEET_ROWS = 5_000

_NS = {
    "container": "urn:oasis:names:tc:opendocument:xmlns:container",
    "opf": "http://www.idpf.org/2007/opf",
    "dc": "http://purl.org/dc/elements/1.1/",
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
}


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


def read_document(path: Path, kind: str, head: bytes, size: int) -> Read:
    """``path`` read as ``kind``: its bytes said so (``sniff_document``), or its name did; a file named so
    whose bytes are not one is a ``not_a`` skip, a zip of another kind too (its kind would have been sniffed)."""
    if size > MAX_DOCUMENT_BYTES:
        raise FormatError(f"{kind} file of {size} bytes is too large to parse whole")
    if kind == ".pdf":
        if PDF_MAGIC not in head[:PDF_HEADER_WINDOW]:
            raise not_a(kind, head)
    elif kind != ".eml" and sniff_document(path, head) != kind:
        raise not_a(kind, head)
    return DOCUMENT_READERS[kind](path)


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


def _sheet_rows(sheet) -> tuple[list[str], int]:
    """The first ``MAX_SHEET_ROWS`` rows of a sheet that hold a value, cells `` | ``-joined without the empty
    cells at their end, and how many such rows are past them (counted, not kept: the metadata says so)."""
    rows, beyond = [], 0
    for values in sheet.iter_rows(values_only=True):
        cells = [_cell(value) for value in values]
        while cells and not cells[-1]:
            cells.pop()
        if cells and len(rows) < MAX_SHEET_ROWS:
            rows.append(" | ".join(cells))
        elif cells:
            beyond += 1
    return rows, beyond


def read_xlsx(path: Path) -> Read:
    """Sheet by sheet (openpyxl, read only, the values last computed rather than formulas): a ``## <sheet>``
    heading, then each row's cells `` | ``-joined; fully empty rows skipped, trailing empty cells dropped.
    At most ``MAX_SHEET_ROWS`` rows a sheet: ``rows_read`` and ``rows_left_out`` (with ``sheets_cut``) say so."""
    try:
        import openpyxl
    except ImportError:
        raise _missing_extra("XLSX", "openpyxl") from None
    blocks, names, cut = [], [], []
    read = left_out = 0
    try:
        # A file object, not the path: openpyxl refuses a name not ending .xlsx (a misnamed workbook is one).
        with path.open("rb") as handle:
            workbook = openpyxl.load_workbook(handle, read_only=True, data_only=True)
            try:
                for sheet in workbook.worksheets:
                    names.append(sheet.title)
                    rows, beyond = _sheet_rows(sheet)
                    if beyond:
                        cut.append(sheet.title)
                    read, left_out = read + len(rows), left_out + beyond
                    if rows:
                        blocks.append(f"## {sheet.title}\n\n" + "\n".join(rows))
                title = (workbook.properties.title or "").strip()
            finally:
                workbook.close()
    except Exception as exc:  # noqa: BLE001 - a damaged zip or XML raises many types
        raise FormatError(f"unreadable XLSX: {type(exc).__name__}: {exc}") from None
    if not blocks:
        raise FormatError("XLSX without values")
    metadata = {"sheets": names, "rows_read": read}
    if left_out:
        metadata |= {"rows_left_out": left_out, "sheets_cut": cut, "max_sheet_rows": MAX_SHEET_ROWS}
    return Read("\n\n".join(blocks), title, metadata)


def _part(archive: zipfile.ZipFile, name: str) -> bytes:
    """A part of the zip, refused when it would inflate past what a document is parsed at (a zip bomb)."""
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise FormatError(f"the part {name!r} is missing from the archive") from None
    if info.file_size > MAX_DOCUMENT_BYTES:
        raise FormatError(f"the part {name!r} inflates to {info.file_size} bytes, too large to parse whole")
    return archive.read(info)


def _xml(archive: zipfile.ZipFile, name: str) -> ElementTree.Element:
    try:
        return ElementTree.fromstring(_part(archive, name))
    except ElementTree.ParseError as exc:
        raise FormatError(f"malformed XML in {name!r}: {exc}") from None


def read_epub(path: Path) -> Read:
    """The chapters in the book's reading order (the OPF package's spine), each read as HTML is
    (``html_to_text``); title, authors and date from the package's Dublin Core metadata. With the standard
    library: an EPUB is a zip of XHTML, and the maintained EPUB library (ebooklib) is AGPL-licensed."""
    try:
        with zipfile.ZipFile(path) as archive:
            container = _xml(archive, "META-INF/container.xml")
            rootfile = container.find(".//container:rootfile", _NS)
            if rootfile is None or not rootfile.get("full-path"):
                raise FormatError("META-INF/container.xml names no package (rootfile)")
            opf_path = rootfile.get("full-path")
            package = _xml(archive, opf_path)
            items = {item.get("id"): item.get("href", "") for item in package.iterfind("opf:manifest/opf:item", _NS)}
            hrefs = [items.get(ref.get("idref"), "") for ref in package.iterfind("opf:spine/opf:itemref", _NS)]
            base = posixpath.dirname(opf_path)
            chapters = [posixpath.normpath(posixpath.join(base, unquote(href.split("#")[0]))) for href in hrefs if href]
            if "META-INF/encryption.xml" in archive.namelist():  # fonts are often obfuscated; chapters only by DRM
                locked = _part(archive, "META-INF/encryption.xml").decode("utf-8", errors="replace")
                if any(chapter in locked or posixpath.relpath(chapter, base) in locked for chapter in chapters):
                    raise FormatError("encrypted EPUB (DRM): its chapters cannot be read")
            texts = []
            for chapter in chapters:
                try:
                    page = html_to_text(_part(archive, chapter).decode("utf-8-sig"))
                except UnicodeDecodeError as exc:
                    raise FormatError(f"chapter {chapter!r} is not UTF-8: {exc}") from None
                if page.text.strip():
                    texts.append(page.text)
    except (OSError, zipfile.BadZipFile) as exc:
        raise FormatError(f"unreadable EPUB: {type(exc).__name__}: {exc}") from None
    if not texts:
        raise FormatError("EPUB without text")
    meta = package.find("opf:metadata", _NS)
    found = (lambda tag: [(e.text or "").strip() for e in meta.iterfind(f"dc:{tag}", _NS) if (e.text or "").strip()]
             ) if meta is not None else (lambda tag: [])
    metadata = {"chapters": len(texts)}
    if authors := found("creator"):
        metadata["authors"] = authors
    if dates := found("date"):
        metadata["published"] = dates[0]
    return Read("\n\n".join(texts), next(iter(found("title")), ""), metadata)


def _odf_inline(element: ElementTree.Element) -> str:
    """A paragraph's text: spans and links as their text, ``text:s`` as its count of spaces, tabs and line
    breaks as such, a footnote's body kept (its number is not); annotations (comments) are not the document."""
    out = [element.text or ""]
    for child in element:
        tag = child.tag.rsplit("}", 1)[-1]
        if tag == "s":
            out.append(" " * int(child.get(f"{{{_NS['text']}}}c", "1")))
        elif tag == "tab":
            out.append("\t")
        elif tag == "line-break":
            out.append("\n")
        elif tag not in ("note-citation", "annotation", "annotation-end", "bookmark", "soft-page-break"):
            out.append(_odf_inline(child) if tag != "note-body" else " (" + _odf_inline(child).strip() + ")")
        out.append(child.tail or "")
    return "".join(out)


def _odf_blocks(element: ElementTree.Element, blocks: list[str], bullet: str = "") -> None:
    """Headings (as Markdown headings), paragraphs, list items and tables, in document order."""
    for child in element:
        tag = child.tag.rsplit("}", 1)[-1]
        if tag == "h" or tag == "p":
            text = _odf_inline(child).strip()
            if text and tag == "h":
                level = child.get(f"{{{_NS['text']}}}outline-level", "1")
                text = "#" * min(int(level) if level.isdigit() else 1, 6) + " " + text
            if text:
                blocks.append(bullet + text)
        elif tag == "table":
            rows = [" | ".join(" ".join(_odf_inline(p).strip() for p in cell.iter(f"{{{_NS['text']}}}p"))
                               for cell in row.iterfind("table:table-cell", _NS))
                    for row in child.iter(f"{{{_NS['table']}}}table-row")]
            rows = [row for row in rows if row.strip(" |")]
            if rows:
                blocks.append("\n".join(rows))
        elif tag == "list-item":
            _odf_blocks(child, blocks, "- ")
        elif tag not in ("annotation", "tracked-changes", "sequence-decls", "variable-decls"):
            _odf_blocks(child, blocks, bullet)


def read_odt(path: Path) -> Read:
    """An OpenDocument text's body (content.xml) in document order, headings as Markdown headings; the title
    from meta.xml. With the standard library: the format is a zip of documented XML, and odfpy is unmaintained."""
    try:
        with zipfile.ZipFile(path) as archive:
            content = _xml(archive, "content.xml")
            meta = _xml(archive, "meta.xml") if "meta.xml" in archive.namelist() else None
    except (OSError, zipfile.BadZipFile) as exc:
        raise FormatError(f"unreadable ODT: {type(exc).__name__}: {exc}") from None
    body = content.find("office:body/office:text", _NS)
    blocks: list[str] = []
    if body is not None:
        _odf_blocks(body, blocks)
    if not blocks:
        raise FormatError("ODT without text")
    title = meta.find(".//dc:title", _NS) if meta is not None else None
    return Read("\n\n".join(blocks), (title.text or "").strip() if title is not None else "")


# Each kind read from the file's bytes, by its reader.
DOCUMENT_READERS = {".pdf": read_pdf, ".docx": read_docx, ".pptx": read_pptx, ".xlsx": read_xlsx,
                    ".epub": read_epub, ".odt": read_odt, ".eml": read_eml}
