"""SQLite persistence for sessions: one commit per append (WAL), so a crash loses no message.

The raw messages are never rewritten: compaction only flips a status column and adds
summary rows, so the full history stays readable (``messages()``) after any tier.
Rows are keyed by (session_id, agent_id); agent_id '' is the main agent.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Iterable, Protocol, runtime_checkable

from ..errors import StoreError

SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (
    session_id TEXT NOT NULL, agent_id TEXT NOT NULL, seq INTEGER NOT NULL,
    role TEXT NOT NULL, retention TEXT NOT NULL, unclassified INTEGER NOT NULL DEFAULT 0,
    body TEXT NOT NULL, tokens INTEGER NOT NULL, status TEXT NOT NULL DEFAULT 'active',
    significant INTEGER NOT NULL DEFAULT 0, created_at REAL NOT NULL,
    PRIMARY KEY (session_id, agent_id, seq)
);
CREATE TABLE IF NOT EXISTS summaries (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, agent_id TEXT NOT NULL,
    first_seq INTEGER NOT NULL, last_seq INTEGER NOT NULL, tier INTEGER NOT NULL, text TEXT NOT NULL,
    tokens INTEGER NOT NULL, method TEXT NOT NULL, validation TEXT NOT NULL, created_at REAL NOT NULL
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
"""

Key = tuple[str, str]


class SessionConflictError(StoreError):
    """Another process appended to the session since this one last read it (a shared store): the
    caller reloads the session and takes the next sequence number."""


@runtime_checkable
class SessionStorage(Protocol):
    """The sessions seam: :class:`SessionStore` (SQLite, embedded default) and
    ``stores.postgres_sessions.PostgresSessionStore`` (shared by replicas) pass one contract suite,
    ``tests/integration/test_session_store_contract.py``. Raw messages are never rewritten."""

    def append(self, key: Key, seq: int, message: dict[str, Any], *, retention: str, unclassified: bool,
               tokens: int, significant: bool, entities: Iterable[str]) -> None: ...

    def compact(self, key: Key, seqs: list[int], status: str, summary: dict[str, Any] | None,
                state: dict[str, Any]) -> None: ...

    def save_state(self, key: Key, state: dict[str, Any]) -> None: ...

    def load_messages(self, key: Key) -> list[dict[str, Any]]: ...

    def recent(self, key: Key, n: int) -> list[dict[str, Any]]: ...

    def summaries(self, key: Key) -> list[dict[str, Any]]: ...

    def entities(self, key: Key, limit: int = 1_000_000) -> list[tuple[str, int, int]]: ...

    def load_state(self, key: Key) -> dict[str, Any]: ...

    def sessions(self) -> list[Key]: ...

    def close(self) -> None: ...


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
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open session store at {path}: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _tx(self, statements: Iterable[tuple[str, tuple]]) -> None:
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                for sql, params in statements:
                    self._db.execute(sql, params)
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                self._db.execute("ROLLBACK") if self._db.in_transaction else None
                raise StoreError(f"session store {self.path} write failed: {exc}") from exc

    def _rows(self, sql: str, params: tuple) -> list[tuple]:
        with self._lock:
            try:
                return self._db.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise StoreError(f"session store {self.path} read failed: {exc}") from exc

    # -- writes ------------------------------------------------------------------------------
    def append(self, key: Key, seq: int, message: dict[str, Any], *, retention: str, unclassified: bool,
               tokens: int, significant: bool, entities: Iterable[str]) -> None:
        statements = [(
            "INSERT INTO messages (session_id, agent_id, seq, role, retention, unclassified, body, tokens,"
            " significant, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (*key, seq, message["role"], retention, int(unclassified), json.dumps(message, ensure_ascii=False),
             tokens, int(significant), time.time()),
        )]
        for name in entities:
            statements.append((
                "INSERT INTO entities (session_id, agent_id, name, count, last_seq) VALUES (?,?,?,1,?)"
                " ON CONFLICT(session_id, agent_id, name) DO UPDATE SET count = count + 1, last_seq = excluded.last_seq",
                (*key, name, seq),
            ))
        self._tx(statements)

    def compact(self, key: Key, seqs: list[int], status: str, summary: dict[str, Any] | None,
                state: dict[str, Any]) -> None:
        """One transaction: mark the span, store its summary, save the session state."""
        statements = [(
            f"UPDATE messages SET status=? WHERE session_id=? AND agent_id=? AND seq IN ({','.join('?' * len(seqs))})",
            (status, *key, *seqs),
        )] if seqs else []
        if summary is not None:
            statements.append((
                "INSERT INTO summaries (session_id, agent_id, first_seq, last_seq, tier, text, tokens, method,"
                " validation, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (*key, summary["first_seq"], summary["last_seq"], summary["tier"], summary["text"],
                 summary["tokens"], summary["method"], json.dumps(summary["validation"]), time.time()),
            ))
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
        rows = self._rows(
            "SELECT seq, retention, unclassified, body, tokens, status, significant FROM messages"
            " WHERE session_id=? AND agent_id=? ORDER BY seq", key)
        return [dict(seq=r[0], retention=r[1], unclassified=bool(r[2]), message=json.loads(r[3]), tokens=r[4],
                     status=r[5], significant=bool(r[6])) for r in rows]

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

    def entities(self, key: Key, limit: int = 1_000_000) -> list[tuple[str, int, int]]:
        rows = self._rows("SELECT name, count, last_seq FROM entities WHERE session_id=? AND agent_id=?"
                          " ORDER BY count DESC, last_seq DESC LIMIT ?", (*key, limit))
        return [(r[0], r[1], r[2]) for r in rows]

    def load_state(self, key: Key) -> dict[str, Any]:
        rows = self._rows("SELECT state FROM session_state WHERE session_id=? AND agent_id=?", key)
        return json.loads(rows[0][0]) if rows else {}

    def sessions(self) -> list[Key]:
        rows = self._rows("SELECT DISTINCT session_id, agent_id FROM messages ORDER BY session_id, agent_id", ())
        return [(r[0], r[1]) for r in rows]
