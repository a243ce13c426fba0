"""Text files with a structure of their own, read as what they are rather than as their syntax: Jupyter
notebooks (.ipynb, the standard library's json), e-mail (.eml, the standard library's email) and RTF
(.rtf, striprtf from the ``documents`` extra).

A notebook and an RTF file are decoded as other text is (``sources.read_path``: UTF-8, a byte-order
mark, the ``text_encodings`` setting). An e-mail is parsed from its bytes: each part names its own
charset and transfer encoding, which decoding the whole file as one text would break.
Every reader returns ``Read`` or raises ``FormatError`` with the reason the job report shows.
"""

from __future__ import annotations

import email
import json
import re
from email import policy
from email.message import EmailMessage
from pathlib import Path

from agent_memory.ingest.formats import FormatError, Read, _missing_extra, html_to_text

# A code cell's output is kept only up to this many characters: a printed metric or short result is what is
# asked about later ("what accuracy did the run reach?"); longer outputs (tables, logs, progress bars,
# tracebacks) are noise the next run rewrites. Errors, images and HTML outputs are never kept.
MAX_OUTPUT_CHARS = 1_000
_FENCED = re.compile(r"^ {0,3}(`{3,}|~{3,}).*?^ {0,3}\1", re.MULTILINE | re.DOTALL)  # its "#" lines are code
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$", re.MULTILINE)
# What an e-mail starts with: a header field ("Received:", "From:") or an mbox "From " separator line.
_HEADER_LINE = re.compile(rb"^(?:From |[!-9;-~]+:)")
_RTF_TITLE = re.compile(r"\{\\title\b ?((?:[^{}\\]|\\.)*)\}")


def _shown(value) -> str:
    """A bad value as a skip reason shows it: its repr, cut short."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _source(cell: dict, key: str, where: str) -> str:
    """A cell's text: a string, or the list of lines nbformat writes."""
    value = cell.get(key, "")
    if isinstance(value, list) and all(isinstance(line, str) for line in value):
        return "".join(value)
    if not isinstance(value, str):
        raise FormatError(f"malformed notebook: {where} {key!r} is {_shown(value)}, not text or a list of lines")
    return value


def _fenced(text: str, language: str) -> str:
    """``text`` in a fenced block longer than any backtick run inside it (code may quote a fence)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


def _output_text(outputs) -> str:
    """A code cell's stdout streams and plain-text results, or "" when there are none or they run long."""
    kept = []
    for output in outputs if isinstance(outputs, list) else []:
        if not isinstance(output, dict):
            continue
        if output.get("output_type") == "stream" and output.get("name") == "stdout":
            text = output.get("text", "")
        elif output.get("output_type") in ("execute_result", "pyout"):
            text = output.get("data", {}).get("text/plain", "") if isinstance(output.get("data"), dict) \
                else output.get("text", "")
        else:
            continue
        kept.append("".join(text) if isinstance(text, list) else text if isinstance(text, str) else "")
    out = "".join(kept).strip()
    return out if len(out) <= MAX_OUTPUT_CHARS else ""


def _notebook_cells(notebook: dict) -> list:
    if "cells" in notebook:  # nbformat 4
        cells = notebook["cells"]
    elif isinstance(notebook.get("worksheets"), list):  # nbformat 3: cells in worksheets
        cells = [cell for sheet in notebook["worksheets"] if isinstance(sheet, dict)
                 for cell in (sheet.get("cells") if isinstance(sheet.get("cells"), list) else [])]
    else:
        raise FormatError(f"malformed notebook: no 'cells' list (nbformat 4) nor 'worksheets' (nbformat 3); "
                          f"its keys are {_shown(sorted(notebook)[:8])}")
    if not isinstance(cells, list):
        raise FormatError(f"malformed notebook: 'cells' is {_shown(cells)}, not a list")
    return cells


def read_ipynb(raw: str) -> Read:
    """A Jupyter notebook as the document it reads as: markdown cells as Markdown, code cells as fenced code
    in the notebook's language (``metadata.kernelspec.language`` or ``language_info.name``), raw cells as
    text. Outputs are dropped but for short stdout and plain-text results (``MAX_OUTPUT_CHARS``: why).
    The title is the first Markdown heading. Malformed: a ``FormatError`` naming the cell and its bad value."""
    try:
        notebook = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise FormatError(f"malformed notebook: not JSON ({exc})") from None
    if not isinstance(notebook, dict):
        raise FormatError(f"malformed notebook: the top level is {_shown(notebook)}, not an object")
    meta = notebook.get("metadata") if isinstance(notebook.get("metadata"), dict) else {}
    spec = meta.get("kernelspec") if isinstance(meta.get("kernelspec"), dict) else {}
    info = meta.get("language_info") if isinstance(meta.get("language_info"), dict) else {}
    language = next((v for v in (spec.get("language"), info.get("name"), meta.get("language")) if isinstance(v, str)),
                    "").strip().lower()
    blocks, counts, title = [], {"markdown": 0, "code": 0}, ""
    for n, cell in enumerate(_notebook_cells(notebook)):
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
            raise FormatError(f"malformed notebook: cell {n} is {_shown(cell)}, not an object with a 'cell_type'")
        kind = cell["cell_type"]
        text = _source(cell, "input" if kind == "code" and "source" not in cell else "source", f"cell {n}")
        if not text.strip():
            continue
        if kind == "code":
            blocks.append(_fenced(text, language))
            if output := _output_text(cell.get("outputs")):
                blocks.append("Output:\n" + _fenced(output, ""))
        elif kind == "heading":  # nbformat 3's heading cell
            level = cell.get("level") if isinstance(cell.get("level"), int) else 1
            blocks.append("#" * min(max(level, 1), 6) + " " + text.strip())
            kind = "markdown"
        else:  # markdown, and raw cells (often front matter for a publishing tool) as written
            blocks.append(text.strip())
        if kind == "markdown" and not title and (heading := _HEADING.search(_FENCED.sub("", blocks[-1]))):
            title = heading.group(1).strip()
        counts[kind] = counts.get(kind, 0) + 1
    if not blocks:
        raise FormatError("notebook without text (every cell is empty)")
    metadata = {"markdown_cells": counts["markdown"], "code_cells": counts["code"]}
    if language:  # not "language": that key marks a whole document as code (retrieval/render.py)
        metadata["notebook_language"] = language
    return Read("\n\n".join(blocks), title, metadata)


def _addresses(message: EmailMessage, name: str) -> list[str]:
    header = message[name]
    if header is None:
        return []
    found = [str(address) for address in getattr(header, "addresses", ())]
    return found or [str(header)]


def _body(message: EmailMessage) -> str:
    """The text/plain body, else the text/html one as its text; "" when the message has neither."""
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    try:
        content = part.get_content()
    except LookupError:  # a charset Python does not know: read as UTF-8, bad bytes marked, not dropped
        content = (part.get_payload(decode=True) or b"").decode("utf-8", errors="replace")
    return html_to_text(content).text if part.get_content_type() == "text/html" else content.strip()


def read_eml(path: Path) -> Read:
    """One e-mail (RFC 822/5322): its From, To, Cc, Date and Subject lines, then its body (text/plain,
    else the HTML part's text). Subject is the title; From, To, Cc, Message-ID and Date (ISO text, as front
    matter dates are stored: the date filters read it) are metadata; attachments are not read, their names
    are listed (``attachments``)."""
    data = path.read_bytes()
    if not _HEADER_LINE.match(data.lstrip(b"\xef\xbb\xbf\r\n")):
        raise FormatError(f"not an EML file (no header line such as 'From:' first): it starts with {data[:16]!r}")
    try:
        message = email.message_from_bytes(data, policy=policy.default)
        subject = str(message["subject"] or "").strip()
        sender, to, cc = str(message["from"] or "").strip(), _addresses(message, "to"), _addresses(message, "cc")
        date = message["date"]
        when = getattr(date, "datetime", None) if date is not None else None
        attachments = [part.get_filename() or part.get_content_type() for part in message.walk()
                       if part.is_attachment()]
        body = _body(message)
    except Exception as exc:  # noqa: BLE001 - a damaged message raises many types
        raise FormatError(f"unreadable e-mail: {type(exc).__name__}: {exc}") from None
    if not body and not subject:
        raise FormatError("e-mail without a subject or a text body")
    metadata: dict = {"from": sender} if sender else {}
    metadata |= {key: value for key, value in (("to", to), ("cc", cc), ("attachments", attachments)) if value}
    if when is not None:
        metadata["date"] = when.isoformat()
    elif date is not None:  # not a date the filters can read: kept as written, under another key
        metadata["date_header"] = str(date)
    if message_id := str(message["message-id"] or "").strip():
        metadata["message_id"] = message_id
    lines = [f"{name}: {value}" for name, value in (("From", sender), ("To", ", ".join(to)), ("Cc", ", ".join(cc)),
                                                    ("Date", str(date or "")), ("Subject", subject)) if value]
    if attachments:
        lines.append("Attachments (not read): " + ", ".join(attachments))
    return Read("\n".join(lines) + ("\n\n" + body if body else ""), subject, metadata)


def read_rtf(raw: str) -> Read:
    """RTF's text (striprtf), its control words and embedded pictures dropped; the title from its info group.
    An escaped byte the file's code page cannot decode is kept as a replacement mark, not dropped."""
    if not raw.lstrip("\ufeff \t\r\n").startswith("{\\rtf"):
        raise FormatError(f"not an RTF file (no {{\\rtf header): it starts with {raw[:16]!r}")
    try:
        from striprtf.striprtf import rtf_to_text
    except ImportError:
        raise _missing_extra("RTF", "striprtf") from None
    try:
        text = rtf_to_text(raw, errors="replace")
        found = _RTF_TITLE.search(raw)
        title = rtf_to_text("{\\rtf1\\ansi " + found.group(1) + "}", errors="replace").strip() if found else ""
    except Exception as exc:  # noqa: BLE001 - the parser raises many types on a damaged file
        raise FormatError(f"unreadable RTF: {type(exc).__name__}: {exc}") from None
    lines = (line.rstrip() for line in text.splitlines())
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    if not text:
        raise FormatError("RTF without text")
    return Read(text, title)


# Text formats read as what they are, once decoded (sources.read_path).
TEXT_DOCUMENT_READERS = {".ipynb": read_ipynb, ".rtf": read_rtf}
