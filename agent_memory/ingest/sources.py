"""Readers that turn files into documents or conversation turns, or a reason to skip them.

Bad input never raises out of here: every problem becomes a ``Skipped`` with a reason
the job report shows. Large text files are read in segments so memory stays bounded.
A file's kind is decided here (its name, its first bytes); each format's reader is a module of its
own (``formats.py``, ``office_formats.py``, ``mail_and_notebooks.py``, ``mbox.py``, ``json_records.py``).
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Sequence

from agent_memory.core.lookalikes import reads_blank
from agent_memory.core.records import Document
from agent_memory.core.storable import check_storable, text_problem
from agent_memory.ingest.decoding import (
    blank,
    check_decodes,
    decoded,
    decoding_error,
    first_fallback,
    looks_binary,
    text_encoding,
)
from agent_memory.ingest.formats import (
    CODE_EXTENSIONS,
    DOCUMENTS_EXTRA,
    EXTRA_EXTENSIONS,
    MARKDOWN_EXTENSIONS,
    MAX_DOCUMENT_BYTES,
    PLAIN_TEXT_EXTENSIONS,
    TEXT_FILE_NAMES,
    FormatError,
    Read,
    Skipped,
    file_extension,
    html_to_text,
    secret_file,
    split_front_matter,
)
from agent_memory.ingest.json_records import load_json_text
from agent_memory.ingest.mail_and_notebooks import TEXT_DOCUMENT_READERS, looks_rtf, read_rtf
from agent_memory.ingest.mbox import MBOX_EXTENSIONS, read_mbox
from agent_memory.ingest.office_formats import DOCUMENT_READERS, read_document, sniff_document
from agent_memory.ingest.transcripts import Transcript

TEXT_EXTENSIONS = {".txt", ".text", ".md", ".markdown", ".rst", ".log", ".csv"} | PLAIN_TEXT_EXTENSIONS
HTML_EXTENSIONS = {".html", ".htm", ".xhtml"}
JSON_EXTENSIONS = {".json", ".jsonl", ".ndjson"}
SUPPORTED_EXTENSIONS = (TEXT_EXTENSIONS | HTML_EXTENSIONS | JSON_EXTENSIONS | set(CODE_EXTENSIONS)
                        | set(DOCUMENT_READERS) | set(TEXT_DOCUMENT_READERS) | MBOX_EXTENSIONS)
# Files above this size are streamed segment by segment (only plain text can be).
STREAM_THRESHOLD_BYTES = 8 * 1024 * 1024
SEGMENT_CHARS = 1_000_000
# The metadata key naming the encoding a file that is not UTF-8 was read in (ingest/file_ingestion.py reports it).
DECODED_FROM = "decoded_from"
EMPTY_FILE = "empty file"  # a skip reason that is also content: the file now holds nothing


@dataclass
class TextStream:
    """A plain-text document too large to hold at once: segments with their offsets."""

    source_id: str
    path: Path
    tenant: str
    content_hash: str
    metadata: dict = field(default_factory=dict)
    text: str | None = None  # a large posted document: segments come from it instead of the file
    encoding: str = "utf-8-sig"  # of the file (``text_encoding``)

    def segments(self) -> Iterator[tuple[int, str]]:
        offset = 0
        carry = ""
        # newline="": offsets are into the file's text as decoded, CRLF kept (as a file read whole).
        with (io.StringIO(self.text) if self.text is not None
              else self.path.open("r", encoding=self.encoding, newline="")) as handle:
            while True:
                block = handle.read(SEGMENT_CHARS)
                if not block:
                    break
                text = carry + block
                cut = segment_cut(text)
                yield offset, text[:cut]
                offset += cut
                carry = text[cut:]
        if carry:
            yield offset, carry


Loaded = Document | TextStream | Transcript | Skipped


def segment_cut(text: str) -> int:
    """Where a segment ends: at its last line break, else (one long line) its last space, so no
    word is cut in two (segments are split apart); in the second half, so segments stay large."""
    half = len(text) // 2
    for cut in (text.rfind("\n"), max(text.rfind(" "), text.rfind("\t"))):
        if cut >= half:
            return cut
    return len(text)


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def refused_by_name(path: Path) -> str | None:
    """The skip reason of a file its name alone rules out (where secrets usually live, an extension that is
    not read), else None: decided before a byte is read, or sent to a server (``remote.py``)."""
    if secret := secret_file(path):
        return secret
    ext = file_extension(path)
    return unsupported(ext) if ext not in SUPPORTED_EXTENSIONS else None


def unsupported(ext: str) -> str:
    """The skip reason of an unknown extension: every extension that is read, named."""
    return (f"unsupported extension {ext or '(none)'!r}; supported: {', '.join(sorted(SUPPORTED_EXTENSIONS))} "
            f"({', '.join(EXTRA_EXTENSIONS)} with the optional extra {DOCUMENTS_EXTRA}), and files without an extension named "
            f"{', '.join(sorted(TEXT_FILE_NAMES))} (any case)")


def _document(path: Path, read: Callable[[], Read], tenant: str, sid: str) -> list[Loaded]:
    """The document ``read`` makes of ``path`` (office_formats, mail_and_notebooks), or its skip with the reason."""
    try:
        got = read()
    except FormatError as exc:
        return [Skipped(str(path), str(exc))]
    return storable([Document(source_id=sid, text=got.text, tenant=tenant, path=str(path), title=got.title,
                              metadata=got.metadata)])


def _mbox_messages(path: Path, tenant: str, sid: str) -> list[Loaded]:
    """An mbox's messages (ingest/mbox.py), each a document under ``<sid>#<n>``, n its place in the file from 0
    (a JSONL file's records are named so); a message that cannot be read is a skip of its own, and the messages
    past the caps one skip that counts them: the job's warnings say both, the rest of the archive is read."""
    try:
        archive = read_mbox(path)
    except FormatError as exc:
        return [Skipped(str(path), str(exc))]
    except OSError as exc:
        return [Skipped(str(path), f"unreadable: {exc}")]
    units: list[Loaded] = [
        Skipped(f"{path}#{index}", read) if isinstance(read, str) else
        Document(source_id=f"{sid}#{index}", text=read.text, tenant=tenant, path=str(path), title=read.title,
                 metadata=read.metadata)
        for index, read in archive.messages]
    if archive.left_out:
        units.append(Skipped(str(path), f"{archive.left_out:,} more messages not read: an mbox is read up to its "
                                        f"first {archive.cap} (split the archive to read the rest)"))
    return storable(units) or [Skipped(str(path), "mbox without messages")]


def _text_document(raw: str, ext: str, tenant: str, sid: str, path: Path) -> Document:
    """Markdown's front matter becomes title and metadata; code is marked with its language
    (``metadata.language``, filterable; its splitter is chosen by the path)."""
    if ext in MARKDOWN_EXTENSIONS:
        read = split_front_matter(raw)
        return Document(source_id=sid, text=read.text, tenant=tenant, path=str(path), title=read.title,
                        metadata=read.metadata)
    if ext in CODE_EXTENSIONS:
        return Document(source_id=sid, text=raw, tenant=tenant, path=str(path),
                        metadata={"language": CODE_EXTENSIONS[ext]})
    return Document(source_id=sid, text=raw, tenant=tenant, path=str(path))


def load_path(path: Path, *, tenant: str, source_id: str | None = None, encodings: Sequence[str] = ()) -> list[Loaded]:
    """Read one file. Returns documents/turns to ingest, or ``Skipped`` with a reason. ``encodings``: those
    a text file that is not UTF-8 is read in, tried in order (the ``text_encodings`` setting)."""
    return read_path(path, tenant=tenant, source_id=source_id, encodings=encodings)[0]


def read_path(path: Path, *, tenant: str, source_id: str | None = None,
              encodings: Sequence[str] = ()) -> tuple[list[Loaded], str | None]:
    """``load_path``, and the one of ``encodings`` the file was read in (None: its own, or not text). Said apart
    from the units: a transcript's turns carry no metadata, and a record's own ``decoded_from`` field is not one."""
    sid = source_id or str(path)
    if refusal := refused_by_name(path):
        return [Skipped(str(path), refusal)], None
    ext = file_extension(path)
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            head = handle.read(8192)
    except OSError as exc:
        return [Skipped(str(path), f"unreadable: {exc}")], None
    if size == 0 or blank(path, head, size):
        return [Skipped(str(path), EMPTY_FILE)], None
    sniffed = sniff_document(path, head)
    kind = sniffed or (ext if ext in DOCUMENT_READERS else None)
    if kind is not None:  # by its bytes: a PDF is read as one whatever its name
        return _document(path, lambda: read_document(path, kind, head, size, sniffed), tenant, sid), None
    encoding = text_encoding(head)
    # A UTF-16/32 file is mostly NUL bytes: its binariness is judged on its characters.
    sample = head if encoding == "utf-8-sig" else head.decode(encoding, errors="replace").encode()
    # Whether it is RTF, whatever its name, is decided once, on its first non-blank characters, and holds for
    # each step below: the binary check, a large file (parsed whole, never streamed as text), the decoding, the parse.
    rtf = looks_rtf(sample)
    if looks_binary(sample) and not rtf:
        return [Skipped(str(path), "binary content")], None
    if ext in MBOX_EXTENSIONS:  # mail, from its bytes (each part its charset), read as it goes whatever its size
        return _mbox_messages(path, tenant, sid), None
    if size > STREAM_THRESHOLD_BYTES and not ((ext in TEXT_DOCUMENT_READERS or rtf) and size <= MAX_DOCUMENT_BYTES):
        if rtf or (ext not in TEXT_EXTENSIONS and ext not in CODE_EXTENSIONS):
            return [Skipped(str(path), f"{'RTF' if rtf else ext} file of {size} bytes is too large to parse whole")], None
        problem = check_decodes(path, encoding, tried=encodings)
        fallback = first_fallback(path, encodings) if problem and encoding == "utf-8-sig" else None
        if problem and fallback is None:
            return [Skipped(str(path), problem)], None
        metadata = {"path": str(path), **({DECODED_FROM: fallback} if fallback else {})}
        return [TextStream(source_id=sid, path=path, tenant=tenant, content_hash=file_hash(path),
                           metadata=metadata, encoding=fallback or encoding)], fallback
    data = path.read_bytes()
    try:
        raw, fallback = decoded(data, encoding, encodings)
    except UnicodeDecodeError as exc:
        if not (ext == ".rtf" or rtf) or encoding != "utf-8-sig":
            return [Skipped(str(path), decoding_error(exc, encoding, tried=encodings))], None
        raw, fallback = data.decode("latin-1"), None  # RTF is 7-bit: other bytes are \bin data
    if reads_blank(raw):  # blank in UTF-16/32 (its bytes are not), or only invisible characters
        return [Skipped(str(path), EMPTY_FILE)], None
    loaded = _parsed_text(raw, ext, tenant, sid, path, rtf)
    if fallback is not None:  # said in the item's metadata: `inspect` shows how the file was read
        for unit in loaded:
            if isinstance(unit, Document):
                unit.metadata = {**unit.metadata, DECODED_FROM: fallback}
    return loaded, fallback


def _parsed_text(raw: str, ext: str, tenant: str, sid: str, path: Path, rtf: bool) -> list[Loaded]:
    """A file's decoded text as documents or a transcript; ``rtf``: its first bytes said RTF (``read_path``)."""
    if ext in HTML_EXTENSIONS:
        page = html_to_text(raw)
        return storable([Document(source_id=sid, text=page.text, tenant=tenant, path=str(path), title=page.title)]
                        if page.text.strip() else [Skipped(str(path), "HTML without text")])
    if ext in TEXT_DOCUMENT_READERS or rtf:  # an RTF file saved as .txt is read as RTF
        reader = TEXT_DOCUMENT_READERS.get(ext, read_rtf)
        return _document(path, lambda: reader(raw), tenant, sid)
    if ext in JSON_EXTENSIONS:
        return storable(load_json_text(raw, tenant=tenant, source_id=sid, path=str(path), jsonl=ext != ".json"))
    return storable([_text_document(raw, ext, tenant, sid, path)])


def storable(loaded: list[Loaded]) -> list[Loaded]:
    """``loaded`` with each unit no store can hold replaced by a ``Skipped`` naming the field: a NUL past the
    bytes the binary sniff reads, or written as an escape (JSON's ``\\u0000``, YAML's ``"\\0"``), in a record
    ID too (core/storable.py). A transcript is skipped whole: its turns are numbered by
    position. The rest of the file goes on, as a record that does not parse does."""
    out: list[Loaded] = []
    for unit in loaded:
        try:
            if isinstance(unit, Document):
                _check_document(unit, unit.source_id)
            elif isinstance(unit, Transcript):
                for n, turn in enumerate(unit.turns):
                    check_storable({"speaker": turn.speaker, "text": turn.text, "timestamp": turn.timestamp,
                                    "metadata": turn.metadata}, f"turn {n}")
                    _check_id(turn.turn_id, f"turn {n}")
        except ValueError as exc:
            out.append(Skipped(getattr(unit, "path", "") or unit.source_id, str(exc)))
            continue
        out.append(unit)
    return out


def _check_document(doc: Document, where: str) -> None:
    _check_id(doc.source_id, where)
    check_storable({"text": doc.text, "title": doc.title, "metadata": doc.metadata}, repr(where))


def _check_id(source_id: str, where: str) -> None:
    # Only what no store holds: a file's own name may carry a newline or a tab, and names its source as it is
    # (the tag encodes it); an ID a caller chooses is held to more (discovery.check_source_id).
    if (problem := text_problem(source_id)) is not None:
        raise ValueError(f"{where}: the ID {source_id!r} {problem}")
