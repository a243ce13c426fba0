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
import reprlib
from email import policy
from email.header import decode_header, make_header
from email.message import EmailMessage
from pathlib import Path

from agent_memory.ingest.formats import FormatError, Read, _missing_extra, html_to_text
from agent_memory.ingest.zip_xml_formats import MAX_DOCUMENT_CHARS

# A code cell's output is kept only up to this many characters: a printed metric or short result is what is
# asked about later ("what accuracy did the run reach?"); longer outputs (tables, logs, progress bars,
# tracebacks) are noise the next run rewrites. Errors, images and HTML outputs are never kept.
MAX_OUTPUT_CHARS = 1_000
_FENCED = re.compile(r"^ {0,3}(`{3,}|~{3,}).*?^ {0,3}\1", re.MULTILINE | re.DOTALL)  # its "#" lines are code
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$", re.MULTILINE)
# What an e-mail starts with: a header field ("Received:", "From:") or an mbox "From " separator line.
HEADER_LINE = re.compile(rb"^(?:From |[!-9;-~]+:)")
# E-mail headers are read from their raw value cut to this many characters before the standard library parses
# them: its address parser took 49 s on a To line of 50,000 addresses (589 KB), all of which then became prompt
# text and metadata. 8,000 characters hold a few hundred addresses and any real Subject.
MAX_HEADER_CHARS = 8_000
# A To or Cc line shows and keeps (metadata) at most this many addresses, the rest counted ("... and K more",
# metadata ``to_more``): a mailing list's recipients say little about the message and would crowd out its body.
MAX_ADDRESSES = 50
# The title (the Subject) is cut to this many characters, and each header line of the text (and header value in
# the metadata) to MAX_LINE_CHARS, the cut marked with an ellipsis: a 3 MB Subject is not a title.
MAX_TITLE_CHARS = 300
MAX_LINE_CHARS = 2_000
_RTF_TITLE = re.compile(r"\{\\title\b ?((?:[^{}\\]|\\.)*)\}")
_RTF_BIN = re.compile(r"\\bin(\d{0,10})(?![a-zA-Z]) ?")  # \binN, its space delimiter, then N bytes of data
_RTF_BRACE = re.compile(r"\\.|[{}]", re.DOTALL)  # an escape (\{ \} \\ among them) is no brace
CELL_TYPES = ("markdown", "code", "raw")  # and nbformat 3's "heading"; another name is read as raw text
# A cell's bad output is left out and named in the metadata (``malformed_outputs``), at most this many.
MAX_BAD_OUTPUTS_NAMED = 5
# A value in a skip reason: bounded in depth and length whatever the file holds (a plain repr of a list
# nested 900 deep recurses past Python's limit; one of a million items is megabytes).
_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother, _REPR.maxlist, _REPR.maxdict = 3, 80, 80, 6, 4


def _shown(value) -> str:
    """A bad value as a skip reason shows it: its repr, cut short."""
    text = _REPR.repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _kind(value) -> str:
    """What a value that should be text is: its type, and for a list the first item's that is no string."""
    if isinstance(value, list):
        odd = next((item for item in value if not isinstance(item, str)), None)
        return f"a list holding {type(odd).__name__}" if odd is not None else "a list"
    return type(value).__name__


def _text(value) -> str | None:
    """A string, or the list of lines nbformat writes, as one string; None for anything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(line, str) for line in value):
        return "".join(value)
    return None


def _source(cell: dict, key: str, where: str) -> str:
    """A cell's text: a string, or the list of lines nbformat writes."""
    value = cell.get(key, "")
    if (text := _text(value)) is None:
        raise FormatError(f"malformed notebook: {where} {key!r} is {_shown(value)} ({_kind(value)}), "
                          "not text or a list of lines")
    return text


def _fenced(text: str, language: str) -> str:
    """``text`` in a fenced block longer than any backtick run inside it (code may quote a fence)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


def _output_text(outputs, where: str, bad: list[str]) -> str:
    """A code cell's stdout streams and plain-text results, or "" when there are none or they run long. An
    output whose text is neither text nor a list of lines is left out and named in ``bad``."""
    kept = []
    for n, output in enumerate(outputs if isinstance(outputs, list) else []):
        if not isinstance(output, dict):
            continue
        if output.get("output_type") == "stream" and output.get("name") == "stdout":
            key, text = "text", output.get("text", "")
        elif output.get("output_type") in ("execute_result", "pyout"):
            key, text = ("data.text/plain", output["data"].get("text/plain", "")) \
                if isinstance(output.get("data"), dict) else ("text", output.get("text", ""))
        else:
            continue
        if (read := _text(text)) is None:
            bad.append(f"{where} output {n}: {key!r} is {_kind(text)}, not text or a list of lines")
            continue
        kept.append(read)
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
    The title is the first Markdown heading. Malformed: a ``FormatError`` naming the cell and its bad value;
    whatever else a hostile file makes the parsing raise becomes one too, never an exception out of here."""
    try:
        return _read_ipynb(raw)
    except RecursionError:
        raise FormatError("malformed notebook: JSON nested too deeply to read (arrays or objects nested "
                          "more than about 1,000 levels)") from None
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise FormatError(f"malformed notebook: {type(exc).__name__}: {str(exc)[:200]}") from None


def _read_ipynb(raw: str) -> Read:
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
    blocks, counts, title, bad = [], {"markdown": 0, "code": 0}, "", []
    for n, cell in enumerate(_notebook_cells(notebook)):
        if not isinstance(cell, dict) or "cell_type" not in cell:
            raise FormatError(f"malformed notebook: cell {n} is {_shown(cell)}, not an object with a 'cell_type'")
        kind = cell["cell_type"]
        if not isinstance(kind, str):
            raise FormatError(f"malformed notebook: cell {n}'s 'cell_type' is {_shown(kind)} "
                              f"({type(kind).__name__}), not one of {', '.join(CELL_TYPES)}")
        text = _source(cell, "input" if kind == "code" and "source" not in cell else "source", f"cell {n}")
        if not text.strip():
            continue
        if kind == "code":
            blocks.append(_fenced(text, language))
            if output := _output_text(cell.get("outputs"), f"cell {n}", bad):
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
    if bad:
        metadata["malformed_outputs"] = bad[:MAX_BAD_OUTPUTS_NAMED] + (
            [f"... and {len(bad) - MAX_BAD_OUTPUTS_NAMED} more"] if len(bad) > MAX_BAD_OUTPUTS_NAMED else [])
    return Read("\n\n".join(blocks), title, metadata)


def _header(message: EmailMessage, name: str) -> tuple[str | None, str]:
    """A header as the standard library parses it (policy.default: encoded words decoded, addresses read), from
    its raw value cut to ``MAX_HEADER_CHARS`` (an address list at a comma), and what was cut off; (None, "")
    when the message has none. A value the parser refuses (an encoded word holding CR/LF) is its decoded text
    on one line: the mail is still read."""
    raw = next((value for key, value in message.raw_items() if key.lower() == name), None)
    if raw is None:
        return None, ""
    raw, rest = re.sub(r"[\r\n]", "", str(raw)), ""  # unfolded, as policy.default's own fetch does
    if len(raw) > MAX_HEADER_CHARS:
        cut = raw.rfind(",", 0, MAX_HEADER_CHARS) if name in ("to", "cc") else -1
        cut = cut if cut > 0 else MAX_HEADER_CHARS
        raw, rest = raw[:cut], raw[cut:]
    try:
        return policy.default.header_factory(name, raw), rest
    except Exception:  # noqa: BLE001 - the header parser raises many types on a hostile value
        try:
            text = str(make_header(decode_header(raw)))
        except Exception:  # noqa: BLE001 - an encoded word that does not decode: the raw value
            text = raw
        return " ".join(text.split()), rest  # CR and LF among them: a header value is one line


def _cut(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, the cut marked."""
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "\u2026"


def _addresses(message: EmailMessage, name: str) -> tuple[list[str], int]:
    """A To or Cc line's first ``MAX_ADDRESSES`` addresses, and how many more it holds (those past
    ``MAX_HEADER_CHARS`` counted by their "@", not parsed)."""
    header, rest = _header(message, name)
    if header is None:
        return [], 0
    found = [str(address) for address in getattr(header, "addresses", ())] or [str(header)]
    more = max(len(found) - MAX_ADDRESSES, 0) + rest.count("@")
    return [_cut(address, MAX_LINE_CHARS) for address in found[:MAX_ADDRESSES]], more


def _listed(addresses: list[str], more: int) -> str:
    return ", ".join(addresses) + (f" \u2026 and {more} more" if more else "")


def _body(message: EmailMessage) -> str:
    """The text/plain body, else the text/html one as its text; "" when the message has neither."""
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    if part.get_param("charset") is None:
        # No charset named: the standard says ASCII, and the library reads 8-bit bytes as replacement marks
        # ("Caf\ufffd"). Such mail is UTF-8 or, from older clients, Windows-1252: tried in that order.
        raw = part.get_payload(decode=True) or b""
        try:
            content = raw.decode("utf-8")
        except UnicodeDecodeError:
            content = raw.decode("cp1252", errors="replace")
    else:
        try:
            content = part.get_content()
        except LookupError:  # a charset Python does not know: read as UTF-8, bad bytes marked, not dropped
            content = (part.get_payload(decode=True) or b"").decode("utf-8", errors="replace")
    return html_to_text(content).text if part.get_content_type() == "text/html" else content.strip()


def read_eml(path: Path) -> Read:
    """One e-mail (RFC 822/5322): its From, To, Cc, Date and Subject lines, then its body (text/plain,
    else the HTML part's text). Subject is the title; From, To, Cc, Message-ID and Date (ISO text, as front
    matter dates are stored: the date filters read it) are metadata; attachments are not read, their names
    are listed (``attachments``). Long headers are cut, and long address lists counted (``MAX_HEADER_CHARS``).
    Every problem is a ``FormatError``; a header the parser refuses is read as its text (``_header``). The text
    is cut at ``MAX_DOCUMENT_CHARS`` (metadata ``max_chars``), as any document read whole."""
    data = path.read_bytes()
    if not HEADER_LINE.match(data.lstrip(b"\xef\xbb\xbf\r\n")):
        raise FormatError(f"not an EML file (no header line such as 'From:' first): it starts with {data[:16]!r}")
    return read_message(data)


def read_message(data: bytes) -> Read:
    """One e-mail's bytes as ``read_eml`` reads them (an .eml file, a message of an mbox: ``ingest/mbox.py``)."""
    try:
        message = email.message_from_bytes(data, policy=policy.default)
        subject = str(_header(message, "subject")[0] or "").strip()
        sender = _cut(str(_header(message, "from")[0] or "").strip(), MAX_LINE_CHARS)
        (to, to_more), (cc, cc_more) = _addresses(message, "to"), _addresses(message, "cc")
        date = _header(message, "date")[0]
        when = getattr(date, "datetime", None) if date is not None else None
        message_id = _cut(str(_header(message, "message-id")[0] or "").strip(), MAX_LINE_CHARS)
        attachments = [part.get_filename() or part.get_content_type() for part in message.walk()
                       if part.is_attachment()]
        body = _body(message)
    except Exception as exc:  # noqa: BLE001 - a damaged message raises many types
        raise FormatError(f"unreadable e-mail: {type(exc).__name__}: {str(exc)[:200]}") from None
    if not body and not subject:
        raise FormatError("e-mail without a subject or a text body")
    metadata: dict = {"from": sender} if sender else {}
    metadata |= {key: value for key, value in (("to", to), ("to_more", to_more), ("cc", cc), ("cc_more", cc_more),
                                               ("attachments", attachments)) if value}
    if when is not None:
        metadata["date"] = when.isoformat()
    elif date is not None:  # not a date the filters can read: kept as written, under another key
        metadata["date_header"] = _cut(str(date), MAX_LINE_CHARS)
    if message_id:
        metadata["message_id"] = message_id
    lines = [f"{name}: {_cut(value, MAX_LINE_CHARS)}" for name, value in (
        ("From", sender), ("To", _listed(to, to_more)), ("Cc", _listed(cc, cc_more)), ("Date", str(date or "")),
        ("Subject", subject)) if value]
    if attachments:
        lines.append("Attachments (not read): " + ", ".join(attachments))
    text = "\n".join(lines) + ("\n\n" + body if body else "")
    if len(text) > MAX_DOCUMENT_CHARS:
        text, metadata["max_chars"] = text[:MAX_DOCUMENT_CHARS], MAX_DOCUMENT_CHARS
    return Read(text, _cut(subject, MAX_TITLE_CHARS), metadata)


def _without_binary(raw: str) -> str:
    """RTF without its ``\\binN`` blobs: N raw bytes (one character each, read_path decodes an RTF file that is not
    UTF-8 as Latin-1) that may hold anything, braces and backslashes too."""
    if "\\bin" not in raw:
        return raw
    parts, pos = [], 0
    while found := _RTF_BIN.search(raw, pos):
        parts.append(raw[pos:found.start()])
        pos = found.end() + int(found.group(1) or 0)
    return "".join(parts) + raw[pos:]


def _one_group(raw: str) -> str:
    """RTF whose outer group holds all its text: a closing brace that ends the document (or closes nothing)
    before text that follows is dropped, so that text is read (``{\\rtf1 a }} b }``: "a b", not "a")."""
    last = len(raw.rstrip("{} \t\r\n\x00"))  # past the last character that can be text
    depth, dropped = 0, []
    for token in _RTF_BRACE.finditer(raw, 0, last):
        if token.group() == "{":
            depth += 1
        elif token.group() == "}":
            if depth <= 1:
                dropped.append(token.start())
            else:
                depth -= 1
    if not dropped:
        return raw
    kept = (raw[a + 1:b] for a, b in zip([-1, *dropped], [*dropped, len(raw)], strict=True))
    return "".join(kept)


def looks_rtf(head: bytes | str) -> bool:
    """Whether a file's first bytes (or its text, read) are an RTF header, after a byte-order mark and blank
    space. Its ``\\bin`` data (pictures, objects) may hold any byte, NUL included, so such a file is not judged
    binary by its first block."""
    if isinstance(head, bytes):
        return head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{\\rtf")
    return head.lstrip("\ufeff \t\r\n").startswith("{\\rtf")


def read_rtf(raw: str) -> Read:
    """RTF's text (striprtf), its control words, embedded pictures and ``\\bin`` data dropped; the title from its
    info group. An escaped byte the file's code page cannot decode is kept as a replacement mark, not dropped;
    text after a stray closing brace is kept (``_one_group``)."""
    if not looks_rtf(raw):
        raise FormatError(f"not an RTF file (no {{\\rtf header): it starts with {raw[:16]!r}")
    try:
        from striprtf.striprtf import rtf_to_text
    except ImportError:
        raise _missing_extra("RTF", "striprtf") from None
    try:
        raw = _one_group(_without_binary(raw))
        text = rtf_to_text(raw, errors="replace")
        found = _RTF_TITLE.search(raw)
        title = rtf_to_text("{\\rtf1\\ansi " + found.group(1) + "}", errors="replace").strip() if found else ""
    except Exception as exc:  # noqa: BLE001 - the parser raises many types on a damaged file
        raise FormatError(f"unreadable RTF: {type(exc).__name__}: {str(exc)[:200]}") from None
    lines = (line.rstrip() for line in text.splitlines())
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    if not text:
        raise FormatError("RTF without text")
    return Read(text, _cut(title, MAX_TITLE_CHARS))


# Text formats read as what they are, once decoded (sources.read_path).
TEXT_DOCUMENT_READERS = {".ipynb": read_ipynb, ".rtf": read_rtf}
