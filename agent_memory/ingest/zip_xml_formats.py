"""EPUB and OpenDocument text (.odt): zips of documented XML, read with the standard library's zipfile and
ElementTree (expat refuses entity expansion bombs; no external entity is fetched). ``office_formats.read_document``
sizes the zip before either reader opens it; each part is also refused here past what a document is parsed at.
"""

from __future__ import annotations

import posixpath
import zipfile
from pathlib import Path
from urllib.parse import unquote
from xml.etree import ElementTree

from agent_memory.ingest.formats import MAX_DOCUMENT_BYTES, FormatError, Read, html_to_text

# Text one document may hold once read (a workbook of sparse rows, a book whose spine repeats a chapter).
# About 500,000 tokens: what an agent's memory needs of one file, and a bound on what one file costs to embed.
MAX_DOCUMENT_CHARS = 2_000_000
# A run of spaces an OpenDocument ``text:s`` may stand for (a 399-byte file asked for 3,000,000,000).
MAX_ODF_SPACES = 1_000

_NS = {
    "container": "urn:oasis:names:tc:opendocument:xmlns:container",
    "opf": "http://www.idpf.org/2007/opf",
    "dc": "http://purl.org/dc/elements/1.1/",
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
}


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
            names = set(archive.namelist())
            if "META-INF/encryption.xml" in archive.namelist():  # fonts are often obfuscated; chapters only by DRM
                locked = _part(archive, "META-INF/encryption.xml").decode("utf-8", errors="replace")
                if any(chapter in locked or posixpath.relpath(chapter, base) in locked for chapter in chapters):
                    raise FormatError("encrypted EPUB (DRM): its chapters cannot be read")
            texts, missing, not_utf8 = [], [], []
            room = MAX_DOCUMENT_CHARS
            # Each chapter once, in its first place: a spine that lists one chapter twenty times is one chapter.
            for chapter in dict.fromkeys(chapters):
                if chapter not in names:  # a spine entry outside the book ("../../etc/passwd"), or lost
                    missing.append(chapter)
                    continue
                raw = _part(archive, chapter)
                try:
                    markup = raw.decode("utf-8-sig")
                except UnicodeDecodeError:  # one chapter in another encoding: read, marked, not the book lost
                    markup = raw.decode("utf-8", errors="replace")
                    not_utf8.append(chapter)
                page = html_to_text(markup)
                if page.text.strip():
                    texts.append(page.text[:room])
                    room -= len(texts[-1])
                    if room <= 0:
                        break
    except (OSError, zipfile.BadZipFile) as exc:
        raise FormatError(f"unreadable EPUB: {type(exc).__name__}: {exc}") from None
    if not texts:
        raise FormatError("EPUB without text")
    meta = package.find("opf:metadata", _NS)
    found = (lambda tag: [(e.text or "").strip() for e in meta.iterfind(f"dc:{tag}", _NS) if (e.text or "").strip()]
             ) if meta is not None else (lambda tag: [])
    metadata: dict = {"chapters": len(texts)}
    if missing:
        metadata["chapters_missing"] = missing[:20]
    if not_utf8:
        metadata["chapters_not_utf8"] = not_utf8[:20]
    if room <= 0:
        metadata["max_chars"] = MAX_DOCUMENT_CHARS  # the text was cut there
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
            count = child.get(f"{{{_NS['text']}}}c", "1")
            out.append(" " * min(int(count) if count.isdigit() else 1, MAX_ODF_SPACES))
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
