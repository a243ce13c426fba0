"""The PostgreSQL migrations: applied once each, in order, also when replicas start together."""

from __future__ import annotations

import threading

import pytest
from postgres_support import NEEDS_POSTGRES, FreshSchema

from agent_memory.stores.postgres import MIGRATIONS

pytestmark = NEEDS_POSTGRES


@pytest.fixture
def schema():
    fresh = FreshSchema()
    yield fresh
    fresh.cleanup()


def applied(db) -> list[str]:
    with db.connection() as conn:
        return [r[0] for r in conn.execute("SELECT name FROM schema_migrations ORDER BY name")]


def test_every_migration_is_applied_once_and_reapplying_is_a_no_op(schema):
    db = schema.open()
    files = sorted(p.name for p in MIGRATIONS.glob("*.sql"))
    assert files and files[0].startswith("001_")
    assert applied(db) == files
    assert db.migrate() == []
    assert schema.open().migrate() == []  # a second process finds everything in place
    with db.connection() as conn:
        tables = {r[0] for r in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (schema.schema,))}
    assert {"catalog_sources", "catalog_titles", "catalog_owners", "catalog_named_files", "session_messages", "jobs"} <= tables


def test_replicas_starting_together_migrate_without_racing(schema):
    errors: list[BaseException] = []

    def start() -> None:
        try:
            schema.open(pool_size=1)
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert applied(schema.opened[0]) == sorted(p.name for p in MIGRATIONS.glob("*.sql"))
