"""Bytes into text: a file's encoding (UTF-8, UTF-16/32 by its byte-order mark, or a fallback the
``text_encodings`` setting names), the skip reason of bytes that do not decode, and whether a file is blank
or binary. Used by ``ingest/sources.py``; large files are checked block by block, never held whole."""

from __future__ import annotations

import codecs
import itertools
from pathlib import Path
from typing import Sequence

# Text is UTF-8 unless a byte-order mark says otherwise (Windows tools save UTF-16 with one);
# UTF-32's marks first: UTF-32-LE's begins with UTF-16-LE's. The codecs named drop the mark.
BYTE_ORDER_MARKS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
                    (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
READ_BLOCK = 1 << 20


def text_encoding(head: bytes) -> str:
    """The codec of a text file from its first bytes: UTF-16/32 by their byte-order mark, else UTF-8."""
    return next((codec for bom, codec in BYTE_ORDER_MARKS if head.startswith(bom)), "utf-8-sig")


def decoded(data: bytes, encoding: str, fallbacks: Sequence[str]) -> tuple[str, str | None]:
    """The text of a file and the fallback encoding it was read in (None: its own). A file that is not UTF-8
    is read in the first of ``fallbacks`` (the ``text_encodings`` setting) that decodes it whole; one whose
    byte-order mark names its encoding is never read in another. Raises the UTF-8 error when none reads it."""
    try:
        return data.decode(encoding), None  # a byte-order mark is not text
    except UnicodeDecodeError:
        if encoding != "utf-8-sig":
            raise
        for fallback in fallbacks:
            try:
                return data.decode(fallback), fallback
            except UnicodeDecodeError:
                continue
        raise


def decoding_error(exc: UnicodeDecodeError, encoding: str, start: int = 0, tried: Sequence[str] = ()) -> str:
    """The skip of text that does not decode: where (a byte offset in the file), the bytes, what is read."""
    name = "UTF-8" if encoding == "utf-8-sig" else encoding.upper()
    if encoding != "utf-8-sig":  # a byte-order mark names the encoding: no other is tried, none to suggest
        also = ""
    elif tried:
        also = f", then {', '.join(tried)} (text_encodings)"
    else:
        also = " (AGENT_MEMORY_TEXT_ENCODINGS names others to try, e.g. gb18030 or cp1252)"
    return (f"invalid {name} at byte {start + exc.start} ({exc.object[exc.start:exc.start + 4]!r}): text is read as "
            f"UTF-8, or UTF-16/UTF-32 with a byte-order mark{also}; save the file as UTF-8")


def check_decodes(path: Path, encoding: str, tried: Sequence[str] = ()) -> str | None:
    """A large file decoded block by block without keeping it: the skip reason (``tried``: the fallbacks
    that did not read it either, as ``decoding_error`` names them), or None."""
    # Plain UTF-8 reads a UTF-8 mark as a character, so its offsets count every byte of the file.
    decoder = codecs.getincrementaldecoder("utf-8" if encoding == "utf-8-sig" else encoding)()
    start = 0  # of the block in the file
    with path.open("rb") as handle:
        for block in itertools.chain(iter(lambda: handle.read(READ_BLOCK), b""), [b""]):  # b"": the end
            try:
                decoder.decode(block, final=not block)
            except UnicodeDecodeError as exc:
                # The decoder read the bytes it held back from the block before, then this block.
                return decoding_error(exc, encoding, start - (len(exc.object) - len(block)), tried)
            start += len(block)
    return None


def fallback_now(path: Path, fallbacks: Sequence[str]) -> str | None:
    """The one of ``fallbacks`` (the ``text_encodings`` setting) a text file is read in now, as ``decoded`` and
    the large-file path of ``sources.load_path`` pick it: None when it reads in its own encoding (UTF-8, or
    UTF-16/32 by its mark) or in none of them. Decodes the whole file block by block; the caller asks only
    for files stored read in a fallback (a UTF-8 file's manifest never sends it here)."""
    with path.open("rb") as handle:
        head = handle.read(4)  # the longest byte-order mark
    encoding = text_encoding(head)
    if encoding != "utf-8-sig" or check_decodes(path, encoding) is None:
        return None
    return first_fallback(path, fallbacks)


def first_fallback(path: Path, fallbacks: Sequence[str]) -> str | None:
    """The first of ``fallbacks`` that decodes the file whole, block by block; None when none does."""
    return next((e for e in fallbacks if check_decodes(path, e) is None), None)


def blank(path: Path, head: bytes, size: int) -> bool:
    """Nothing but whitespace: read past ``head`` only when it is all blank (a file padded with
    blank lines is not empty, and an empty one removes what was stored before)."""
    if head.strip():
        return False
    if size <= len(head):
        return True
    with path.open("rb") as handle:
        return not any(block.strip() for block in iter(lambda: handle.read(READ_BLOCK), b""))


def looks_binary(sample: bytes) -> bool:
    if b"\x00" in sample:
        return True
    control = sum(1 for b in sample if b < 32 and b not in (9, 10, 12, 13))
    return bool(sample) and control / len(sample) > 0.1
