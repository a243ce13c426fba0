"""SQLite persistence for sessions: one commit per append (WAL), so a crash loses no message; a
batch of messages is one commit too, all stored or none.

The raw messages are never rewritten: compaction only flips a status column and adds
summary rows, so the full history stays readable (``messages()``) after any tier.
Rows are keyed by (session_id, agent_id); agent_id '' is the main agent.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any, Iterable

from agent_memory.core.errors import ClosedError, StoreError
from agent_memory.stores.session_storage import (
    MESSAGE_FIELDS,
    Key,
    NewMessage,
    message_row,
    summary_statement,
)
from agent_memory.stores.snapshots import sqlite_snapshot

# Every table holding a session's rows (``delete`` clears them all).
TABLES = ("messages", "summaries", "entities", "session_state", "archive_marks")

SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (
    session_id TEXT NOT NULL, agent_id TEXT NOT NULL, seq INTEGER NOT NULL,
    role TEXT NOT NULL, retention TEXT NOT NULL, unclassified INTEGER NOT NULL DEFAULT 0,
    body TEXT NOT NULL, tokens INTEGER NOT NULL, status TEXT NOT NULL DEFAULT 'active',
    significant INTEGER NOT NULL DEFAULT 0, created_at REAL NOT NULL, tokenizer TEXT, stated INTEGER,
    PRIMARY KEY (session_id, agent_id, seq)
);
CREATE TABLE IF NOT EXISTS summaries (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, agent_id TEXT NOT NULL,
    first_seq INTEGER NOT NULL, last_seq INTEGER NOT NULL, tier INTEGER NOT NULL, text TEXT NOT NULL,
    tokens INTEGER NOT NULL, method TEXT NOT NULL, validation TEXT NOT NULL, created_at REAL NOT NULL,
    line_vectors TEXT
);
CREATE INDEX IF NOT EXISTS summaries_by_session ON summaries (session_id, agent_id, id);
CREATE TABLE IF NOT EXISTS entities (
    session_id TEXT NOT NULL, agent_id TEXT NOT NULL, name TEXT NOT NULL,
    count INTEGER NOT NULL, last_seq INTEGER NOT NULL,
    PRIMARY KEY (session_id, agent_id, name)
);
CREATE TABLE IF NOT EXISTS session_state (
    session_id TEXT NOT NULL, agent_id TEXT NOT NULL, state TEXT NOT NULL,
    PRIMARY KEY (session_id, agent_id)
);
CREATE TABLE IF NOT EXISTS archive_marks (
    session_id TEXT NOT NULL, agent_id TEXT NOT NULL, archived_through INTEGER NOT NULL,
    PRIMARY KEY (session_id, agent_id)
);
"""


class SessionStore:
    def __init__(self, path: str | Path, *, synchronous: str = "FULL") -> None:
        path = Path(path)
        if path.is_dir() or path.suffix == "":
            path = path / "sessions.sqlite3"
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.RLock()
        try:
            self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            # FULL: each append is fsynced, surviving power loss too; NORMAL survives process crashes only.
            self._db.execute(f"PRAGMA synchronous={synchronous}")
            self._db.executescript(SCHEMA)
            self._add_columns()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open session store {path.name}: {exc}") from exc

    def _add_columns(self) -> None:
        """A file from before token counts named their counter, before messages said whether their time was
        stated, or before summaries kept their lines' vectors, gets the column (its rows: NULL, unknown)."""
        columns = {table: {row[1] for row in self._db.execute(f"PRAGMA table_info({table})")}
                   for table in ("messages", "summaries")}
        for table, name, kind in (("messages", "tokenizer", "TEXT"), ("messages", "stated", "INTEGER"),
                                  ("summaries", "line_vectors", "TEXT")):
            try:
                if name not in columns[table]:
                    self._db.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")
            except sqlite3.OperationalError as exc:
                if "duplicate column" not in str(exc):  # another connection added it first: fine
                    raise

    def snapshot_to(self, path: Path) -> None:
        with self._lock:  # no append in between: the copy holds every message acknowledged before it
            self._check_open()
            sqlite_snapshot(self._db, Path(path), f"session store {self.path.name}")

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._db.close()

    def _check_open(self) -> None:
        # A session handle kept past its Memory's close(): said as such, not as a failed write.
        if getattr(self, "_closed", False):
            raise ClosedError("this session store is closed (its Memory was closed): open a new Memory")

    def _tx(self, statements: Iterable[tuple[str, tuple]]) -> None:
        with self._lock:
            self._check_open()
            try:
                self._db.execute("BEGIN IMMEDIATE")
                for sql, params in statements:
                    self._db.execute(sql, params)
                self._db.execute("COMMIT")
            except BaseException as exc:
                # Any failure (a bad parameter raises UnicodeEncodeError, not sqlite3.Error) must end
                # the transaction: the connection is shared, and a left-open one fails every later write.
                try:
                    if self._db.in_transaction:
                        self._db.execute("ROLLBACK")
                except sqlite3.Error:
                    pass  # the connection itself failed: the error below says why
                if isinstance(exc, sqlite3.Error):
                    # The file's name only: a client never sees the server's paths.
                    raise StoreError(f"session store {self.path.name} write failed: {exc}") from exc
                raise

    def _rows(self, sql: str, params: tuple) -> list[tuple]:
        with self._lock:
            self._check_open()
            try:
                return self._db.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise StoreError(f"session store {self.path.name} read failed: {exc}") from exc

    # -- writes ------------------------------------------------------------------------------
    def append(self, key: Key, seq: int, message: dict[str, Any], *, retention: str, unclassified: bool,
               tokens: int, significant: bool, entities: Iterable[str], created_at: float | None = None,
               tokenizer: str | None = None) -> None:
        self.append_many(key, [NewMessage(seq, message, retention, unclassified, tokens, significant,
                                          tuple(entities), created_at, tokenizer)])

    def append_many(self, key: Key, rows: list[NewMessage]) -> None:
        """Every row in one transaction: a failure at any of them stores none (the caller's batch is atomic)."""
        statements = NewMessage.statements(
            key, rows, f"INSERT INTO messages ({NewMessage.COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            "INSERT INTO entities (session_id, agent_id, name, count, last_seq) VALUES (?,?,?,1,?)"
            " ON CONFLICT(session_id, agent_id, name) DO UPDATE SET count = count + 1, last_seq = excluded.last_seq")
        if statements:
            self._tx(statements)

    def recount(self, key: Key, counts: list[tuple[int, int]], tokenizer: str) -> None:
        """Store token counts made again under ``tokenizer`` (seq, tokens), so the next load reuses them."""
        self._tx([("UPDATE messages SET tokens=?, tokenizer=? WHERE session_id=? AND agent_id=? AND seq=?",
                   (tokens, tokenizer, *key, seq)) for seq, tokens in counts])

    def redate(self, key: Key, times: list[tuple[int, float]]) -> None:
        """Give messages (seq, Unix time) the times inferred for them, in one transaction."""
        self._tx([("UPDATE messages SET created_at=? WHERE session_id=? AND agent_id=? AND seq=?",
                   (float(when), *key, seq)) for seq, when in times])

    def compact(self, key: Key, seqs: list[int], status: str, summary: dict[str, Any] | None,
                state: dict[str, Any]) -> None:
        """One transaction: mark the span, store its summary, save the session state."""
        statements = [(
            f"UPDATE messages SET status=? WHERE session_id=? AND agent_id=? AND seq IN ({','.join('?' * len(seqs))})",
            (status, *key, *seqs),
        )] if seqs else []
        if summary is not None:
            statements.append(summary_statement(
                key, summary, "INSERT INTO summaries (session_id, agent_id, first_seq, last_seq, tier, text, tokens,"
                " method, validation, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)"))
        statements.append(self._state_statement(key, state))
        self._tx(statements)

    def save_state(self, key: Key, state: dict[str, Any]) -> None:
        self._tx([self._state_statement(key, state)])

    @staticmethod
    def _state_statement(key: Key, state: dict[str, Any]) -> tuple[str, tuple]:
        return ("INSERT INTO session_state (session_id, agent_id, state) VALUES (?,?,?)"
                " ON CONFLICT(session_id, agent_id) DO UPDATE SET state = excluded.state",
                (*key, json.dumps(state)))

    # -- reads -------------------------------------------------------------------------------
    def load_messages(self, key: Key) -> list[dict[str, Any]]:
        rows = self._rows(f"SELECT {MESSAGE_FIELDS} FROM messages WHERE session_id=? AND agent_id=? ORDER BY seq", key)
        return [message_row(r) for r in rows]

    def recent(self, key: Key, n: int) -> list[dict[str, Any]]:
        rows = self._rows("SELECT body FROM messages WHERE session_id=? AND agent_id=? ORDER BY seq DESC LIMIT ?",
                          (*key, n))
        return [json.loads(r[0]) for r in reversed(rows)]

    def summaries(self, key: Key) -> list[dict[str, Any]]:
        rows = self._rows(
            "SELECT id, first_seq, last_seq, tier, text, tokens, method, validation, created_at FROM summaries"
            " WHERE session_id=? AND agent_id=? ORDER BY id", key)
        return [dict(id=r[0], first_seq=r[1], last_seq=r[2], tier=r[3], text=r[4], tokens=r[5], method=r[6],
                     validation=json.loads(r[7]), created_at=r[8]) for r in rows]

    def summaries_without_line_vectors(self, key: Key) -> list[tuple[int, str]]:
        rows = self._rows("SELECT id, text FROM summaries WHERE session_id=? AND agent_id=? AND line_vectors IS NULL"
                          " AND method != 'marker' ORDER BY id", key)
        return [(int(r[0]), r[1]) for r in rows]

    def save_summary_line_vectors(self, key: Key, rows: list[tuple[int, str]]) -> None:
        self._tx([("UPDATE summaries SET line_vectors=? WHERE id=? AND session_id=? AND agent_id=?",
                   (stored, summary_id, *key)) for summary_id, stored in rows])

    def summary_line_vectors(self, key: Key) -> list[tuple[str, str]]:
        rows = self._rows("SELECT text, line_vectors FROM summaries WHERE session_id=? AND agent_id=?"
                          " AND line_vectors IS NOT NULL ORDER BY id", key)
        return [(r[0], r[1]) for r in rows]

    def entities(self, key: Key, limit: int = 1_000_000) -> list[tuple[str, int, int]]:
        rows = self._rows("SELECT name, count, last_seq FROM entities WHERE session_id=? AND agent_id=?"
                          " ORDER BY count DESC, last_seq DESC LIMIT ?", (*key, limit))
        return [(r[0], r[1], r[2]) for r in rows]

    def load_state(self, key: Key) -> dict[str, Any]:
        rows = self._rows("SELECT state FROM session_state WHERE session_id=? AND agent_id=?", key)
        return json.loads(rows[0][0]) if rows else {}

    def sessions(self) -> list[Key]:
        # A session whose every message a time to live removed is still one: its removal marker stays.
        rows = self._rows("SELECT session_id, agent_id FROM messages UNION SELECT session_id, agent_id FROM summaries"
                          " ORDER BY session_id, agent_id", ())
        return [(r[0], r[1]) for r in rows]

    def session_rows(self, prefix: str = "") -> list[dict[str, Any]]:
        """Per (session, agent) whose session ID starts with ``prefix``: message count, first/last append
        time, highest seq (compared by substring: a ``%`` or ``_`` in a tenant is no wildcard); a session
        with settings and no message yet counts 0 messages, its times None and its seq -1; one whose every
        message a time to live removed counts 0 messages, its times None and its seq the last removed."""
        rows = self._rows(
            "SELECT session_id, agent_id, COUNT(*), MIN(created_at), MAX(created_at), MAX(seq) FROM messages"
            " WHERE substr(session_id, 1, ?) = ? GROUP BY session_id, agent_id"
            # Settings before the first message, or summaries (a removal's marker) after the last went.
            " UNION ALL SELECT session_id, agent_id, 0, NULL, NULL, COALESCE(MAX(last_seq), -1) FROM"
            " (SELECT session_id, agent_id, NULL AS last_seq FROM session_state"
            " UNION ALL SELECT session_id, agent_id, last_seq FROM summaries) s"
            " WHERE substr(session_id, 1, ?) = ? AND NOT EXISTS (SELECT 1 FROM messages m"
            " WHERE m.session_id = s.session_id AND m.agent_id = s.agent_id)"
            " GROUP BY session_id, agent_id ORDER BY 1, 2",
            (len(prefix), prefix, len(prefix), prefix))
        return [dict(session_id=r[0], agent_id=r[1], messages=r[2], created_at=r[3], updated_at=r[4], last_seq=r[5])
                for r in rows]

    def delete(self, session_id: str) -> int:
        """Every row of the session (all its agents) in one transaction; returns the messages removed."""
        count = self._rows("SELECT COUNT(*) FROM messages WHERE session_id=?", (session_id,))[0][0]
        self._tx([(f"DELETE FROM {table} WHERE session_id=?", (session_id,)) for table in TABLES])
        return int(count)

    def remove_through(self, key: Key, seq: int, marker: dict[str, Any], *,
                       keep_roles: tuple[str, ...] = ()) -> int:
        """The messages up to ``seq`` but those of ``keep_roles``, the summaries and entities ending among them,
        out; ``marker`` in."""
        kept = f" AND role NOT IN ({','.join('?' * len(keep_roles))})" if keep_roles else ""
        span = (*key, seq, *keep_roles)
        count = self._rows(f"SELECT COUNT(*) FROM messages WHERE session_id=? AND agent_id=? AND seq<=?{kept}",
                           span)[0][0]
        self._tx([(f"DELETE FROM messages WHERE session_id=? AND agent_id=? AND seq<=?{kept}", span)]
                 + [(f"DELETE FROM {table} WHERE session_id=? AND agent_id=? AND last_seq<=?", (*key, seq))
                    for table in ("summaries", "entities")]
                 + [summary_statement(key, marker, "INSERT INTO summaries (session_id, agent_id, first_seq, "
                                      "last_seq, tier, text, tokens, method, validation, created_at) "
                                      "VALUES (?,?,?,?,?,?,?,?,?,?)")])
        return int(count)

    # -- the archive watermark -----------------------------------------------------------------
    def archived_through(self, key: Key) -> int:
        rows = self._rows("SELECT archived_through FROM archive_marks WHERE session_id=? AND agent_id=?", key)
        return int(rows[0][0]) if rows else -1

    def mark_archived(self, key: Key, seq: int) -> None:
        """Raise the mark to ``seq`` (never lowers it: two archivers may finish out of order)."""
        self._tx([("INSERT INTO archive_marks (session_id, agent_id, archived_through) VALUES (?,?,?)"
                   " ON CONFLICT(session_id, agent_id) DO UPDATE SET"
                   " archived_through = MAX(archived_through, excluded.archived_through)", (*key, seq))])

    def messages_after(self, key: Key, seq: int) -> list[dict[str, Any]]:
        rows = self._rows(f"SELECT {MESSAGE_FIELDS} FROM messages WHERE session_id=? AND agent_id=? AND seq > ?"
                          " ORDER BY seq", (*key, seq))
        return [message_row(r) for r in rows]

    def unarchived(self) -> list[Key]:
        """Sessions holding messages past their archive mark."""
        rows = self._rows(
            "SELECT m.session_id, m.agent_id FROM messages m LEFT JOIN archive_marks a"
            " ON a.session_id = m.session_id AND a.agent_id = m.agent_id"
            " GROUP BY m.session_id, m.agent_id HAVING MAX(m.seq) > COALESCE(MAX(a.archived_through), -1)"
            " ORDER BY m.session_id, m.agent_id", ())
        return [(r[0], r[1]) for r in rows]
