"""Small PDF and DOCX files made in a test: a hand-written PDF (one page per text, Helvetica) and a
DOCX written with python-docx, so no binary fixture is committed."""

from __future__ import annotations

from pathlib import Path

# Markdown with YAML front matter: a title, scalars, a date, a list, and a nested mapping (not kept).
FRONT = """---
title: Orion launch plan
status: draft
version: 3
published: 2025-05-01
tags: [launch, orion]
owner: {name: nested, dropped: true}
---
# Plan

The Orion launch moves to the Kestrel site in May.
"""


def _pdf_string(text: str) -> str:
    return "(" + text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ")"


def write_pdf(path: Path, pages: list[list[str]], title: str = "") -> Path:
    """A valid PDF whose pages hold the given lines, with cross-reference offsets computed."""
    objects: list[bytes] = []
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(len(pages)))
    font = 3 + 2 * len(pages)
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    for i, lines in enumerate(pages):
        ops = "BT /F1 12 Tf 14 TL 72 720 Td " + " ".join(f"{_pdf_string(line)} Tj T*" for line in lines) + " ET"
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R "
                       f"/Resources << /Font << /F1 {font} 0 R >> >> >>".encode())
        stream = ops.encode("latin-1")
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    objects.append(f"<< /Title {_pdf_string(title)} >>".encode("latin-1"))
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, len(objects), xref)
    path.write_bytes(bytes(out))
    return path


def write_docx(path: Path, title: str, heading: str, paragraphs: list[str], table: list[list[str]]) -> Path:
    import docx

    document = docx.Document()
    document.core_properties.title = title
    document.add_heading(heading, level=1)
    for text in paragraphs:
        document.add_paragraph(text)
    grid = document.add_table(rows=len(table), cols=len(table[0]))
    for r, row in enumerate(table):
        for c, value in enumerate(row):
            grid.cell(r, c).text = value
    document.save(str(path))
    return path
