"""One PostgreSQL connection pool per process, and the migrations that shape its tables.

The catalog, the session store and the job queue share this pool (``services.py`` builds one).
Migrations are the SQL files in ``stores/migrations/``, applied in name order, each once, under
an advisory lock: replicas starting together do not race, and re-applying is a no-op.

``schema=`` puts every table in a schema of its own (created if missing): the contract tests
give each test a fresh one on the shared test server.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from agent_memory.core.errors import ConfigError, StoreError, StoreUnavailableError
from agent_memory.core.extras import require_extra

MIGRATIONS = Path(__file__).with_name("migrations")
_MIGRATION_LOCK = 0x61676D6D  # "agmm": one advisory lock key for schema changes
_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def redact(url: str) -> str:
    """host:port/db of a URL, for messages: the password never appears in an error."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        parts = conninfo_to_dict(url)
    except Exception:  # noqa: BLE001 - an unparsable URL is reported as such
        return "<unparsable PostgreSQL URL>"
    return f"{parts.get('host', 'localhost')}:{parts.get('port', 5432)}/{parts.get('dbname', '')}"


class PostgresDB:
    """A psycopg 3 pool (autocommit connections) with the repository's migrations applied."""

    def __init__(self, url: str, *, schema: str | None = None, pool_size: int = 8, timeout: float = 10.0) -> None:
        require_extra("psycopg_pool", "servers", "PostgreSQL (AGENT_MEMORY_POSTGRES_URL)")
        from psycopg_pool import ConnectionPool

        if schema is not None and not _SCHEMA_NAME.match(schema):
            raise ConfigError(f"PostgreSQL schema name {schema!r} must be lower-case letters, digits and '_'")
        self.where = redact(url)
        self.schema = schema
        kwargs: dict = {"autocommit": True}
        if schema:
            kwargs["options"] = f"-c search_path={schema}"
        # check: a pooled connection is tested before it is handed out. After PostgreSQL restarts, each kept
        # connection is dead; without the check every one of them failed a request (503) before the pool
        # noticed, and answers took about 20 s to come back.
        self._pool = ConnectionPool(url, min_size=1, max_size=pool_size, kwargs=kwargs, open=False,
                                    timeout=timeout, name="agent-memory",
                                    check=getattr(ConnectionPool, "check_connection", None))
        try:
            self._pool.open(wait=True, timeout=timeout)
        except Exception as exc:
            self._pool.close()
            raise StoreUnavailableError(f"cannot connect to PostgreSQL at {self.where}: {exc}") from exc
        self.migrate()

    @contextmanager
    def connection(self) -> Iterator:
        """A pooled connection; psycopg errors become StoreError with where it failed."""
        import psycopg

        try:
            with self._pool.connection() as conn:
                yield conn
        except psycopg.OperationalError as exc:
            raise StoreUnavailableError(f"PostgreSQL at {self.where}: {exc}") from exc
        except psycopg.Error as exc:
            raise StoreError(f"PostgreSQL at {self.where}: {exc}") from exc

    def migrate(self) -> list[str]:
        """Apply the migrations not applied yet; returns their names."""
        applied: list[str] = []
        with self.connection() as conn, conn.transaction():
            # The lock first: even CREATE ... IF NOT EXISTS races another process doing the same.
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            if self.schema:
                conn.execute(f"CREATE SCHEMA IF NOT EXISTS {self.schema}")
            conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations"
                         " (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
            done = {r[0] for r in conn.execute("SELECT name FROM schema_migrations")}
            for path in sorted(MIGRATIONS.glob("*.sql")):
                if path.name in done:
                    continue
                conn.execute(path.read_text(encoding="utf-8"))
                conn.execute("INSERT INTO schema_migrations (name) VALUES (%s)", (path.name,))
                applied.append(path.name)
        return applied

    def drop_schema(self) -> None:
        """Tests only: remove this pool's schema and everything in it."""
        if not self.schema:
            raise ConfigError("drop_schema needs a pool opened with schema=")
        with self.connection() as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {self.schema} CASCADE")

    def close(self) -> None:
        self._pool.close()

    def __repr__(self) -> str:
        return f"PostgresDB({self.where!r}, schema={self.schema!r})"
