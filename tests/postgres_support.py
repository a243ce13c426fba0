"""The PostgreSQL side of the contract suites: a fresh schema per test on the server that
scripts/test.sh starts (AGENT_MEMORY_POSTGRES_URL); tests needing it skip, with the reason, without it."""

from __future__ import annotations

import os
import uuid

import pytest

# conftest.py moves the URL here, out of the product settings' reach.
POSTGRES_URL = os.environ.get("AGENT_MEMORY_TEST_POSTGRES_URL")
NEEDS_POSTGRES = [
    pytest.mark.postgres,
    pytest.mark.skipif(not POSTGRES_URL, reason="AGENT_MEMORY_POSTGRES_URL not set: no PostgreSQL to test "
                                                "(scripts/test.sh starts one)"),
]


def postgres_param(name: str = "postgres"):
    """A backend parameter that runs only where a PostgreSQL server is configured."""
    return pytest.param(name, marks=NEEDS_POSTGRES)


class FreshSchema:
    """Opens pools on one new schema (reopening sees the same tables); drops it at the end."""

    def __init__(self) -> None:
        self.schema = f"t_{uuid.uuid4().hex[:16]}"
        self.opened: list = []

    def open(self, pool_size: int = 4):
        from agent_memory.stores.postgres import PostgresDB

        db = PostgresDB(POSTGRES_URL, schema=self.schema, pool_size=pool_size)
        self.opened.append(db)
        return db

    @property
    def url(self) -> str:
        """The server's URL with this schema as search_path: for settings and other processes
        (open() first, so that the schema and its tables exist)."""
        sep = "&" if "?" in POSTGRES_URL else "?"
        return f"{POSTGRES_URL}{sep}options=-csearch_path%3D{self.schema}"

    def cleanup(self) -> None:
        if self.opened:
            self.opened[-1].drop_schema()
        for db in self.opened:
            db.close()


class BackendOpener:
    """Opens one store per call on a contract suite's backend ("sqlite" under ``tmp_path``, or
    "postgres" on a fresh schema) and closes every one, and the schema, at ``cleanup``."""

    def __init__(self, backend: str, tmp_path) -> None:
        self.backend = backend
        self.tmp_path = tmp_path
        self.schema = FreshSchema() if backend == "postgres" else None
        self.opened: list = []

    def open_sqlite(self, tmp_path):
        raise NotImplementedError

    def open_postgres(self, db):
        raise NotImplementedError

    def __call__(self):
        store = self.open_sqlite(self.tmp_path) if self.backend == "sqlite" else self.open_postgres(self.schema.open())
        self.opened.append(store)
        return store

    def cleanup(self) -> None:
        for store in self.opened:
            store.close()
        if self.schema:
            self.schema.cleanup()
