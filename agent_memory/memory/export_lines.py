"""What a tenant's export holds, line by line (JSON Lines): ``export_tenant`` writes them, ``memory/import_lines.py``
reads them back; the header, which every reader checks first (the CLI, ``POST /v1/import``, the import itself),
is read by ``core/export_format.py``, which the CLI reads without the memory layer.

1. A header: ``{"type": "header", "format": "agent-memory-export", "version": 1, "tenant": ..., "exported_at":
   ..., "agent_memory": <version>}``.
2. One ``source`` line per stored document or turn: its ID, kind, title, metadata, times, where it came from
   (``path``) and who wrote it (``owner``: the file ``file:<id>`` that held it, ``api:`` for a document written
   directly, ``session:<id>`` for a deleted session's kept turns), and its text, put back together from its
   stored pieces by their character offsets. Only the whitespace between two pieces is not stored: the text
   is ``text_verified`` when it hashes to what ingestion recorded, else that whitespace is a guess (a Markdown
   file's blanked front matter is rebuilt from the widths its ``front_matter_lines`` metadata keeps). A file's
   source also carries ``metadata_hash``, its metadata's hash as exported (``metadata_hash``). Summaries,
   vectors and graph facts are not exported: the importing deployment derives them again with its own models
   and settings. A live session's archived turns are not source lines either: its messages rebuild them.
3. One ``file`` line per ingested file that holds exported sources, after the sources: its manifest (its ID,
   ``path``, ``content_hash``, ``named_by_user``), the IDs of its ``sources`` written above and, in
   ``source_hashes``, each one's content hash as the file's ingestion stored it, so that an import records the
   file as ingested, and the next ingestion of the same file skips it as unchanged instead of reading and
   embedding it again, only where every source it stored is the text and metadata the file gave (not one
   edited in the export). An export without these lines (written before them) imports all the same.
4. Per working-memory session (and sub-agent): a ``session`` line (its ID, agent, settings, how far it was
   archived and which archived turns long-term memory no longer holds, because they were forgotten) followed by
   its ``message`` lines as appended: role, content, name, tool calls, with ``timestamp`` (Unix seconds) and
   the retention class (None: unclassified), compaction notwithstanding.
5. An ``end`` line with the counts: a file without it was cut short.

Nothing of another tenant is read: every lookup is scoped to the tenant exported.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from typing import Any, BinaryIO, Iterator

from agent_memory.conversation.archived_turns import session_key, turn_seq, turn_source_id
from agent_memory.core.export_format import EXPORT_FORMAT, EXPORT_VERSION
from agent_memory.core.ids import content_hash
from agent_memory.core.records import MemoryItem, SearchFilter
from agent_memory.core.version import __version__
from agent_memory.index.importance import IMPORTANCE
from agent_memory.index.told_of import TOLD_OF
from agent_memory.ingest.bulk_forget import sources_with_prefix
from agent_memory.ingest.formats import FRONT_MATTER_LINES, blanked_front_matter
from agent_memory.ingest.ownership import FILE_KEY, SESSION_OWNER


def export_names(handle: BinaryIO) -> list[str]:
    """The names an import of the export at ``handle`` stores, as a forget takes them: each source line's ID, each
    file line's ID and path (read before the import, so that a delete of one of them meanwhile is refused). Read to
    the first session line (sources and files come before the sessions); a line that is no JSON object is passed
    over (the import reports it)."""
    names: dict[str, None] = {}
    for line in handle:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        kind = record.get("type") if isinstance(record, dict) else None
        if kind == "session":
            break
        found = [record.get("source_id")] if kind == "source" else [record.get("file_id"), record.get("path")] \
            if kind == "file" else []
        names.update(dict.fromkeys(name for name in found if isinstance(name, str) and name))
    return list(names)


# Sources read together: one catalog lookup and one filtered scroll of the vectors per batch.
EXPORT_BATCH = 256
# Item metadata that ingestion derives from the source's own fields (a title, a turn's place in its
# session): exported as those fields, not as metadata.
DERIVED_KEYS = {"document": ("title",), "turn": ("session_id", "turn_id", "speaker", "timestamp", "seq", TOLD_OF)}


def export_tenant(services, working_memory, tenant: str) -> Iterator[dict[str, Any]]:
    """Every line of ``tenant``'s export, in order (see the module's doc)."""
    yield {"type": "header", "format": EXPORT_FORMAT, "version": EXPORT_VERSION, "tenant": tenant,
           "exported_at": time.time(), "agent_memory": __version__}
    store = working_memory.sessions.store
    prefix = session_key(tenant, "")
    rows = store.session_rows(prefix)
    live = {row["session_id"][len(prefix):] for row in rows}
    counts = {"sources": 0, "files": 0, "sessions": 0, "messages": 0}
    # A file's owner key -> {each of its sources written: its content hash as stored, "" for none}.
    of_files: dict[str, dict[str, str]] = defaultdict(dict)
    for line, stored_hash in _sources(services, tenant, live):
        counts["sources"] += 1
        if isinstance(line["owner"], str) and line["owner"].startswith(FILE_KEY):
            of_files[line["owner"]][line["source_id"]] = stored_hash
        yield line
    for line in _file_lines(services, tenant, of_files):
        counts["files"] += 1
        yield line
    for row in rows:
        key = (row["session_id"], row["agent_id"])
        session_id = row["session_id"][len(prefix):]
        messages = store.load_messages(key)
        through = store.archived_through(key)
        yield {"type": "session", "session_id": session_id, "agent_id": row["agent_id"] or None,
               "config": store.load_state(key).get("config"), "messages": len(messages),
               "archived_through": through,
               "forgotten_turns": [] if row["agent_id"] else _forgotten(services, tenant, session_id, messages, through)}
        counts["sessions"] += 1
        for message in messages:
            counts["messages"] += 1
            yield {"type": "message", "session_id": session_id, "agent_id": row["agent_id"] or None,
                   "seq": message["seq"], "retention": None if message["unclassified"] else message["retention"],
                   "message": {**message["message"], "timestamp": message["created_at"]}}
    yield {"type": "end", **counts}


def _file_lines(services, tenant: str, of_files: dict[str, dict[str, str]]) -> Iterator[dict[str, Any]]:
    """The manifest of each file whose sources were written (none for a file whose job died before writing one:
    the next ingestion reads it, as it would here)."""
    owners = sorted(of_files)
    for start in range(0, len(owners), EXPORT_BATCH):
        manifests = services.catalog.get_many(tenant, owners[start:start + EXPORT_BATCH])
        for owner in owners[start:start + EXPORT_BATCH]:
            manifest = manifests.get(owner)
            if manifest is not None:
                yield {"type": "file", "file_id": owner[len(FILE_KEY):], "path": manifest.path,
                       "content_hash": manifest.content_hash, "named_by_user": manifest.named_by_user,
                       "sources": list(of_files[owner]),
                       "source_hashes": {sid: digest for sid, digest in of_files[owner].items() if digest}}


def _forgotten(services, tenant: str, session_id: str, messages: list[dict], through: int) -> list[int]:
    """The seqs archived already whose turn long-term memory does not hold: forgotten since (or never a turn:
    a tool result, a system message). An import forgets the turns these become again."""
    archived = [m["seq"] for m in messages if m["seq"] <= through]
    stored = services.catalog.get_many(tenant, [turn_source_id(session_id, seq) for seq in archived])
    return [seq for seq in archived if turn_source_id(session_id, seq) not in stored]


def _sources(services, tenant: str, live_sessions: set[str]) -> Iterator[tuple[dict[str, Any], str]]:
    """Each source's line, with its content hash as the catalog holds it ("" where it holds no entry)."""
    ids = [sid for sid in sources_with_prefix(services, tenant, "") if not sid.startswith(FILE_KEY)]
    for start in range(0, len(ids), EXPORT_BATCH):
        batch = ids[start:start + EXPORT_BATCH]
        entries = services.catalog.get_many(tenant, batch)
        owners = services.catalog.owners(tenant, batch)
        items: dict[str, list[MemoryItem]] = defaultdict(list)
        for item in services.vectors.scroll(SearchFilter(tenant=tenant, source_ids=batch)):
            items[item.source_id].append(item)
        for sid in batch:
            entry, owner = entries.get(sid), owners.get(sid)
            if entry is not None and entry.kind == "session":
                continue  # a transcript's session summary: derived again when its turns are imported
            if owner and owner.startswith(SESSION_OWNER) and owner[len(SESSION_OWNER):] in live_sessions:
                continue  # a live session's archived turn: its message is exported and archived again
            if owner is None and _unclaimed_session_turn(sid, items.get(sid, []), live_sessions):
                continue  # the same, its claim lost (a catalog rebuilt by an older `check --repair --adopt`)
            line = source_line(sid, entry, owner, items.get(sid, []))
            if line is not None:
                yield line, entry.content_hash if entry is not None else ""


def _unclaimed_session_turn(source_id: str, items: list[MemoryItem], live_sessions: set[str]) -> bool:
    """``source_id`` is ``<session id>/m<n>`` of a live session and its items are that session's turns: an archived
    turn of the session whose messages the export writes, though no session claims it."""
    if not items or any(i.kind != "turn" for i in items):
        return False
    session = items[0].metadata.get("session_id")
    return (isinstance(session, str) and session in live_sessions
            and all(i.metadata.get("session_id") == session for i in items)
            and turn_seq(session, source_id) is not None)


def source_line(source_id: str, entry, owner: str | None, items: list[MemoryItem]) -> dict[str, Any] | None:
    """One source's line, or None when nothing of it is stored but a claim (a job that died before writing)."""
    kind = entry.kind if entry is not None else ("turn" if any(i.kind == "turn" for i in items) else "document")
    pieces = [i for i in items if i.kind == ("turn" if kind == "turn" else "chunk")]
    if entry is None and not pieces:
        return None
    first = min(pieces, key=lambda i: (i.start, i.chunk_index)) if pieces else None
    metadata = dict(first.metadata) if first is not None else {}
    for key in DERIVED_KEYS.get(kind, ()):
        metadata.pop(key, None)
    if metadata.get("importance") == IMPORTANCE.default:
        del metadata["importance"]  # the default ingestion stamps on every item; a raised one is kept
    line: dict[str, Any] = {
        "type": "source", "source_id": source_id, "kind": kind, "title": entry.title if entry else "",
        "metadata": metadata, "created_at": min((i.created_at for i in pieces), default=None),
        "updated_at": entry.updated_at if entry else None, "path": entry.path if entry else "", "owner": owner,
        "text": "", "text_verified": False}
    if kind == "turn":
        meta = first.metadata if first is not None else {}
        line.update(session_id=(entry.session_id if entry else None) or meta.get("session_id", ""),
                    turn_id=str(meta.get("turn_id", "")), speaker=str(meta.get("speaker", "")),
                    timestamp=(entry.timestamp if entry else "") or str(meta.get("timestamp", "")),
                    seq=entry.seq if entry is not None and entry.seq is not None else meta.get("seq"))
        said = f"{line['speaker']}\x1f{line['timestamp']}\x1f"
    else:
        said = line["title"] + "\x1f"
    line["text"], line["text_verified"] = _verified(rebuilt_text(pieces), pieces,
                                                    lambda text: entry is not None and content_hash(said + text) == entry.content_hash,
                                                    metadata.get(FRONT_MATTER_LINES))
    if isinstance(owner, str) and owner.startswith(FILE_KEY):
        line["metadata_hash"] = metadata_hash(metadata)
    if not pieces:
        line["problem"] = "the catalog lists it but no stored item holds its text"
    return line


def metadata_hash(metadata: dict[str, Any]) -> str:
    """A source's metadata as one hash, its keys sorted: a file's source line carries it beside the metadata, so
    that an import sees metadata edited in the export, which the content hash (title and text) leaves out."""
    return content_hash(json.dumps(metadata, sort_keys=True, ensure_ascii=False, separators=(",", ":")))


def rebuilt_text(pieces: list[MemoryItem]) -> str:
    """A source's text from its stored pieces (chunks, or a turn's pieces), each placed at its character
    offset: overlaps are read once, and the whitespace the splitter stripped between two pieces is put back
    as a guess (a blank line for two characters, a CRLF in a text of CRLF line ends, a space after a sentence's
    end, else newlines)."""
    out: list[str] = []
    end = None
    crlf = any("\r\n" in piece.text for piece in pieces)
    for piece in sorted(pieces, key=lambda i: (i.start, i.chunk_index)):
        text = piece.text
        if end is None:
            out.append(text)
        elif piece.start >= end:
            out.append(_gap(out[-1] if out else "", piece.start - end, crlf) + text)
        else:  # overlap: the part not read yet (an offset an approximate split gave is read as it is)
            out.append(text[end - piece.start:])
        end = max(end or 0, piece.start + len(text))
    return "".join(out)


# The whitespace a source's text most often starts or ends with, which the splitter strips from its pieces.
_EDGES = ("", "\n", "\n\n", " ", "\r\n")


def _verified(text: str, pieces: list[MemoryItem], matches, front_matter: object = None) -> tuple[str, bool]:
    """``text`` with the leading and trailing whitespace that makes it hash to what ingestion recorded, and
    True; else ``text`` as rebuilt, and False. ``front_matter``: a Markdown file's ``FRONT_MATTER_LINES``, the
    widths of the blanked lines its text starts with (None: none, or stored before they were kept)."""
    lead = min((p.start for p in pieces), default=0)
    for head in _heads(lead, front_matter):
        for tail in _EDGES:
            if matches(head + text + tail):
                return head + text + tail, True
    return text, False


def _heads(lead: int, front_matter: object) -> list[str]:
    """What may come before the first piece, ``lead`` characters: the blanked front matter (its lines ending in
    LF, else CRLF) and the blank lines after it, or whitespace alone."""
    if lead == 0:
        return [""]
    heads = []
    for newline in ("\n", "\r\n"):
        blank = blanked_front_matter(front_matter, newline)
        if blank is not None and len(blank) <= lead:
            rest = lead - len(blank)
            heads += [blank + fill for fill in dict.fromkeys(("\n" * rest, newline * (rest // len(newline)),
                                                              " " * rest)) if len(fill) == rest]
    return heads + ["\n" * lead, " " * lead]


def _gap(before: str, width: int, crlf: bool = False) -> str:
    """``crlf``: the text's lines end in CRLF (Windows), so its blank lines are CRLFs too."""
    if width <= 0:
        return ""
    if width == 1:
        return " " if before.rstrip()[-1:] in (".", "!", "?", ";", ",", ":") else "\n"
    if crlf and width % 2 == 0:
        return "\r\n" * (width // 2)
    return "\n" * width
