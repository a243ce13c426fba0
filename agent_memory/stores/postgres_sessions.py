"""Working-memory sessions on PostgreSQL: the contract of ``session_storage.py``, as SQLite's
store, shared by every API replica. One transaction per append, batch of messages or compaction,
as in SQLite, so a crashed process loses no acknowledged message and a batch is stored whole or not
at all. Tables: ``migrations/002_sessions.sql``.

Any replica answers any request for a session (no sticky routing): each write to a session
holds that session's transaction-scoped advisory lock, so writes from several replicas are
serialized; an append whose sequence number another replica already used is refused with
``SessionConflictError`` (the session reloads and takes the next one); and each replica keeps
the session's fingerprint (last seq, summaries, state) as of its own last write, so that a
cached session is reloaded when the store's fingerprint shows another replica's write since."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from agent_memory.stores.postgres import PostgresDB, backup_refused
from agent_memory.stores.session_storage import (
    MESSAGE_FIELDS,
    Key,
    NewMessage,
    SessionConflictError,
    message_row,
    summary_statement,
)

SUMMARY_INSERT = ("INSERT INTO session_summaries (session_id, agent_id, first_seq, last_seq, tier, text, tokens, method,"
                  " validation, created_at) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)")


class PostgresSessionStore:
    shared = True  # several processes write here: sessions check their cache (conversation/session.py)

    def __init__(self, db: PostgresDB) -> None:
        self.db = db
        self.path = f"postgresql {db.where}"  # named in messages like the SQLite store's file
        self._own: dict[Key, tuple] = {}  # key -> fingerprint right after this process's last write

    def snapshot_to(self, path: Path) -> None:
        raise backup_refused("session store", self.db.where)

    def close(self) -> None:
        """The pool belongs to the services, which close it."""

    def _tx(self, statements: list[tuple[str, tuple]]) -> None:
        with self.db.connection() as conn, conn.transaction():
            for sql, params in statements:
                conn.execute(sql, params)

    def _session_tx(self, key: Key, statements: list[tuple[str, tuple]], *, next_seq: int | None = None) -> None:
        """Statements on one session under its advisory lock; records the fingerprint they leave."""
        with self.db.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 7))", (f"session\x1f{key[0]}\x1f{key[1]}",))
            if next_seq is not None:
                (last,) = conn.execute("SELECT coalesce(max(seq), -1) FROM session_messages WHERE session_id=%s"
                                       " AND agent_id=%s", key).fetchone()
                if last >= next_seq:
                    raise SessionConflictError(f"session {key[0]!r}: seq {next_seq} was taken by another process "
                                               f"(last is {last})")
            for sql, params in statements:
                conn.execute(sql, params)
            self._own[key] = _fingerprint(conn, key)

    def fingerprint(self, key: Key) -> tuple:
        """What the session's rows look like now: (last seq, summaries, state's hash)."""
        with self.db.connection() as conn:
            return _fingerprint(conn, key)

    def own_fingerprint(self, key: Key) -> tuple | None:
        """The fingerprint this process's last write to the session left, if any."""
        return self._own.get(key)

    def _rows(self, sql: str, params: tuple) -> list[tuple]:
        with self.db.connection() as conn:
            return conn.execute(sql, params).fetchall()

    # -- writes ------------------------------------------------------------------------------
    def append(self, key: Key, seq: int, message: dict[str, Any], *, retention: str, unclassified: bool,
               tokens: int, significant: bool, entities: Iterable[str], created_at: float | None = None,
               tokenizer: str | None = None) -> None:
        self.append_many(key, [NewMessage(seq, message, retention, unclassified, tokens, significant,
                                          tuple(entities), created_at, tokenizer)])

    def append_many(self, key: Key, rows: list[NewMessage]) -> None:
        """Every row in one transaction under the session's lock: all stored or none, and no other append
        lands between them (the first seq already taken: ``SessionConflictError``)."""
        statements = NewMessage.statements(
            key, rows, f"INSERT INTO session_messages ({NewMessage.COLUMNS}) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
            "INSERT INTO session_entities (session_id, agent_id, name, count, last_seq) VALUES (%s,%s,%s,1,%s)"
            " ON CONFLICT (session_id, agent_id, name) DO UPDATE SET count = session_entities.count + 1,"
            " last_seq = excluded.last_seq")
        if rows:
            self._session_tx(key, statements, next_seq=rows[0].seq)

    def recount(self, key: Key, counts: list[tuple[int, int]], tokenizer: str) -> None:
        """Store token counts made again under ``tokenizer`` (seq, tokens), so the next load reuses them."""
        self._session_tx(key, [("UPDATE session_messages SET tokens=%s, tokenizer=%s WHERE session_id=%s"
                                " AND agent_id=%s AND seq=%s", (tokens, tokenizer, *key, seq))
                               for seq, tokens in counts])

    def redate(self, key: Key, times: list[tuple[int, float]]) -> None:
        """Give messages (seq, Unix time) the times inferred for them, in one transaction."""
        self._session_tx(key, [("UPDATE session_messages SET created_at=%s WHERE session_id=%s AND agent_id=%s"
                                " AND seq=%s", (float(when), *key, seq)) for seq, when in times])

    def compact(self, key: Key, seqs: list[int], status: str, summary: dict[str, Any] | None,
                state: dict[str, Any]) -> None:
        """One transaction: mark the span, store its summary, save the session state."""
        statements = [(
            "UPDATE session_messages SET status=%s WHERE session_id=%s AND agent_id=%s AND seq = ANY(%s)",
            (status, *key, list(seqs)),
        )] if seqs else []
        if summary is not None:
            statements.append(summary_statement(key, summary, SUMMARY_INSERT))
        statements.append(_state_statement(key, state))
        self._session_tx(key, statements)

    def save_state(self, key: Key, state: dict[str, Any]) -> None:
        self._session_tx(key, [_state_statement(key, state)])

    # -- reads -------------------------------------------------------------------------------
    def load_messages(self, key: Key) -> list[dict[str, Any]]:
        rows = self._rows(f"SELECT {MESSAGE_FIELDS} FROM session_messages WHERE session_id=%s AND agent_id=%s ORDER BY seq", key)
        return [message_row(r) for r in rows]

    def recent(self, key: Key, n: int) -> list[dict[str, Any]]:
        rows = self._rows("SELECT body FROM session_messages WHERE session_id=%s AND agent_id=%s"
                          " ORDER BY seq DESC LIMIT %s", (*key, max(0, n)))
        return [json.loads(r[0]) for r in reversed(rows)]

    def summaries(self, key: Key) -> list[dict[str, Any]]:
        rows = self._rows(
            "SELECT id, first_seq, last_seq, tier, text, tokens, method, validation, created_at FROM session_summaries"
            " WHERE session_id=%s AND agent_id=%s ORDER BY id", key)
        return [dict(id=r[0], first_seq=r[1], last_seq=r[2], tier=r[3], text=r[4], tokens=r[5], method=r[6],
                     validation=json.loads(r[7]), created_at=r[8]) for r in rows]

    def summaries_without_line_vectors(self, key: Key) -> list[tuple[int, str]]:
        rows = self._rows("SELECT id, text FROM session_summaries WHERE session_id=%s AND agent_id=%s"
                          " AND line_vectors IS NULL AND method != 'marker' ORDER BY id", key)
        return [(int(r[0]), r[1]) for r in rows]

    def save_summary_line_vectors(self, key: Key, rows: list[tuple[int, str]]) -> None:
        # Not under the session's advisory lock: vectors change no fingerprint, and a row a removal took is no update.
        self._tx([("UPDATE session_summaries SET line_vectors=%s WHERE id=%s AND session_id=%s AND agent_id=%s",
                   (stored, summary_id, *key)) for summary_id, stored in rows])

    def summary_line_vectors(self, key: Key) -> list[tuple[str, str]]:
        rows = self._rows("SELECT text, line_vectors FROM session_summaries WHERE session_id=%s AND agent_id=%s"
                          " AND line_vectors IS NOT NULL ORDER BY id", key)
        return [(r[0], r[1]) for r in rows]

    def entities(self, key: Key, limit: int = 1_000_000) -> list[tuple[str, int, int]]:
        rows = self._rows("SELECT name, count, last_seq FROM session_entities WHERE session_id=%s AND agent_id=%s"
                          " ORDER BY count DESC, last_seq DESC LIMIT %s", (*key, limit))
        return [(r[0], r[1], r[2]) for r in rows]

    def load_state(self, key: Key) -> dict[str, Any]:
        rows = self._rows("SELECT state FROM session_state WHERE session_id=%s AND agent_id=%s", key)
        return json.loads(rows[0][0]) if rows else {}

    def sessions(self) -> list[Key]:
        # A session whose every message a time to live removed is still one: its removal marker stays.
        rows = self._rows("SELECT * FROM (SELECT session_id, agent_id FROM session_messages"
                          " UNION SELECT session_id, agent_id FROM session_summaries) listed"
                          " ORDER BY session_id COLLATE \"C\", agent_id COLLATE \"C\"", ())
        return [(r[0], r[1]) for r in rows]

    def session_rows(self, prefix: str = "") -> list[dict[str, Any]]:
        """As the SQLite store's: per (session, agent) under ``prefix``, counts and times."""
        rows = self._rows(
            "SELECT * FROM (SELECT session_id, agent_id, COUNT(*), MIN(created_at), MAX(created_at), MAX(seq)"
            " FROM session_messages WHERE left(session_id, %s) = %s GROUP BY session_id, agent_id"
            # Settings before the first message, or summaries (a removal's marker) after the last went.
            " UNION ALL SELECT session_id, agent_id, 0, NULL, NULL, COALESCE(MAX(last_seq), -1) FROM"
            " (SELECT session_id, agent_id, NULL::integer AS last_seq FROM session_state"
            " UNION ALL SELECT session_id, agent_id, last_seq FROM session_summaries) s"
            " WHERE left(session_id, %s) = %s AND NOT EXISTS (SELECT 1 FROM session_messages m"
            " WHERE m.session_id = s.session_id AND m.agent_id = s.agent_id)"
            " GROUP BY session_id, agent_id) listed"
            " ORDER BY session_id COLLATE \"C\", agent_id COLLATE \"C\"", (len(prefix), prefix, len(prefix), prefix))
        return [dict(session_id=r[0], agent_id=r[1], messages=r[2], created_at=r[3], updated_at=r[4], last_seq=r[5])
                for r in rows]

    def delete(self, session_id: str) -> int:
        """Every row of the session (all its agents) in one transaction; returns the messages removed."""
        with self.db.connection() as conn, conn.transaction():
            count = conn.execute("DELETE FROM session_messages WHERE session_id=%s", (session_id,)).rowcount
            for table in ("session_summaries", "session_entities", "session_state", "session_archive_marks"):
                conn.execute(f"DELETE FROM {table} WHERE session_id=%s", (session_id,))
        return int(count)

    def remove_through(self, key: Key, seq: int, marker: dict[str, Any], *,
                       keep_roles: tuple[str, ...] = ()) -> int:
        """The messages up to ``seq`` but those of ``keep_roles``, the summaries and entities ending among them,
        out; ``marker`` in: one transaction under the session's lock (its new summary changes the fingerprint
        other replicas check)."""
        span = (*key, seq, list(keep_roles))
        (count,) = self._rows("SELECT count(*) FROM session_messages WHERE session_id=%s AND agent_id=%s"
                              " AND seq<=%s AND NOT role = ANY(%s)", span)[0]
        self._session_tx(key, [("DELETE FROM session_messages WHERE session_id=%s AND agent_id=%s AND seq<=%s"
                                " AND NOT role = ANY(%s)", span)]
                         + [(f"DELETE FROM {table} WHERE session_id=%s AND agent_id=%s AND last_seq<=%s", (*key, seq))
                            for table in ("session_summaries", "session_entities")]
                         + [summary_statement(key, marker, SUMMARY_INSERT)])
        return int(count)

    # -- the archive watermark (migrations/005_session_archive.sql) ------------------------------
    def archived_through(self, key: Key) -> int:
        rows = self._rows("SELECT archived_through FROM session_archive_marks WHERE session_id=%s AND agent_id=%s",
                          key)
        return int(rows[0][0]) if rows else -1

    def mark_archived(self, key: Key, seq: int) -> None:
        """Raise the mark to ``seq`` (never lowers it: replicas may finish out of order)."""
        self._tx([("INSERT INTO session_archive_marks (session_id, agent_id, archived_through) VALUES (%s,%s,%s)"
                   " ON CONFLICT (session_id, agent_id) DO UPDATE SET archived_through ="
                   " GREATEST(session_archive_marks.archived_through, excluded.archived_through)", (*key, seq))])

    def messages_after(self, key: Key, seq: int) -> list[dict[str, Any]]:
        rows = self._rows(f"SELECT {MESSAGE_FIELDS} FROM session_messages WHERE session_id=%s AND agent_id=%s AND seq > %s"
                          " ORDER BY seq", (*key, seq))
        return [message_row(r) for r in rows]

    def unarchived(self) -> list[Key]:
        """Sessions holding messages past their archive mark."""
        rows = self._rows(
            "SELECT m.session_id, m.agent_id FROM session_messages m LEFT JOIN session_archive_marks a"
            " ON a.session_id = m.session_id AND a.agent_id = m.agent_id"
            " GROUP BY m.session_id, m.agent_id HAVING MAX(m.seq) > COALESCE(MAX(a.archived_through), -1)"
            " ORDER BY m.session_id COLLATE \"C\", m.agent_id COLLATE \"C\"", ())
        return [(r[0], r[1]) for r in rows]


def _fingerprint(conn, key: Key) -> tuple:
    # The newest summary's id too: a removal (``remove_through``) may leave as many summaries as it found.
    row = conn.execute(
        "SELECT (SELECT coalesce(max(seq), -1) FROM session_messages WHERE session_id=%s AND agent_id=%s),"
        " (SELECT count(*) || ':' || coalesce(max(id), 0) FROM session_summaries WHERE session_id=%s"
        " AND agent_id=%s),"
        " (SELECT md5(state) FROM session_state WHERE session_id=%s AND agent_id=%s)", (*key, *key, *key)).fetchone()
    return tuple(row)


def _state_statement(key: Key, state: dict[str, Any]) -> tuple[str, tuple]:
    return ("INSERT INTO session_state (session_id, agent_id, state) VALUES (%s,%s,%s)"
            " ON CONFLICT (session_id, agent_id) DO UPDATE SET state = excluded.state",
            (*key, json.dumps(state)))
