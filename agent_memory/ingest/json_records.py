"""JSON and JSONL files into documents: a conversation transcript (``transcripts.py``), records carrying a
text field (one document each, a dataset's paragraphs too), or the file's own text; never an exception.

Each shape is checked by ``shapes.py`` first; a bad record is a ``Skipped`` of its own and the rest go on.
``sources.read_path`` hands a decoded ``.json``/``.jsonl`` file here.
"""

from __future__ import annotations

import json

from agent_memory.core.errors import IngestError
from agent_memory.core.records import Document
from agent_memory.ingest.formats import JSON_SPELLING, Skipped, as_text_if_infinite
from agent_memory.ingest.paragraph_ids import ParagraphIds
from agent_memory.ingest.shapes import (
    HotpotContext,
    SquadArticle,
    TextRecord,
    check,
    holds_something,
    parse_json,
    parse_json_lines,
    record_id,
    string_chars,
)
from agent_memory.ingest.transcripts import Transcript, parse_transcript

TEXT_FIELDS = ("text", "content", "body", "paragraph_text", "context", "document", "passage")


def load_json_text(raw: str, *, tenant: str, source_id: str, path: str = "", jsonl: bool = False) -> list[Document | Transcript | Skipped]:
    """JSON/JSONL: a conversation transcript, or records carrying a text field, else the file's own text.

    Depth and shape are checked first (``shapes.py``): a bad file is one ``Skipped`` naming the
    field; in a list of records, a bad record is a ``Skipped`` of its own and the rest go on. JSON that
    holds no record with a text field (a config file, a list of data rows), or is one object (no list, no
    dataset shape) whose text field holds less than half of the text of its string values (``{"name": ..,
    "context": "prod", "image": ..}`` is a config, not a record), is a document of its own text, as written, under the file's ID: what it says
    is found as a YAML or TOML file's is, never skipped. In a list whose other records carry a text field, a
    record without one is a document of its own JSON text under ``<file ID>#<index>``; one with a blank text
    field, or with nothing in it (``{}``, ``null``), is a ``Skipped`` of its own."""
    where = path or source_id
    broken: dict[int, str] = {}
    try:
        data, broken = parse_json_lines(raw) if jsonl else (parse_json(raw, jsonl=False), {})
        good = [value for n, value in enumerate(data) if n not in broken] if jsonl else data
        if broken and (not good or parse_transcript(good, tenant=tenant, source_id=source_id) is not None):
            # Nothing parses (pretty-printed JSON named .jsonl), or a transcript: its turns are
            # numbered by position, so one lost line would renumber the rest: the file waits whole.
            raise IngestError(next(iter(broken.values())))
        transcript = parse_transcript(data, tenant=tenant, source_id=source_id)
    except IngestError as exc:
        return [Skipped(where, str(exc))]
    if transcript is not None:
        return [transcript] if transcript.turns else [Skipped(where, "transcript without turns")]
    if not jsonl and _config_object(data):
        return [Document(source_id=source_id, text=raw, tenant=tenant, path=path)]
    records = data if isinstance(data, list) else [data]
    units: list[list[Document | Skipped]] = []  # what each record is read as, in order
    names = ParagraphIds()  # one file: its paragraphs of one title are told apart
    for index, record in enumerate(records):
        if index in broken:  # a JSONL line that does not parse: skipped alone, the others keep their #index
            units.append([Skipped(f"{where}#{index}", broken[index])])
            continue
        try:
            units.append(_records_to_documents(record, tenant=tenant, source_id=source_id, index=index, path=path,
                                               names=names))
        except IngestError as exc:
            units.append([Skipped(f"{where}#{index}" if isinstance(data, list) else where, str(exc))])
    textless = [index for index, read in enumerate(units) if not read]  # records that carry no text field
    if any(isinstance(unit, Document) for read in units for unit in read):
        for index in textless:
            units[index] = [_textless_record(records[index], tenant, f"{source_id}#{index}", f"{where}#{index}", path)]
        return [unit for read in units for unit in read]
    out = [unit for read in units for unit in read]
    if not textless or not any(holds_something(records[index]) for index in textless):
        return out or [Skipped(where, "JSON without content")]
    return out + [Document(source_id=source_id, text=raw, tenant=tenant, path=path)]


def _dataset_shaped(record: dict) -> bool:
    """A HotpotQA (``contexts``) or SQuAD (``data``) record, read by its own shape (``_records_to_documents``)."""
    contexts = record.get("contexts")
    return (isinstance(contexts, list) and bool(contexts) and isinstance(contexts[0], dict)) or isinstance(
        record.get("data"), list)


def _text_field(record: dict) -> str | None:
    """The first of ``TEXT_FIELDS`` a record holds text in, else None."""
    return next((key for key in TEXT_FIELDS if isinstance(record.get(key), str) and record[key].strip()), None)


def _config_object(data) -> bool:
    """One JSON object, no dataset shape, whose text field holds less than half of its text (the characters
    of its string values, nested ones too): a config file with a ``context`` or ``body`` key, not a record."""
    if not isinstance(data, dict) or _dataset_shaped(data) or (key := _text_field(data)) is None:
        return False
    return 2 * len(data[key]) < string_chars(data)


def _textless_record(record, tenant: str, sid: str, where: str, path: str) -> Document | Skipped:
    """A record among records with text that carries no text field: a document of its JSON text, so what it
    says is found; skipped when it holds nothing, has a blank text field or is a dataset record without text."""
    if (isinstance(record, dict) and (_dataset_shaped(record) or any(key in record for key in TEXT_FIELDS))
            or isinstance(record, str) or not holds_something(record)):
        return Skipped(where, f"no text field ({', '.join(TEXT_FIELDS)}) in this record")
    return Document(source_id=sid, text=json.dumps(record, ensure_ascii=False), tenant=tenant, path=path)


def _records_to_documents(record, *, tenant: str, source_id: str, index: int, path: str,
                          names: ParagraphIds) -> list[Document]:
    if not isinstance(record, dict):
        return [Document(source_id=f"{source_id}#{index}", text=record, tenant=tenant, path=path)] if isinstance(
            record, str
        ) and record.strip() else []
    # HotpotQA-style records: a list of titled paragraphs, each its own document.
    contexts = record.get("contexts")
    if isinstance(contexts, list) and contexts and isinstance(contexts[0], dict):
        docs = []
        for n, raw_ctx in enumerate(contexts):
            ctx = check(HotpotContext, raw_ctx, f"record {index}.contexts.{n}")
            text = ctx.paragraph_text or ctx.text or ""
            if text.strip():
                docs.append(Document(source_id=names(ctx.title, text), text=text, title=ctx.title,
                                     tenant=tenant, path=path, metadata={"title": ctx.title}))
        return docs
    # SQuAD-style: data[].paragraphs[].context
    if isinstance(record.get("data"), list):
        docs = []
        for n, raw_article in enumerate(record["data"]):
            article = check(SquadArticle, raw_article, f"record {index}.data.{n}")
            for para in article.paragraphs:
                if para.context.strip():
                    pid = record_id(para.id, f"record {index}.data.{n}.id")
                    docs.append(Document(source_id=pid or names(article.title, para.context),
                                         text=para.context, tenant=tenant, path=path, title=article.title))
        return docs
    if (key := _text_field(record)) is not None:
        value = record[key]
        fields = check(TextRecord, record, f"record {index}")
        rid = record_id(fields.id, f"record {index}.id") or record_id(fields.source_id, f"record {index}.source_id")
        title = str(fields.title or "")
        meta = {k: as_text_if_infinite(v, JSON_SPELLING) for k, v in record.items()
                if k != key and isinstance(v, (str, int, float, bool))}
        return [Document(source_id=rid or f"{source_id}#{index}", text=value, title=title, tenant=tenant,
                         path=path, metadata=meta)]
    return []
