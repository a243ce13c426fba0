"""The source catalog on PostgreSQL: the same contract as the SQLite catalog, shared by every
API replica and worker (``AGENT_MEMORY_POSTGRES_URL``). Tables: ``migrations/001_catalog.sql`` (and 004, 007)."""

from __future__ import annotations

import time
from pathlib import Path

from psycopg.types.json import Jsonb

from agent_memory.stores.catalog import SourceEntry, title_key
from agent_memory.stores.postgres import PostgresDB, backup_refused

_COLUMNS = ("tenant, source_id, kind, content_hash, path, title, session_id, seq, \"timestamp\", item_ids,"
            " n_triples, updated_at")
# Each entry with whether the user named it (a table of its own: migrations/007_catalog_named_files.sql).
_SELECT = (f"SELECT {_COLUMNS}, EXISTS (SELECT 1 FROM catalog_named_files n WHERE n.tenant = s.tenant"
           " AND n.source_id = s.source_id) FROM catalog_sources s")


# The tables holding a source's rows: its entry first.
_SOURCE_TABLES = ("catalog_sources", "catalog_titles", "catalog_owners", "catalog_named_files")


class PostgresCatalog:
    def __init__(self, db: PostgresDB) -> None:
        self.db = db

    def get(self, tenant: str, source_id: str) -> SourceEntry | None:
        rows = self._rows(f"{_SELECT} WHERE tenant=%s AND source_id=%s",
                          (tenant, source_id))
        return _entry(rows[0]) if rows else None

    def get_many(self, tenant: str, source_ids: list[str]) -> dict[str, SourceEntry]:
        if not source_ids:
            return {}
        rows = self._rows(f"{_SELECT} WHERE tenant=%s AND source_id = ANY(%s)",
                          (tenant, list(source_ids)))
        return {r[1]: _entry(r) for r in rows}

    def put_many(self, entries: list[SourceEntry]) -> None:
        if not entries:
            return
        now = time.time()
        with self.db.connection() as conn, conn.transaction(), conn.cursor() as cur:
            cur.executemany(
                f"INSERT INTO catalog_sources ({_COLUMNS}) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)"
                " ON CONFLICT (tenant, source_id) DO UPDATE SET kind=excluded.kind,"
                " content_hash=excluded.content_hash, path=excluded.path, title=excluded.title,"
                " session_id=excluded.session_id, seq=excluded.seq, \"timestamp\"=excluded.\"timestamp\","
                " item_ids=excluded.item_ids, n_triples=excluded.n_triples, updated_at=excluded.updated_at",
                [(e.tenant, e.source_id, e.kind, e.content_hash, e.path, e.title, e.session_id, e.seq,
                  e.timestamp, Jsonb(list(e.item_ids)), e.n_triples, now) for e in entries],
            )
            walked = [(e.tenant, e.source_id) for e in entries if not e.named_by_user]
            if walked:
                cur.executemany("DELETE FROM catalog_named_files WHERE tenant=%s AND source_id=%s", walked)
            named = [(e.tenant, e.source_id) for e in entries if e.named_by_user]
            if named:
                cur.executemany("INSERT INTO catalog_named_files VALUES (%s,%s) ON CONFLICT DO NOTHING", named)
            cur.executemany("DELETE FROM catalog_titles WHERE tenant=%s AND source_id=%s",
                            [(e.tenant, e.source_id) for e in entries])
            titles = [(e.tenant, k, e.source_id) for e in entries if (k := title_key(e.title))]
            if titles:
                cur.executemany("INSERT INTO catalog_titles VALUES (%s,%s,%s) ON CONFLICT DO NOTHING", titles)

    def delete(self, tenant: str, source_id: str) -> bool:
        return self.delete_many(tenant, [source_id]) > 0

    def delete_many(self, tenant: str, source_ids: list[str]) -> int:
        """Every row of ``source_ids`` in one transaction (see ``SQLiteCatalog.delete_many``)."""
        ids = list(dict.fromkeys(source_ids))
        if not ids:
            return 0
        with self.db.connection() as conn, conn.transaction():
            removed = conn.execute("DELETE FROM catalog_sources WHERE tenant=%s AND source_id = ANY(%s)",
                                   (tenant, ids)).rowcount
            for table in _SOURCE_TABLES[1:]:
                conn.execute(f"DELETE FROM {table} WHERE tenant=%s AND source_id = ANY(%s)", (tenant, ids))
            return removed

    def delete_tenant(self, tenant: str) -> int:
        """Everything the catalog holds for ``tenant`` (see ``SQLiteCatalog.delete_tenant``)."""
        with self.db.connection() as conn, conn.transaction():
            removed = conn.execute("DELETE FROM catalog_sources WHERE tenant=%s", (tenant,)).rowcount
            for table in _SOURCE_TABLES[1:]:
                conn.execute(f"DELETE FROM {table} WHERE tenant=%s", (tenant,))
            return removed

    def source_ids(self, tenant: str, prefix: str = "") -> list[str]:
        """The IDs starting with ``prefix`` with an entry or an owner (see ``SQLiteCatalog.source_ids``)."""
        # Sorted here: code point order, as SQLite's (a UNION orders by its columns only, not by a collation).
        return sorted(r[0] for r in self._rows(
            "SELECT source_id FROM catalog_sources WHERE tenant=%s AND left(source_id, %s::int)=%s"
            " UNION SELECT source_id FROM catalog_owners WHERE tenant=%s AND left(source_id, %s::int)=%s",
            (tenant, len(prefix), prefix, tenant, len(prefix), prefix)))

    def owners(self, tenant: str, source_ids: list[str]) -> dict[str, str]:
        """{source_id: owner} for those of ``source_ids`` that have an owner (see ``SQLiteCatalog.owners``)."""
        if not source_ids:
            return {}
        return dict(self._rows("SELECT source_id, owner FROM catalog_owners WHERE tenant=%s AND source_id = ANY(%s)",
                               (tenant, list(source_ids))))

    def claim(self, tenant: str, owner: str, source_ids: list[str]) -> None:
        """Record ``owner`` as the owner of ``source_ids`` (the caller checked they were free)."""
        if not source_ids:
            return
        with self.db.connection() as conn, conn.transaction(), conn.cursor() as cur:
            cur.executemany("INSERT INTO catalog_owners VALUES (%s,%s,%s)"
                            " ON CONFLICT (tenant, source_id) DO UPDATE SET owner = excluded.owner",
                            [(tenant, sid, owner) for sid in source_ids])

    def owned_by(self, tenant: str, owner: str) -> list[str]:
        """The source IDs ``owner`` claimed (see ``SQLiteCatalog.owned_by``)."""
        return [r[0] for r in self._rows("SELECT source_id FROM catalog_owners WHERE tenant=%s AND owner=%s"
                                         " ORDER BY source_id", (tenant, owner))]

    def under_path(self, tenant: str, kind: str, prefix: str) -> list[SourceEntry]:
        """Entries of ``kind`` whose path starts with ``prefix`` (see ``SQLiteCatalog.under_path``)."""
        rows = self._rows(f"{_SELECT} WHERE tenant=%s AND kind=%s AND left(path, %s::int)=%s"
                          " ORDER BY source_id COLLATE \"C\"", (tenant, kind, len(prefix), prefix))
        return [_entry(r) for r in rows]

    def titled(self, tenant: str, names: list[str]) -> dict[str, list[str]]:
        """Sources whose title names one of ``names`` (see ``SQLiteCatalog.titled``)."""
        keys: dict[str, list[str]] = {}
        for name in names:
            key = title_key(name)
            if key:
                keys.setdefault(key, []).append(name)
        if not keys:
            return {}
        out: dict[str, list[str]] = {}
        for key, source_id in self._rows(
            "SELECT title_key, source_id FROM catalog_titles WHERE tenant=%s AND title_key = ANY(%s)"
            " ORDER BY title_key COLLATE \"C\", source_id COLLATE \"C\"", (tenant, list(keys))
        ):
            for name in keys[key]:
                out.setdefault(name, []).append(source_id)
        return out

    def session_neighbours(self, tenant: str, session_id: str, seq: int, before: int, after: int) -> list[SourceEntry]:
        rows = self._rows(
            f"{_SELECT} WHERE tenant=%s AND session_id=%s AND seq BETWEEN %s AND %s"
            " ORDER BY seq", (tenant, session_id, seq - before, seq + after))
        return [_entry(r) for r in rows]

    def recent_turns(self, tenant: str, session_id: str, limit: int) -> list[SourceEntry]:
        rows = self._rows(
            f"{_SELECT} WHERE tenant=%s AND session_id=%s"
            " ORDER BY seq DESC NULLS LAST LIMIT %s", (tenant, session_id, max(0, limit)))
        return [_entry(r) for r in reversed(rows)]

    def count(self, tenant: str | None = None) -> int:
        if tenant is None:
            return self._rows("SELECT count(*) FROM catalog_sources", ())[0][0]
        return self._rows("SELECT count(*) FROM catalog_sources WHERE tenant=%s", (tenant,))[0][0]

    def tenants(self) -> list[str]:
        return [r[0] for r in self._rows("SELECT DISTINCT tenant FROM catalog_sources", ())]

    def entries(self, tenant: str) -> list[SourceEntry]:
        """Every entry of the tenant, by source ID (see ``SQLiteCatalog.entries``)."""
        return [_entry(r) for r in self._rows(f"{_SELECT} WHERE tenant=%s ORDER BY source_id COLLATE \"C\"",
                                              (tenant,))]

    def snapshot_to(self, path: Path) -> None:
        raise backup_refused("catalog", self.db.where)

    def close(self) -> None:
        """The pool belongs to the services, which close it."""

    def _rows(self, sql: str, params: tuple) -> list[tuple]:
        with self.db.connection() as conn:
            return conn.execute(sql, params).fetchall()


def _entry(row) -> SourceEntry:
    return SourceEntry(
        tenant=row[0], source_id=row[1], kind=row[2], content_hash=row[3], path=row[4], title=row[5],
        session_id=row[6], seq=row[7], timestamp=row[8], item_ids=list(row[9]), n_triples=row[10],
        updated_at=row[11], named_by_user=bool(row[12]),
    )
