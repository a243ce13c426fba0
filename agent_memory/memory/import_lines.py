"""Reading an export back (``memory/export_lines.py`` writes it): every source through the ingestion's own
paths, every session through the session append, so splitting, embeddings, the graph and the archive are made
again with the importing deployment's models and settings (a move between embedding models or backends).

Importing twice changes nothing: a source whose text is stored unchanged is skipped by its content hash, a
session that holds the same messages is skipped, and one holding the first of them (an import stopped
midway) gets the rest. A session holding other messages is refused, naming it. An ingested file's manifest
is recorded again once its sources are (``memory/import_files.py``), so the next ingestion of an unchanged file
skips it. A line that cannot be read (not JSON, not UTF-8) is a skip with its line number, and the import goes
on; a file of another format or version is refused whole before anything is stored.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable

from agent_memory.conversation.archived_turns import session_key, turn_source_id
from agent_memory.core.errors import IngestError
from agent_memory.core.export_format import ImportReport, read_header
from agent_memory.core.records import Document, TurnRecord
from agent_memory.core.storable import check_text
from agent_memory.ingest.bulk_forget import forget_many
from agent_memory.ingest.discovery import check_source_id
from agent_memory.ingest.items import session_summary_id
from agent_memory.ingest.ownership import DIRECT_OWNER, FILE_KEY, SESSION_OWNER, describe_owner, holders
from agent_memory.ingest.report import IngestReport
from agent_memory.memory.arguments import check_document, check_metadata, expect_type
from agent_memory.memory.export_lines import metadata_hash
from agent_memory.memory.import_files import record_file

# Sources stored together (one embedding batch), and messages appended together (one transaction).
IMPORT_BATCH = 64
MESSAGE_BATCH = 200


class Importer:
    """One import into ``memory`` for ``tenant``; ``feed`` each line after the header, then ``finish``."""

    def __init__(self, memory, tenant: str, report: ImportReport) -> None:
        self.memory, self.tenant, self.report = memory, tenant, report
        self.documents: dict[str, list[tuple[int, Document]]] = defaultdict(list)  # owner -> pending
        self.turns: dict[tuple[str | None, str], list[tuple[int, TurnRecord]]] = defaultdict(list)
        self.session: _Session | None = None
        # A file's sources whose metadata is not what was exported (its line's metadata_hash): edited by hand.
        self.metadata_edited: set[str] = set()

    def feed(self, number: int, line: str | bytes) -> None:
        """One line, as text or as the UTF-8 bytes of a body read as it arrives (one not UTF-8 is a skip)."""
        if not line.strip():
            return
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise ValueError(f"a line is a JSON object, got {type(record).__name__}")
            kind = record.get("type")
            if kind == "source":
                self._source(number, record)
            elif kind == "file":
                if self.session is not None:
                    raise ValueError("a file line after the sessions began: files follow the sources in an export")
                self._flush_sources()  # the file's sources first: recorded only where they are stored
                recorded, warning = record_file(self.memory, self.tenant, record, self.metadata_edited)
                self.report.files_recorded += recorded
                self.report.warnings += [warning] if warning else []
            elif kind == "session":
                self._flush_session()
                self._flush_sources()
                self.session = _Session.start(number, record)
            elif kind == "message":
                self._message(number, record)
            elif kind == "end":
                self.report.complete = True
            else:
                raise ValueError(f"unknown line type {kind!r} (source, file, session, message, end)")
        except (ValueError, TypeError, KeyError) as exc:
            self.report.skipped.append((number, _reason(exc)))

    def finish(self) -> None:
        self._flush_sources()
        self._flush_session()
        if not self.report.complete:
            self.report.warnings.append("the file has no end line: it was cut short, and what followed is missing")

    # ---- sources ------------------------------------------------------------------------------------
    def _source(self, number: int, record: dict[str, Any]) -> None:
        if self.session is not None:
            raise ValueError("a source line after the sessions began: sources come first in an export")
        text, source_id = record["text"], record["source_id"]
        expect_type(source_id, str, "source_id", "a source's ID")
        if not isinstance(text, str) or not text.strip():
            raise ValueError(record.get("problem") or f"source {source_id!r} has no text")
        # What a caller of Memory.add may store, no more: the file is input like any other.
        check_document(text, record.get("title") or "")
        metadata = check_metadata(record.get("metadata"))
        created = record.get("created_at")
        created = float(created) if isinstance(created, (int, float)) and math.isfinite(created) else None
        owner = record.get("owner")
        if isinstance(owner, str) and owner.startswith(FILE_KEY) and "metadata_hash" in record \
                and record["metadata_hash"] != metadata_hash(metadata):
            self.metadata_edited.add(source_id)  # its file is not recorded unchanged (import_files.py)
        if record.get("kind") == "turn":
            check_text(source_id, "source_id")
            seq = record.get("seq")
            turn = TurnRecord(session_id=str(record["session_id"]), turn_id=str(record["turn_id"]),
                              speaker=str(record["speaker"]), text=text, timestamp=str(record.get("timestamp") or ""),
                              tenant=self.tenant, metadata=metadata, seq=seq if isinstance(seq, int) else None,
                              created_at=created)
            if turn.source_id != source_id:
                turn.source = source_id
            self.turns[(owner, turn.session_id)].append((number, turn))
            return
        doc = Document(source_id=check_source_id(source_id), text=text, tenant=self.tenant,
                       title=str(record.get("title") or ""), path=str(record.get("path") or ""), metadata=metadata,
                       created_at=created)
        pending = self.documents[owner if isinstance(owner, str) and owner.startswith(FILE_KEY) else DIRECT_OWNER]
        pending.append((number, doc))
        if len(pending) >= IMPORT_BATCH:
            self._flush_sources()

    def _flush_sources(self) -> None:
        for owner, pending in list(self.documents.items()):
            self._store(pending, lambda docs, report, owner=owner:
                        self.memory.ingestion.ingest_documents(docs, report, owner=owner))
        self.documents.clear()
        for (owner, _), pending in list(self.turns.items()):
            self._store(self._free_turns(pending, owner), lambda turns, report, owner=owner:
                        self._turns(turns, owner, report))
        self.turns.clear()

    def _free_turns(self, pending: list[tuple[int, TurnRecord]], owner: str | None) -> list[tuple[int, TurnRecord]]:
        """The turns their owner may write here; the others are skips naming who holds them (a session's turns
        are written together: its summary is made of them all)."""
        writer = owner if owner and owner.startswith((FILE_KEY, SESSION_OWNER)) else None
        held = holders(self.memory.services.catalog, self.tenant, [t.source_id for _, t in pending], writer)
        for number, turn in pending:
            if turn.source_id in held:
                self.report.skipped.append((number, f"turn {turn.source_id!r} belongs to "
                                                    f"{describe_owner(held[turn.source_id])} here"))
        return [(n, t) for n, t in pending if t.source_id not in held]

    def _turns(self, turns: list[TurnRecord], owner: str | None, report: IngestReport) -> list[str]:
        """Turns as their owner wrote them: a file's or a deleted session's claimed for it again, a transcript
        added directly unclaimed (``Memory.add_turns``). ``report`` counts the turns only: their sessions'
        summaries, made again from them, were no line of the export (see ``_uncount_summaries``)."""
        catalog = self.memory.services.catalog
        summary_ids = sorted({session_summary_id(t.session_id) for t in turns})
        before = catalog.get_many(self.tenant, summary_ids)
        ingestion = self.memory.ingestion
        if not owner or not owner.startswith((FILE_KEY, SESSION_OWNER)):
            written = ingestion.ingest_direct_turns(turns, report)
        else:
            catalog.claim(self.tenant, owner, [t.source_id for t in turns])
            written = ingestion.ingest_turns(turns, report)
            if owner.startswith(FILE_KEY):  # a transcript's summary is its file's, as ingesting the file makes it
                catalog.claim(self.tenant, owner, written)
        made = sorted(set(summary_ids) & set(written))  # none where summaries are turned off here
        _uncount_summaries(report, before, catalog.get_many(self.tenant, made))
        return written

    def _store(self, pending: list[tuple[int, Any]], write) -> None:
        """One batch through ingestion (``write(records, report)``). Refused (a source another owner holds
        here), each record is tried on its own, and those refused are skips; a store failure stops the import
        (what was stored stays, and importing again goes on from there)."""
        if not pending:
            return
        report = IngestReport()
        records = [record for _, record in pending]
        try:
            self.memory._write(lambda report: write(records, report), report, tenant=self.tenant)
        except (IngestError, ValueError) as exc:
            if len(pending) > 1:
                for one in pending:
                    self._store([one], write)
                return
            self.report.skipped.append((pending[0][0], _reason(exc)))
            return
        self.report.sources_written += report.sources_written
        self.report.sources_unchanged += report.sources_unchanged
        self.report.warnings.extend(report.warnings)

    # ---- sessions -----------------------------------------------------------------------------------
    def _message(self, number: int, record: dict[str, Any]) -> None:
        session = self.session
        if session is None or record.get("session_id") != session.session_id \
                or (record.get("agent_id") or None) != session.agent_id:
            raise ValueError("a message line outside its session (each follows its session's line)")
        message = record["message"]
        if not isinstance(message, dict):
            raise ValueError(f"message must be a JSON object, got {type(message).__name__}")
        session.messages.append((number, message, record.get("retention"), record.get("seq")))

    def _flush_session(self) -> None:
        session, self.session = self.session, None
        if session is None:
            return
        try:
            import_session(self.memory, self.tenant, session, self.report)
        except (ValueError, TypeError, IngestError) as exc:  # a session ID no session may have, say
            self.report.skipped.append((session.number, _reason(exc)))


@dataclass
class _Session:
    number: int
    session_id: str
    agent_id: str | None
    config: dict[str, Any] | None
    forgotten_turns: list[int]
    messages: list[tuple[int, dict[str, Any], Any, Any]] = field(default_factory=list)

    @classmethod
    def start(cls, number: int, record: dict[str, Any]) -> "_Session":
        session_id = record["session_id"]
        if not isinstance(session_id, str) or not session_id:
            raise ValueError(f"session_id must be a session's ID, got {session_id!r}")
        config = record.get("config")
        if config is not None and not isinstance(config, dict):
            raise ValueError(f"config must be a JSON object of compaction settings, got {config!r}")
        forgotten = [int(s) for s in record.get("forgotten_turns") or [] if isinstance(s, int)]
        return cls(number, session_id, record.get("agent_id") or None, config, forgotten)


def import_session(memory, tenant: str, session: _Session, report: ImportReport) -> None:
    """The session's messages appended after what it holds here: all of them to a new session, the rest to one
    holding the first of them, none to one holding them all; refused (a skip naming why) when it holds others."""
    key = (session_key(tenant, session.session_id), session.agent_id or "")
    held = memory.working_memory.sessions.store.load_messages(key)
    wanted = session.messages
    for n, (row, (number, message, retention, _)) in enumerate(zip(held, wanted)):
        if not _same(row, message, retention):
            report.sessions_refused += 1
            report.skipped.append((session.number, (
                f"session {session.session_id!r}{_agent(session)} holds other messages here (they differ at its "
                f"message m{row.get('seq', n)}, line {number}): delete it first (DELETE /v1/sessions/{{id}}, "
                "Memory.delete_session), or import into another tenant")))
            return
    if len(held) > len(wanted):
        report.sessions_refused += 1
        report.skipped.append((session.number, f"session {session.session_id!r}{_agent(session)} holds "
                               f"{len(held)} messages here, more than the {len(wanted)} exported: delete it first, or "
                               "import into another tenant"))
        return
    rest = wanted[len(held):]
    configured = memory.session_configured(session.session_id, agent_id=session.agent_id, tenant=tenant)
    if not rest and (held or configured or not session.config):
        report.sessions_unchanged += 1
        return
    live = memory.session(session.session_id, agent_id=session.agent_id, tenant=tenant)
    if not held and session.config and not configured:  # settings first: they shape the compaction of the rest
        try:
            live.configure(**session.config)
        except (TypeError, ValueError) as exc:
            report.warnings.append(f"session {session.session_id!r}{_agent(session)}: its settings were not "
                                   f"taken ({exc}); the defaults apply")
    exported_first = rest[0][3] if rest else None
    if not held and isinstance(exported_first, int) and exported_first != live.next_seq:
        report.warnings.append(f"session {session.session_id!r}{_agent(session)}: its messages are numbered from "
                               f"{live.next_seq} here (from {exported_first} in the export), so its archived turns "
                               f"are '{session.session_id}/m<n>' with the new numbers")
    for start in range(0, len(rest), MESSAGE_BATCH):
        _append(memory, tenant, session, rest[start:start + MESSAGE_BATCH], report)
    report.sessions_imported += 1
    if session.forgotten_turns and not session.agent_id:
        _forget_again(memory, tenant, session, report)


def _append(memory, tenant: str, session: _Session, batch: list, report: ImportReport) -> None:
    """A batch in one transaction; refused whole, message by message so only the refused ones are skips."""
    try:
        memory.add_messages(session.session_id, [m for _, m, _, _ in batch], retention=[r for _, _, r, _ in batch],
                            agent_id=session.agent_id, tenant=tenant)
        report.messages_appended += len(batch)
        return
    except (TypeError, ValueError):
        if len(batch) == 1:
            pass
        else:
            for one in batch:
                _append(memory, tenant, session, [one], report)
            return
    number, message, retention, _ = batch[0]
    try:
        memory.add_message(session.session_id, message, retention=retention, agent_id=session.agent_id, tenant=tenant)
        report.messages_appended += 1
    except (TypeError, ValueError) as exc:
        report.skipped.append((number, _reason(exc)))


def _forget_again(memory, tenant: str, session: _Session, report: ImportReport) -> None:
    """The turns the exporting deployment had forgotten, archived again by the append: forgotten again, so that
    what a user removed does not come back with a move."""
    ids = [turn_source_id(session.session_id, seq) for seq in session.forgotten_turns]
    memory.working_memory.flush()
    with memory.write_lock:
        owners = memory.services.catalog.owners(tenant, ids)
        mine = [sid for sid in ids if owners.get(sid) == SESSION_OWNER + session.session_id]
        if mine:
            report.turns_forgotten += forget_many(memory.services, tenant, mine)["sources"]


def _uncount_summaries(report: IngestReport, before: dict[str, Any], after: dict[str, Any]) -> None:
    """Takes the sessions' summaries out of ``report``'s source counts, where ingestion counted each as a source
    written (made, or made anew) or unchanged. The import's report counts the export's source lines, so that
    written, unchanged and skipped add up to the sources the export says it holds: a summary is derived from
    the turns as their chunks and embeddings are, not a source the user exported (the export leaves it out)."""
    for summary_id, entry in after.items():
        previous = before.get(summary_id)
        if previous is None or previous.content_hash != entry.content_hash:
            report.sources_written -= 1
        else:
            report.sources_unchanged -= 1


def _same(row: dict[str, Any], message: dict[str, Any], retention: Any) -> bool:
    """Whether a stored message is this exported one: the same body, time and retention class."""
    body = {k: v for k, v in message.items() if k != "timestamp"}
    when = message.get("timestamp")
    same_time = when is None or (isinstance(when, (int, float)) and abs(float(when) - row["created_at"]) < 1e-3)
    stored_class = None if row["unclassified"] else row["retention"]
    return row["message"] == body and same_time and stored_class == retention


def _agent(session: _Session) -> str:
    return f" (agent {session.agent_id!r})" if session.agent_id else ""


def _reason(exc: BaseException) -> str:
    if isinstance(exc, KeyError):
        return f"missing field {exc.args[0]!r}"
    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON: {exc}"
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text: {exc}"
    return str(exc)


def import_lines(memory, lines: Iterable[str] | Iterable[bytes], tenant: str | None = None) -> ImportReport:
    """Import an export's lines (text, or UTF-8 bytes) into ``memory``: for ``tenant``, else the tenant the
    export names."""
    numbered = enumerate(lines, start=1)
    for _number, first in numbered:
        if first.strip():
            break
    else:
        raise IngestError("the export is empty: no header line")
    header = read_header(first)
    report = ImportReport(tenant=memory._tenant(tenant if tenant is not None else header["tenant"]))
    importer = Importer(memory, report.tenant, report)
    for number, line in numbered:
        importer.feed(number, line)
    importer.finish()
    return report
