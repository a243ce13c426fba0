"""Mail archives (.mbox): every message of the file read as an e-mail of its own.

An mbox is messages one after another, each opened by a line that starts with "From " (every variant writes
it; a body line that starts so is written ">From ", read back here without its first ">", as mboxrd says).
The file is read over its bytes, line by line, with the standard library's ``email`` per message, not with
``mailbox.mbox``: that opens the file for writing, indexes every message of the file before the first is
read, and hands each over whole, where a hostile archive needs its reading bounded as it goes. Here at most
``MAX_MBOX_MESSAGES`` messages are read, ``MAX_MESSAGE_BYTES`` of each one and ``MAX_DOCUMENT_BYTES`` in
all; the messages past them are counted by a scan for their separators (bytes, not parsed) and said. A line
is read ``LINE_PIECE`` bytes at most at a time: a body of one 50 MB line is never held whole.

Each message is ``mail_and_notebooks.read_message``'s (headers capped, each part's own charset, 8-bit text
without one read as UTF-8 else Windows-1252, an HTML body as its text, the text cut at
``MAX_DOCUMENT_CHARS``). ``sources.read_path`` makes each a document under ``<file ID>#<n>``, n its place in
the file from 0, as a JSONL file's records are: the same bytes read again give the same IDs, and mail
appended to the archive (how mail clients write it) leaves the earlier messages' IDs as they were.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from agent_memory.ingest.formats import MAX_DOCUMENT_BYTES, FormatError, Read
from agent_memory.ingest.mail_and_notebooks import HEADER_LINE, read_message
from agent_memory.ingest.zip_xml_formats import MAX_DOCUMENT_CHARS

MBOX_EXTENSIONS = {".mbox"}
# Messages read from one archive. Each becomes a unit of its own, and a file's units are all read (and held)
# before the first is stored, then embedded one after another: ten thousand messages is a personal archive of
# years, past it (a mailing list's whole history, 200,000 one-line messages) the job would run for hours and
# hold them all at once. The messages after it are counted and named in the job's warnings: split the archive
# (mail clients export a folder or a year per file) to read them.
MAX_MBOX_MESSAGES = 10_000
# Bytes of one message parsed: its headers and text come first, what follows is mostly attachments (which are
# not read) or a body far past what one document keeps (MAX_DOCUMENT_CHARS; base64 holds 3 bytes in 4).
MAX_MESSAGE_BYTES = 4 * MAX_DOCUMENT_CHARS
# A line is read at most this many bytes at a time.
LINE_PIECE = 1 << 16
_SEPARATOR = b"From "
_SCAN_BLOCK = 1 << 20


@dataclass
class Mbox:
    """An archive as read: each message's place and its reading, or why it is not read; and the messages past
    the caps, not read (``left_out``, with the cap that left them out)."""

    messages: list[tuple[int, Read | str]] = field(default_factory=list)
    left_out: int = 0
    cap: str = ""


def read_mbox(path: Path) -> Mbox:
    """The messages of an mbox (module docstring); ``FormatError`` when the file is not one (its first line is
    no "From " line, or no mail header follows it)."""
    with path.open("rb") as handle:
        return _read(handle)


def _read(handle: BinaryIO) -> Mbox:
    out = Mbox()
    lines: list[bytes] | None = None  # the message being read
    size = total = 0
    cut = False  # the message being read was cut at MAX_MESSAGE_BYTES
    starts = True  # the next piece starts a line
    while piece := handle.readline(LINE_PIECE):
        line_start, starts = starts, piece.endswith(b"\n")
        if lines is None and not out.messages:  # before the first message: only a byte-order mark and blank lines
            head = piece.lstrip(b"\xef\xbb\xbf") if line_start else piece
            if not head.strip():
                continue
            if not (line_start and head.startswith(_SEPARATOR)):
                raise FormatError(f"not an mbox file (no 'From ' line first): it starts with {head[:16]!r}")
            lines, cut = [], False
            continue
        if line_start and piece.startswith(_SEPARATOR):
            _finish(out, lines, cut)
            index = len(out.messages)
            if index >= MAX_MBOX_MESSAGES or total >= MAX_DOCUMENT_BYTES:
                out.left_out = 1 + _separators_after(handle, piece[-len(_SEPARATOR):])
                out.cap = (f"{MAX_MBOX_MESSAGES:,} messages" if index >= MAX_MBOX_MESSAGES
                           else f"{MAX_DOCUMENT_BYTES:,} bytes of messages")
                return out
            lines, size, cut = [], 0, False
            continue
        if size + len(piece) > MAX_MESSAGE_BYTES:
            cut = True  # the rest of this message is passed over, unread
            _skip_message(handle, starts)
            starts = True
            continue
        if line_start and piece.startswith(b">") and piece.lstrip(b">").startswith(_SEPARATOR):
            piece = piece[1:]  # mboxrd: ">From " in a body is "From ", ">>From " is ">From "
        lines.append(piece)
        size += len(piece)
        total += len(piece)
    _finish(out, lines, cut)
    return out


def _skip_message(handle: BinaryIO, at_line_start: bool) -> None:
    """Pass over the rest of a message unread, in blocks of bytes: the file is left at its next "From " line, or
    at its end."""
    carry, marker = (b"\n" if at_line_start else b""), b"\n" + _SEPARATOR
    while block := handle.read(_SCAN_BLOCK):
        data = carry + block
        found = data.find(marker)
        if found >= 0:
            handle.seek(found + 1 - len(data), io.SEEK_CUR)  # back to the start of that line
            return
        carry = data[-len(_SEPARATOR):]


def _finish(out: Mbox, lines: list[bytes] | None, cut: bool) -> None:
    """The message of ``lines`` read into ``out``; the first one must be mail, or the file is no mbox."""
    if lines is None:  # no "From " line was found
        return
    data = b"".join(lines)
    first = data.lstrip(b"\r\n")
    if not out.messages and not HEADER_LINE.match(first):
        after = f"the next line starts with {first[:16]!r}" if first else "nothing follows it"
        raise FormatError(f"not an mbox file (its 'From ' line is not followed by a mail header such as 'Subject:'): "
                          f"{after}")
    try:
        read = read_message(data)
    except FormatError as exc:
        out.messages.append((len(out.messages), str(exc)))
        return
    if cut:
        read.metadata["max_message_bytes"] = MAX_MESSAGE_BYTES  # the message was read up to there
    out.messages.append((len(out.messages), read))


def _separators_after(handle: BinaryIO, before: bytes) -> int:
    """How many messages start in the rest of the file: its "From " lines, counted over blocks of bytes."""
    count, tail, marker = 0, before, b"\n" + _SEPARATOR
    while block := handle.read(_SCAN_BLOCK):
        data = tail + block
        count += data.count(marker)
        tail = data[-len(_SEPARATOR):]
    return count
