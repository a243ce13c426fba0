"""The sessions seam shared by both drivers (``sqlite_sessions.py``, ``postgres_sessions.py``): the protocol,
the row a message is stored as, and the helpers both build their statements and read their rows with."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Protocol, runtime_checkable

from agent_memory.core.errors import StoreError

Key = tuple[str, str]
# What both drivers select of a message row, in the order ``message_row`` reads.
MESSAGE_FIELDS = "seq, retention, unclassified, body, tokens, status, significant, created_at, tokenizer, stated"


@dataclass(frozen=True)
class NewMessage:
    """One message to store: what ``append`` takes, as a row of a batch for ``append_many``."""

    seq: int
    message: dict[str, Any]
    retention: str
    unclassified: bool
    tokens: int
    significant: bool
    entities: tuple[str, ...] = ()
    created_at: float | None = None
    # The token counter ``tokens`` was counted with (``TokenCounter.name``): a session opened under
    # another one counts the message again (conversation/session.py). None: not recorded (older rows).
    tokenizer: str | None = None
    # ``created_at`` is the message's own timestamp (else: its append's, or one inferred): a session opened again
    # rebuilds its timeline of undated messages from it (conversation/timeline.py). None: not recorded (older rows).
    stated: bool | None = None

    # The message row's columns, in this order, in both drivers (sqlite3 stores a bool as 0 or 1).
    COLUMNS = ("session_id, agent_id, seq, role, retention, unclassified, body, tokens, significant, created_at,"
               " tokenizer, stated")

    def values(self, key: Key) -> tuple:
        """The row's values for ``COLUMNS`` (no time given: now)."""
        return (*key, self.seq, self.message["role"], self.retention, bool(self.unclassified),
                json.dumps(self.message, ensure_ascii=False), self.tokens, bool(self.significant),
                time.time() if self.created_at is None else float(self.created_at), self.tokenizer,
                None if self.stated is None else bool(self.stated))

    @staticmethod
    def statements(key: Key, rows: list["NewMessage"], insert: str, count_entity: str) -> list[tuple[str, tuple]]:
        """What storing ``rows`` takes, in a driver's SQL: per message its ``insert`` (values for ``COLUMNS``),
        then ``count_entity`` (session_id, agent_id, name, last_seq) for each entity it names."""
        statements: list[tuple[str, tuple]] = []
        for row in rows:
            statements.append((insert, row.values(key)))
            statements += [(count_entity, (*key, name, row.seq)) for name in row.entities]
        return statements


class SessionConflictError(StoreError):
    """Another process appended to the session since this one last read it (a shared store): the
    caller reloads the session and takes the next sequence number."""


@runtime_checkable
class SessionStorage(Protocol):
    """The sessions seam: ``stores.sqlite_sessions.SessionStore`` (SQLite, embedded default) and
    ``stores.postgres_sessions.PostgresSessionStore`` (shared by replicas) pass one contract suite,
    ``tests/integration/test_session_store_contract.py``. Raw messages are never rewritten."""

    def append(self, key: Key, seq: int, message: dict[str, Any], *, retention: str, unclassified: bool,
               tokens: int, significant: bool, entities: Iterable[str], created_at: float | None = None,
               tokenizer: str | None = None) -> None: ...

    # Several messages at consecutive seqs in one transaction: all stored, or none (a batch is atomic).
    def append_many(self, key: Key, rows: list[NewMessage]) -> None: ...

    # Token counts made again under another counter (seq, tokens), recorded as ``tokenizer``'s.
    def recount(self, key: Key, counts: list[tuple[int, int]], tokenizer: str) -> None: ...

    # Times inferred for undated messages (seq, Unix time): conversation/timeline.py. The bodies stay.
    def redate(self, key: Key, times: list[tuple[int, float]]) -> None: ...

    # The archive watermark: every message up to ``archived_through`` is in long-term memory (or was
    # judged not to go there). The session log is the archive's queue: whatever lies past the
    # mark is archived on the next pass (working_memory.py), after a crash or restart too.
    def archived_through(self, key: Key) -> int: ...

    def mark_archived(self, key: Key, seq: int) -> None: ...

    def messages_after(self, key: Key, seq: int) -> list[dict[str, Any]]: ...

    def unarchived(self) -> list[Key]: ...

    def compact(self, key: Key, seqs: list[int], status: str, summary: dict[str, Any] | None,
                state: dict[str, Any]) -> None: ...

    def save_state(self, key: Key, state: dict[str, Any]) -> None: ...

    def load_messages(self, key: Key) -> list[dict[str, Any]]: ...

    def recent(self, key: Key, n: int) -> list[dict[str, Any]]: ...

    def summaries(self, key: Key) -> list[dict[str, Any]]: ...

    # A summary's lines' vectors (conversation/summary_vectors.py: JSON text), stored after the summary, off the
    # append's path. Drop markers have none. Without: (id, text) of the summaries lacking them, oldest first.
    def summaries_without_line_vectors(self, key: Key) -> list[tuple[int, str]]: ...

    def save_summary_line_vectors(self, key: Key, rows: list[tuple[int, str]]) -> None: ...

    # (text, stored vectors) of the summaries that have them.
    def summary_line_vectors(self, key: Key) -> list[tuple[str, str]]: ...

    def entities(self, key: Key, limit: int = 1_000_000) -> list[tuple[str, int, int]]: ...

    def load_state(self, key: Key) -> dict[str, Any]: ...

    def sessions(self) -> list[Key]: ...

    def session_rows(self, prefix: str = "") -> list[dict[str, Any]]: ...

    def delete(self, session_id: str) -> int: ...

    # The messages up to ``seq`` but those of ``keep_roles`` leave (a time to live, conversation/expiry.py), with
    # the summaries and entities that end among them, and ``marker`` (a summary row) says what went: one
    # transaction. Returns the messages removed; the archive watermark stays, so archiving goes on where it was.
    def remove_through(self, key: Key, seq: int, marker: dict[str, Any], *,
                       keep_roles: tuple[str, ...] = ()) -> int: ...

    # A consistent copy at ``path`` (a new file the SQLite store opens as it is); PostgreSQL: BackupError (pg_dump).
    def snapshot_to(self, path: Path) -> None: ...

    def close(self) -> None: ...


def message_row(r: tuple) -> dict[str, Any]:
    """A message row as both session backends select it (``MESSAGE_FIELDS``) -> the dict ``load_messages`` and
    ``messages_after`` return."""
    return dict(seq=r[0], retention=r[1], unclassified=bool(r[2]), message=json.loads(r[3]), tokens=r[4],
                status=r[5], significant=bool(r[6]), created_at=float(r[7]), tokenizer=r[8],
                stated=None if r[9] is None else bool(r[9]))


def summary_statement(key: Key, summary: dict[str, Any], insert: str) -> tuple[str, tuple]:
    """A summary row's ``insert`` (both drivers: session_id, agent_id, first_seq, last_seq, tier, text, tokens,
    method, validation, created_at) with its values, stored now."""
    return insert, (*key, summary["first_seq"], summary["last_seq"], summary["tier"], summary["text"],
                    summary["tokens"], summary["method"], json.dumps(summary["validation"]), time.time())
