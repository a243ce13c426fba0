"""One PostgreSQL connection pool per process, and the migrations that shape its tables.

The catalog, the session store and the job queue share this pool (``services.py`` builds one).
Migrations are the SQL files in ``stores/migrations/``, applied in name order, each once, under
an advisory lock: replicas starting together do not race, and re-applying is a no-op.

``schema=`` puts every table in a schema of its own (created if missing): the contract tests
give each test a fresh one on the shared test server.
"""

from __future__ import annotations

import re
import threading
from contextlib import contextmanager
from pathlib import Path
from time import monotonic
from typing import Iterator

from agent_memory.core.errors import BackupError, ConfigError, StoreError, StoreUnavailableError
from agent_memory.core.extras import require_extra

MIGRATIONS = Path(__file__).with_name("migrations")
_MIGRATION_LOCK = 0x61676D6D  # "agmm": one advisory lock key for schema changes
_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
# A request that got no pooled connection within this many seconds tries one new connection itself: when the
# database is down that fails and the request is answered at once; only a busy pool makes it wait its timeout.
_PROBE_AFTER_S = 1.0
# connect_timeout of that try: a server that does not answer (a dropped host, a hung server) counts as down.
_PROBE_TIMEOUT_S = 2
# One try serves every request waiting at the same moment: a busy pool does not get a new connection per request.
_PROBE_FRESH_S = 1.0


def redact(url: str) -> str:
    """host:port/db of a URL, for messages: the password never appears in an error."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        parts = conninfo_to_dict(url)
    except Exception:  # noqa: BLE001 - an unparsable URL is reported as such
        return "<unparsable PostgreSQL URL>"
    return f"{parts.get('host', 'localhost')}:{parts.get('port', 5432)}/{parts.get('dbname', '')}"


def backup_refused(what: str, where: str) -> BackupError:
    """``snapshot_to`` of a store in PostgreSQL: its server's own tool copies it, with the other tables."""
    return BackupError(f"the {what} is in PostgreSQL ({where}): back the database up with pg_dump "
                       "(or the server's own backups); `agent-memory backup` copies an embedded data dir")


class PostgresDB:
    """A psycopg 3 pool (autocommit connections) with the repository's migrations applied."""

    def __init__(self, url: str, *, schema: str | None = None, pool_size: int = 8, timeout: float = 10.0) -> None:
        require_extra("psycopg_pool", "servers", "PostgreSQL (AGENT_MEMORY_POSTGRES_URL)")
        from psycopg.conninfo import conninfo_to_dict
        from psycopg_pool import ConnectionPool

        if schema is not None and not _SCHEMA_NAME.match(schema):
            raise ConfigError(f"PostgreSQL schema name {schema!r} must be lower-case letters, digits and '_'")
        self.where = redact(url)
        self.schema = schema
        self._timeout = timeout
        self._pool_size = pool_size
        self._url = url
        self._probe_lock = threading.Lock()
        self._probe_failure: str | None = None
        self._probed_at = float("-inf")
        kwargs: dict = {"autocommit": True}
        if schema:
            kwargs["options"] = f"-c search_path={schema}"
        if "connect_timeout" not in conninfo_to_dict(url):
            # The pool's connection attempts, bounded as a request's wait is: without a bound, an attempt on a
            # server that does not answer hung for psycopg's default (over two minutes), and the pool, its
            # workers stuck, came back that much later than the database.
            kwargs["connect_timeout"] = max(round(timeout), _PROBE_TIMEOUT_S)
        # reconnect_timeout: how long the pool retries one connection, with a doubling delay, before it gives
        # up (the next request starts a fresh try). The library's 300 s let that delay grow to minutes: a
        # database back after a 30 s outage stayed unused for 30 s more. The pool's own timeout keeps the
        # delay under a few seconds and still gives a database starting beside us that long to come up.
        # check: a pooled connection is tested before it is handed out. After PostgreSQL restarts, each kept
        # connection is dead; without the check every one of them failed a request (503) before the pool
        # noticed, and answers took about 20 s to come back.
        self._pool = ConnectionPool(url, min_size=1, max_size=pool_size, kwargs=kwargs, open=False,
                                    timeout=timeout, name="agent-memory", reconnect_timeout=timeout,
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
            conn = self._checkout()
        except psycopg.OperationalError as exc:  # the pool closed, or too many requests waiting
            raise StoreUnavailableError(f"PostgreSQL at {self.where}: {exc}") from exc
        try:
            with conn:  # as the pool's own connection(): commit or roll back, and keep the connection open
                yield conn
        except psycopg.OperationalError as exc:
            raise StoreUnavailableError(f"PostgreSQL at {self.where}: {exc}") from exc
        except psycopg.Error as exc:
            raise StoreError(f"PostgreSQL at {self.where}: {exc}") from exc
        finally:
            self._pool.putconn(conn)

    def _checkout(self):
        """A connection from the pool, or StoreUnavailableError saying whether the database is unreachable or
        the pool busy. To the pool both look alike (no connection to hand out), so after a short wait one new
        connection is tried: when it fails the request is answered at once; when it works only the pool is
        short, and the request waits out the pool's timeout."""
        from psycopg_pool import PoolTimeout

        deadline = monotonic() + self._timeout
        try:
            return self._pool.getconn(timeout=min(_PROBE_AFTER_S, self._timeout))
        except PoolTimeout:
            pass
        self._raise_if_unreachable()
        left = deadline - monotonic()
        try:
            if left > 0:
                return self._pool.getconn(timeout=left)
        except PoolTimeout:
            pass
        raise StoreUnavailableError(
            f"PostgreSQL at {self.where} answers, but all {self._pool_size} pooled connections stayed busy for "
            f"{self._timeout:g} s (AGENT_MEMORY_POSTGRES_POOL_SIZE sets how many there are)")

    def _raise_if_unreachable(self) -> None:
        """StoreUnavailableError naming the database unreachable when a new connection to it fails."""
        import psycopg

        with self._probe_lock:
            if monotonic() - self._probed_at > _PROBE_FRESH_S:
                self._probe_failure = None
                try:
                    psycopg.connect(self._url, connect_timeout=_PROBE_TIMEOUT_S).close()
                except psycopg.Error as exc:
                    self._probe_failure = " ".join(str(exc).split()) or type(exc).__name__
                self._probed_at = monotonic()
            failure = self._probe_failure
        if failure is not None:
            raise StoreUnavailableError(f"PostgreSQL at {self.where} is unreachable: {failure}")

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
