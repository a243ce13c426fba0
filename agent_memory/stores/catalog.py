"""The source catalog: what was ingested, with which content hash and which stored items.

It is how re-ingestion knows a source is unchanged (nothing embedded, nothing written),
how a changed source finds the items to replace, how ``forget`` finds everything of a
source, and how retrieval finds a turn's neighbours in its session.
"""

from __future__ import annotations

import functools
import json
import re
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from agent_memory.core.entities import normalize_name, without_disambiguation
from agent_memory.core.errors import StoreError
from agent_memory.stores.snapshots import sqlite_snapshot

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sources (
    tenant TEXT NOT NULL,
    source_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    path TEXT NOT NULL DEFAULT '',
    title TEXT NOT NULL DEFAULT '',
    session_id TEXT,
    seq INTEGER,
    timestamp TEXT NOT NULL DEFAULT '',
    item_ids TEXT NOT NULL DEFAULT '[]',
    n_triples INTEGER NOT NULL DEFAULT 0,
    updated_at REAL NOT NULL,
    PRIMARY KEY (tenant, source_id)
);
CREATE INDEX IF NOT EXISTS sources_session ON sources (tenant, session_id, seq);
CREATE TABLE IF NOT EXISTS titles (
    tenant TEXT NOT NULL,
    title_key TEXT NOT NULL,
    source_id TEXT NOT NULL,
    PRIMARY KEY (tenant, title_key, source_id)
);
CREATE TABLE IF NOT EXISTS owners (
    tenant TEXT NOT NULL,
    source_id TEXT NOT NULL,
    owner TEXT NOT NULL,
    PRIMARY KEY (tenant, source_id)
);
CREATE TABLE IF NOT EXISTS named_files (
    tenant TEXT NOT NULL,
    source_id TEXT NOT NULL,
    PRIMARY KEY (tenant, source_id)
);
"""

# ``named_by_user`` lives in a table of its own, not a column of ``sources``: a version from before it reads
# and writes ``sources`` (twelve columns, inserted by position) as it always did on the same data dir.
_SELECT = ("SELECT tenant, source_id, kind, content_hash, path, title, session_id, seq, timestamp, item_ids, "
           "n_triples, updated_at, EXISTS (SELECT 1 FROM named_files n WHERE n.tenant = s.tenant "
           "AND n.source_id = s.source_id) FROM sources s")


# The tables holding a source's rows: its entry first (``delete_many`` counts those).
_SOURCE_TABLES = ("sources", "titles", "owners", "named_files")


@dataclass
class SourceEntry:
    tenant: str
    source_id: str
    kind: str
    content_hash: str
    path: str = ""
    title: str = ""
    session_id: str | None = None
    seq: int | None = None
    timestamp: str = ""
    item_ids: list[str] = field(default_factory=list)
    n_triples: int = 0
    updated_at: float = 0.0
    # A file the user named to a job (given alone, or under a folder given that ignore rules leave out), not
    # only reached by a walk: as ``git add -f`` does, naming it keeps it, so a later walk of its folder whose
    # ignore rules leave it out does not forget it. Stored in ``named_files`` (see ``_SELECT``).
    named_by_user: bool = False


@runtime_checkable
class SourceCatalog(Protocol):
    """The catalog seam: :class:`SQLiteCatalog` (embedded default) and
    ``stores.postgres_catalog.PostgresCatalog`` (shared by replicas) pass one contract suite,
    ``tests/integration/test_catalog_contract.py``. Everything is scoped by tenant."""

    def get(self, tenant: str, source_id: str) -> SourceEntry | None: ...

    def get_many(self, tenant: str, source_ids: list[str]) -> dict[str, SourceEntry]: ...

    def put_many(self, entries: list[SourceEntry]) -> None: ...

    def delete(self, tenant: str, source_id: str) -> bool: ...

    def delete_many(self, tenant: str, source_ids: list[str]) -> int: ...

    def delete_tenant(self, tenant: str) -> int: ...

    def source_ids(self, tenant: str, prefix: str = "") -> list[str]: ...

    def owners(self, tenant: str, source_ids: list[str]) -> dict[str, str]: ...

    def claim(self, tenant: str, owner: str, source_ids: list[str]) -> None: ...

    def owned_by(self, tenant: str, owner: str) -> list[str]: ...

    def under_path(self, tenant: str, kind: str, prefix: str) -> list[SourceEntry]: ...

    def titled(self, tenant: str, names: list[str]) -> dict[str, list[str]]: ...

    def session_neighbours(self, tenant: str, session_id: str, seq: int, before: int,
                           after: int) -> list[SourceEntry]: ...

    def recent_turns(self, tenant: str, session_id: str, limit: int) -> list[SourceEntry]: ...

    def count(self, tenant: str | None = None) -> int: ...

    def tenants(self) -> list[str]: ...

    def entries(self, tenant: str) -> list[SourceEntry]:
        """Every entry of the tenant (a file's manifest too), by source ID: what ``agent-memory check``
        compares with the vectors and the graph."""
        ...

    def snapshot_to(self, path: Path) -> None:
        """A consistent copy of the catalog at ``path`` (a new file the SQLite catalog opens as it is); one in
        PostgreSQL raises BackupError naming pg_dump."""
        ...

    def close(self) -> None: ...


def _store_errors(cls):
    """Every public method (and opening) of ``cls`` raises StoreError for a database or file fault (a
    corrupted or read-only file, a full disk): a surface reports it as a store error (HTTP 503, one
    CLI line) instead of an internal one. The message names the file, never the data dir's path."""
    def wrap(name, fn):
        @functools.wraps(fn)
        def call(self, *args, **kwargs):
            try:
                return fn(self, *args, **kwargs)
            except (sqlite3.Error, OSError) as exc:
                file = getattr(self, "name", "catalog.sqlite")
                raise StoreError(f"catalog {file}: {name} failed: {type(exc).__name__}: {exc}"
                                 f"{catalog_advice(exc, file)}") from exc
        return call

    for name, fn in list(vars(cls).items()):
        if callable(fn) and (name == "__init__" or not name.startswith("_")):
            setattr(cls, name, wrap(name, fn))
    return cls


def catalog_advice(exc: BaseException, file: str) -> str:
    """What to do about a catalog file's fault, as the end of its error (empty when there is nothing to say):
    a damaged file is restored or rebuilt, one that cannot be written has its permissions checked."""
    text = str(exc).lower()
    if isinstance(exc, sqlite3.DatabaseError) and ("malformed" in text or "not a database" in text):
        return (f": the file is damaged: restore the data dir from a backup (the whole folder, copied while "
                f"nothing ran), or move {file} aside and run `agent-memory check --repair --adopt`, which records "
                "what the vectors hold in a new catalog (then ingest your files again)")
    if "readonly" in text or "read-only" in text or isinstance(exc, PermissionError):
        return (f": check the permissions of {file} and of its folder: this process must be able to write the "
                f"file and the {file}-wal and {file}-shm files beside it")
    if "disk is full" in text or "no space" in text:
        return ": free disk space where the data dir is, then run the command again"
    return ""


@_store_errors
class SQLiteCatalog:
    """The embedded catalog: one SQLite file (WAL) under the data dir."""

    def __init__(self, path: Path) -> None:
        self.name = path.name
        path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(str(path), check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.executescript(_SCHEMA)
        self._lock = threading.Lock()
        self._backfill_titles()

    def _backfill_titles(self) -> None:
        """Catalogs written before the title index existed get it on first open."""
        with self._lock, self._conn:
            if self._conn.execute("SELECT 1 FROM titles LIMIT 1").fetchone():
                return
            rows = self._conn.execute("SELECT tenant, source_id, title FROM sources WHERE title != ''").fetchall()
            self._conn.executemany("INSERT OR IGNORE INTO titles VALUES (?,?,?)",
                                   [(t, k, sid) for t, sid, title in rows if (k := title_key(title))])

    def get(self, tenant: str, source_id: str) -> SourceEntry | None:
        with self._lock:
            row = self._conn.execute(
                f"{_SELECT} WHERE tenant=? AND source_id=?", (tenant, source_id)
            ).fetchone()
        return _entry(row) if row else None

    def get_many(self, tenant: str, source_ids: list[str]) -> dict[str, SourceEntry]:
        out: dict[str, SourceEntry] = {}
        with self._lock:
            for start in range(0, len(source_ids), 500):
                part = source_ids[start : start + 500]
                marks = ",".join("?" * len(part))
                for row in self._conn.execute(
                    f"{_SELECT} WHERE tenant=? AND source_id IN ({marks})", [tenant, *part]
                ):
                    entry = _entry(row)
                    out[entry.source_id] = entry
        return out

    def put_many(self, entries: list[SourceEntry]) -> None:
        now = time.time()
        with self._lock, self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO sources VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                [
                    (e.tenant, e.source_id, e.kind, e.content_hash, e.path, e.title, e.session_id, e.seq,
                     e.timestamp, json.dumps(e.item_ids), e.n_triples, now)
                    for e in entries
                ],
            )
            self._conn.executemany("DELETE FROM named_files WHERE tenant=? AND source_id=?",
                                   [(e.tenant, e.source_id) for e in entries if not e.named_by_user])
            self._conn.executemany("INSERT OR IGNORE INTO named_files VALUES (?,?)",
                                   [(e.tenant, e.source_id) for e in entries if e.named_by_user])
            self._conn.executemany("DELETE FROM titles WHERE tenant=? AND source_id=?",
                                   [(e.tenant, e.source_id) for e in entries])
            self._conn.executemany("INSERT OR IGNORE INTO titles VALUES (?,?,?)",
                                   [(e.tenant, k, e.source_id) for e in entries if (k := title_key(e.title))])

    def delete(self, tenant: str, source_id: str) -> bool:
        return self.delete_many(tenant, [source_id]) > 0

    def delete_many(self, tenant: str, source_ids: list[str]) -> int:
        """Every row of ``source_ids`` (entry, title, owner, named file) in one transaction; returns the
        entries removed (an ID with only a claim counts none)."""
        rows = [(tenant, sid) for sid in dict.fromkeys(source_ids)]
        removed = 0
        with self._lock, self._conn:
            for table in _SOURCE_TABLES:
                cur = self._conn.executemany(f"DELETE FROM {table} WHERE tenant=? AND source_id=?", rows)
                if table == "sources":
                    removed = cur.rowcount
        return max(removed, 0)

    def delete_tenant(self, tenant: str) -> int:
        """Everything the catalog holds for ``tenant``, in one transaction; returns the entries removed."""
        with self._lock, self._conn:
            removed = self._conn.execute("DELETE FROM sources WHERE tenant=?", (tenant,)).rowcount
            for table in _SOURCE_TABLES[1:]:
                self._conn.execute(f"DELETE FROM {table} WHERE tenant=?", (tenant,))
        return removed

    def source_ids(self, tenant: str, prefix: str = "") -> list[str]:
        """The IDs starting with ``prefix`` that have an entry or an owner (a claim a job died before writing,
        a file's manifest ``file:...``), in order. Compared by substr, not LIKE: an ID may hold '%' or '_'."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT source_id FROM sources WHERE tenant=? AND substr(source_id, 1, ?)=?"
                " UNION SELECT source_id FROM owners WHERE tenant=? AND substr(source_id, 1, ?)=? ORDER BY 1",
                (tenant, len(prefix), prefix, tenant, len(prefix), prefix)).fetchall()
        return [r[0] for r in rows]

    # Ownership: which file (manifest) or API caller wrote a source ID. A record of one file must
    # never take over a source another file owns (agent_memory/ingest/pipeline.py refuses it).
    def owners(self, tenant: str, source_ids: list[str]) -> dict[str, str]:
        """{source_id: owner} for those of ``source_ids`` that have an owner."""
        out: dict[str, str] = {}
        with self._lock:
            for start in range(0, len(source_ids), 500):
                part = source_ids[start : start + 500]
                marks = ",".join("?" * len(part))
                out.update(self._conn.execute(
                    f"SELECT source_id, owner FROM owners WHERE tenant=? AND source_id IN ({marks})", [tenant, *part]))
        return out

    def claim(self, tenant: str, owner: str, source_ids: list[str]) -> None:
        """Record ``owner`` as the owner of ``source_ids`` (the caller checked they were free)."""
        with self._lock, self._conn:
            self._conn.executemany("INSERT OR REPLACE INTO owners VALUES (?,?,?)",
                                   [(tenant, sid, owner) for sid in source_ids])

    def owned_by(self, tenant: str, owner: str) -> list[str]:
        """The source IDs ``owner`` claimed (a file whose job died before its manifest was written)."""
        with self._lock:
            rows = self._conn.execute("SELECT source_id FROM owners WHERE tenant=? AND owner=? ORDER BY source_id",
                                      (tenant, owner)).fetchall()
        return [r[0] for r in rows]

    def under_path(self, tenant: str, kind: str, prefix: str) -> list[SourceEntry]:
        """Entries of ``kind`` whose recorded path starts with ``prefix`` (a folder job's files, to find
        those gone from disk), by source ID. Compared by substr, not LIKE: a path may hold '%' or '_'."""
        with self._lock:
            rows = self._conn.execute(
                f"{_SELECT} WHERE tenant=? AND kind=? AND substr(path, 1, ?)=? ORDER BY source_id",
                (tenant, kind, len(prefix), prefix)).fetchall()
        return [_entry(r) for r in rows]

    def titled(self, tenant: str, names: list[str]) -> dict[str, list[str]]:
        """Sources whose title names one of ``names`` (compared by :func:`title_key`): the
        pages of those entities, as {name: [source_id, ...]}, names without a page left out."""
        keys: dict[str, list[str]] = {}
        for name in names:
            key = title_key(name)
            if key:
                keys.setdefault(key, []).append(name)
        out: dict[str, list[str]] = {}
        with self._lock:
            key_list = list(keys)
            for start in range(0, len(key_list), 500):
                part = key_list[start : start + 500]
                marks = ",".join("?" * len(part))
                for key, source_id in self._conn.execute(
                    f"SELECT title_key, source_id FROM titles WHERE tenant=? AND title_key IN ({marks})"
                    " ORDER BY title_key, source_id", [tenant, *part]
                ):
                    for name in keys[key]:
                        out.setdefault(name, []).append(source_id)
        return out

    def session_neighbours(self, tenant: str, session_id: str, seq: int, before: int, after: int) -> list[SourceEntry]:
        with self._lock:
            rows = self._conn.execute(
                f"{_SELECT} WHERE tenant=? AND session_id=? AND seq BETWEEN ? AND ? ORDER BY seq",
                (tenant, session_id, seq - before, seq + after),
            ).fetchall()
        return [_entry(r) for r in rows]

    def recent_turns(self, tenant: str, session_id: str, limit: int) -> list[SourceEntry]:
        with self._lock:
            rows = self._conn.execute(
                f"{_SELECT} WHERE tenant=? AND session_id=? ORDER BY seq DESC LIMIT ?",
                (tenant, session_id, limit),
            ).fetchall()
        return [_entry(r) for r in reversed(rows)]

    def count(self, tenant: str | None = None) -> int:
        with self._lock:
            if tenant is None:
                return self._conn.execute("SELECT COUNT(*) FROM sources").fetchone()[0]
            return self._conn.execute("SELECT COUNT(*) FROM sources WHERE tenant=?", (tenant,)).fetchone()[0]

    def tenants(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._conn.execute("SELECT DISTINCT tenant FROM sources")]

    def entries(self, tenant: str) -> list[SourceEntry]:
        with self._lock:
            rows = self._conn.execute(f"{_SELECT} WHERE tenant=? ORDER BY source_id", (tenant,)).fetchall()
        return [_entry(r) for r in rows]

    def snapshot_to(self, path: Path) -> None:
        with self._lock:  # no write of this process in between (SQLite keeps other processes' out)
            sqlite_snapshot(self._conn, Path(path), f"catalog {self.name}")

    def close(self) -> None:
        self._conn.close()


Catalog = SQLiteCatalog  # the name existing callers construct by path


_LEADING_ARTICLE = re.compile(r"^(the|a|an)\s+", re.IGNORECASE)


@functools.lru_cache(maxsize=100_000)  # pages are looked up for every name a question's candidates mention
def title_key(title: str) -> str:
    """What a title names, for matching against entity names: "The Conversation (website)" and
    "the conversation" are one key. A trailing parenthesized disambiguation and a leading
    article are dropped, then the name is normalized like graph entities are."""
    text = without_disambiguation(title or "") or (title or "")
    text = _LEADING_ARTICLE.sub("", text.strip())
    return normalize_name(text)


def _entry(row) -> SourceEntry:
    return SourceEntry(
        tenant=row[0], source_id=row[1], kind=row[2], content_hash=row[3], path=row[4], title=row[5],
        session_id=row[6], seq=row[7], timestamp=row[8], item_ids=json.loads(row[9]), n_triples=row[10],
        updated_at=row[11], named_by_user=bool(row[12]),
    )
