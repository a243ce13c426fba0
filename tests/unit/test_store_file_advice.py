"""A store file's fault says what to do: a damaged catalog or vector shard is restored from a backup or
rebuilt by `agent-memory check`, one that cannot be written has its permissions checked, a full disk freed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agent_memory.core.errors import StoreError
from agent_memory.stores.catalog import SourceEntry, SQLiteCatalog, catalog_advice
from agent_memory.stores.qdrant_edge_store import open_advice


def test_a_read_only_catalog_names_the_file_and_its_permissions(tmp_path):
    catalog = SQLiteCatalog(tmp_path / "catalog.sqlite")
    catalog.close()
    catalog._conn = sqlite3.connect(f"file:{tmp_path / 'catalog.sqlite'}?mode=ro", uri=True, check_same_thread=False)
    with pytest.raises(StoreError) as caught:
        catalog.put_many([SourceEntry("t", "a", "document", "h")])
    message = str(caught.value)
    assert "catalog catalog.sqlite: put_many failed" in message and "readonly" in message
    assert "check the permissions of catalog.sqlite and of its folder" in message
    catalog._conn.close()


def test_a_damaged_catalog_says_restore_or_adopt_and_a_full_disk_says_free_space():
    damaged = catalog_advice(sqlite3.DatabaseError("database disk image is malformed"), "catalog.sqlite")
    assert "restore the data dir from a backup" in damaged and "check --repair --adopt" in damaged
    assert "not a database" not in damaged
    assert "restore" in catalog_advice(sqlite3.DatabaseError("file is not a database"), "catalog.sqlite")
    assert "free disk space" in catalog_advice(sqlite3.OperationalError("database or disk is full"), "catalog.sqlite")
    assert catalog_advice(sqlite3.OperationalError("database is locked"), "catalog.sqlite") == ""


def test_a_shard_that_does_not_open_says_what_to_do():
    where = Path("data/qdrant-edge/memory_x")
    damaged = open_advice(Exception("failed to repair segment: Gridstore IO error"), where)
    assert "Restore the data dir from a backup" in damaged and f"move {where} aside" in damaged
    assert "check --repair" in damaged
    assert "permissions of" in open_advice(Exception("IO Error: Permission denied (os error 13)"), where)
    assert "free disk space" in open_advice(Exception("No space left on device"), where)
