"""Small office, e-book, notebook, e-mail and RTF files made in a test: PPTX and XLSX written by python-pptx
and openpyxl, EPUB and ODT zips and the text formats written by hand, so no binary fixture is committed."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from agent_memory.core.records import Document
from agent_memory.ingest.sources import Skipped


def write_pptx(path: Path, slides: list[dict], title: str = "") -> Path:
    """Slides of ``{"title", "lines", "table", "notes"}`` (each optional) on the title-and-content layout."""
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    deck.core_properties.title = title
    for spec in slides:
        slide = deck.slides.add_slide(deck.slide_layouts[1] if spec.get("title") else deck.slide_layouts[6])
        if spec.get("title"):
            slide.shapes.title.text = spec["title"]
            slide.placeholders[1].text_frame.text = "\n".join(spec.get("lines", []))
        elif spec.get("lines"):
            box = slide.shapes.add_textbox(Inches(1), Inches(1), Inches(6), Inches(1))
            box.text_frame.text = "\n".join(spec["lines"])
        if table := spec.get("table"):
            shape = slide.shapes.add_table(len(table), len(table[0]), Inches(1), Inches(4), Inches(6), Inches(1))
            for r, row in enumerate(table):
                for c, value in enumerate(row):
                    shape.table.cell(r, c).text = value
        if spec.get("notes"):
            slide.notes_slide.notes_text_frame.text = spec["notes"]
    deck.save(str(path))
    return path


def write_xlsx(path: Path, sheets: dict[str, list[list]], title: str = "") -> Path:
    import openpyxl

    workbook = openpyxl.Workbook()
    workbook.remove(workbook.active)
    workbook.properties.title = title
    for name, rows in sheets.items():
        sheet = workbook.create_sheet(name)
        for row in rows:
            sheet.append(row)
    workbook.save(str(path))
    return path


def _zip(path: Path, mimetype: str, parts: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo("mimetype"), mimetype)  # first and stored, as the formats ask
        for name, text in parts.items():
            archive.writestr(name, text)
    return path


def write_epub(path: Path, title: str, author: str, chapters: list[tuple[str, str]]) -> Path:
    """An EPUB whose spine lists ``chapters`` (file name, body HTML) in order; the manifest lists them reversed."""
    manifest = "".join(f'<item id="c{n}" href="text/{name}" media-type="application/xhtml+xml"/>'
                       for n, (name, _) in reversed(list(enumerate(chapters))))
    spine = "".join(f'<itemref idref="c{n}"/>' for n in range(len(chapters)))
    parts = {
        "META-INF/container.xml": '<?xml version="1.0"?><container version="1.0" '
        'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" '
        'media-type="application/oebps-package+xml"/></rootfiles></container>',
        "OEBPS/content.opf": '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
        f'<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>{title}</dc:title>'
        f'<dc:creator>{author}</dc:creator><dc:date>2024-03-01</dc:date></metadata>'
        f'<manifest>{manifest}</manifest><spine>{spine}</spine></package>',
    }
    for name, body in chapters:
        parts[f"OEBPS/text/{name}"] = ('<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
                                       f"<head><title>{name}</title></head><body>{body}</body></html>")
    return _zip(path, "application/epub+zip", parts)


ODT_NS = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
          'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
          'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"')


def write_odt(path: Path, title: str, body: str) -> Path:
    """An ODT whose office:text holds ``body`` (ODF XML, the namespaces ``ODT_NS`` declared)."""
    return _zip(path, "application/vnd.oasis.opendocument.text", {
        "content.xml": f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {ODT_NS} office:version="1.3">'
                       f"<office:body><office:text>{body}</office:text></office:body></office:document-content>",
        "meta.xml": '<?xml version="1.0" encoding="UTF-8"?><office:document-meta '
                    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
                    f'xmlns:dc="http://purl.org/dc/elements/1.1/"><office:meta><dc:title>{title}</dc:title>'
                    "</office:meta></office:document-meta>",
        "META-INF/manifest.xml": '<?xml version="1.0"?><manifest:manifest '
                                 'xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"/>',
    })


def notebook(cells: list[dict], language: str = "python") -> str:
    """nbformat 4 JSON: ``cells`` as ``{"cell_type", "source", "outputs"}``, sources as lists of lines."""
    out = []
    for cell in cells:
        source = cell["source"]
        lines = source.splitlines(keepends=True) if isinstance(source, str) else source
        out.append({"metadata": {}, **cell, "source": lines}
                   | ({"outputs": cell.get("outputs", []), "execution_count": 1} if cell["cell_type"] == "code" else {}))
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "cells": out, "metadata": {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": language},
        "language_info": {"name": language}}}, indent=1)


# A reply with a plain and an HTML body, a CSV attached, a Latin-1 body part (its charset declared).
EML = """From: Orla Vance <orla@kestrel.example>
To: Tina Marsh <tina@kestrel.example>, ops@kestrel.example
Subject: Heron pump P-7 service window
Date: Tue, 04 Mar 2025 09:15:00 +0100
Message-ID: <p7-window@kestrel.example>
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="outer"

--outer
Content-Type: multipart/alternative; boundary="inner"

--inner
Content-Type: text/plain; charset="iso-8859-1"
Content-Transfer-Encoding: quoted-printable

The Heron pump P-7 is serviced on Thursday by Andr=E9 Falk; the Brightwater line stops from 6 to 9.

--inner
Content-Type: text/html; charset="utf-8"

<html><body><p>HTML twin of the body.</p></body></html>
--inner--

--outer
Content-Type: text/csv
Content-Disposition: attachment; filename="schedule.csv"

day,shift
thursday,early
--outer--
"""

RTF = (r"{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0 Helvetica;}}{\info{\title Kestrel minutes}{\author Orla}}"
       "\n" r"\f0\fs24 The Kestrel board met in Caf\'e9 Nordwerk.\par" "\n"
       r"{\b Decision:} the Osprey budget rises to 40 000 euros.\par" "\n}")


def only_document(loaded) -> Document:
    """The one unit a reader made of a file, asserted to be a document."""
    [doc] = loaded
    assert isinstance(doc, Document), doc
    return doc


def only_skip(loaded) -> str:
    """The reason of the one unit a reader made of a file, asserted to be a skip."""
    [skip] = loaded
    assert isinstance(skip, Skipped), skip
    return skip.reason


def rewrite_part(path: Path, name: str, text: str) -> Path:
    """``path`` with its part ``name`` replaced by ``text`` (a zip cannot replace in place)."""
    with zipfile.ZipFile(path) as archive:
        parts = {info.filename: archive.read(info) for info in archive.infolist()}
    parts[name] = text.encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for part, data in parts.items():
            archive.writestr(part, data)
    return path


# A sheet whose dimension states every cell Excel can address (A1:XFD1048576, seventeen billion) for one value.
SHEET_STATING_EVERY_CELL = (
    '<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/'
    '2006/main"><dimension ref="A1:XFD1048576"/><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>{text}</t>'
    '</is></c></row></sheetData></worksheet>')


def write_sparse_xlsx(path: Path, text: str) -> Path:
    """A workbook of one sheet that states A1:XFD1048576 and holds ``text`` in A1."""
    write_xlsx(path, {"Data": [["x"]]})
    return rewrite_part(path, "xl/worksheets/sheet1.xml", SHEET_STATING_EVERY_CELL.format(text=text))


def add_zeros(path: Path, part: str, size: int) -> Path:
    """A zip bomb of ``path``: a part of ``size`` zeros appended (written in blocks, so the test never holds it)."""
    block = b"\0" * (1 << 20)
    with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as archive, archive.open(part, "w", force_zip64=True) as out:
        for start in range(0, size, len(block)):
            out.write(block[:size - start])
    return path


def write_docx(path: Path, paragraphs: list[str]) -> Path:
    import docx

    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    document.save(str(path))
    return path
