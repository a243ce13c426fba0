"""One contract for every catalog backend: SQLite (embedded default) and PostgreSQL (shared).

PostgreSQL runs against the server scripts/test.sh starts, each test in a fresh schema.
"""

from __future__ import annotations

import pytest
from postgres_support import BackendOpener, postgres_param

from agent_memory.core.errors import BackupError, StoreError
from agent_memory.stores.catalog import Catalog, SourceCatalog, SourceEntry, SQLiteCatalog


class Opener(BackendOpener):
    def open_sqlite(self, tmp_path) -> SourceCatalog:
        return SQLiteCatalog(tmp_path / "catalog.sqlite")

    def open_postgres(self, db) -> SourceCatalog:
        from agent_memory.stores.postgres_catalog import PostgresCatalog

        return PostgresCatalog(db)


@pytest.fixture(params=["sqlite", postgres_param()])
def opener(request, tmp_path):
    op = Opener(request.param, tmp_path)
    yield op
    op.cleanup()


@pytest.fixture
def catalog(opener) -> SourceCatalog:
    return opener()


def entry(source_id: str, tenant: str = "t", **kw) -> SourceEntry:
    return SourceEntry(tenant=tenant, source_id=source_id, kind=kw.pop("kind", "document"),
                       content_hash=kw.pop("content_hash", f"h-{source_id}"), **kw)


def test_satisfies_protocol_and_old_name_still_builds_sqlite(catalog, tmp_path):
    assert isinstance(catalog, SourceCatalog)
    assert Catalog is SQLiteCatalog


def test_put_get_round_trips_every_field(catalog):
    e = entry("notes/a.md", path="/data/notes/a.md", title="Über uns", session_id="s1", seq=4,
              timestamp="2023-05-08T13:56:00", item_ids=["id-1", "id-2"], n_triples=7, kind="turn",
              named_by_user=True)
    catalog.put_many([e])
    got = catalog.get("t", "notes/a.md")
    assert got is not None and got.updated_at > 0
    assert {**got.__dict__, "updated_at": 0} == {**e.__dict__, "updated_at": 0}
    assert catalog.get("t", "missing") is None
    assert catalog.get("other", "notes/a.md") is None


def test_put_replaces_and_get_many_spans_batches(catalog):
    catalog.put_many([entry(f"s{i}") for i in range(1200)])
    catalog.put_many([entry("s7", content_hash="new", item_ids=["x"])])
    got = catalog.get_many("t", [f"s{i}" for i in range(0, 1300, 3)] + ["nope"])
    assert set(got) == {f"s{i}" for i in range(0, 1200, 3)}
    assert catalog.get("t", "s7").content_hash == "new" and catalog.get("t", "s7").item_ids == ["x"]
    assert catalog.get_many("t", []) == {}
    assert catalog.count("t") == 1200


def test_tenants_are_isolated(catalog):
    catalog.put_many([entry("same", tenant="a", title="Page"), entry("same", tenant="b", title="Page")])
    assert catalog.delete("a", "same")
    assert catalog.get("a", "same") is None and catalog.get("b", "same") is not None
    assert catalog.titled("a", ["page"]) == {} and catalog.titled("b", ["page"]) == {"page": ["same"]}
    assert catalog.count() == 1 and catalog.count("a") == 0
    assert catalog.tenants() == ["b"]
    assert not catalog.delete("a", "same")


def test_titled_finds_pages_and_follows_retitles(catalog):
    catalog.put_many([entry("p1", title="Winner (band)"), entry("p2", title="2014 S/S"), entry("p3", title=""),
                      entry("p4", title="The Winner")])
    assert catalog.titled("t", ["WINNER", "nobody", "2014 S/S"]) == {"WINNER": ["p1", "p4"], "2014 S/S": ["p2"]}
    catalog.put_many([entry("p1", title="Loser (band)")])
    assert catalog.titled("t", ["winner", "loser"]) == {"winner": ["p4"], "loser": ["p1"]}
    assert catalog.delete("t", "p1")
    assert catalog.titled("t", ["loser", ""]) == {}


def test_session_neighbours_and_recent_turns(catalog):
    turns = [entry(f"chat/t{i}", kind="turn", session_id="chat", seq=i) for i in range(10)]
    catalog.put_many(turns + [entry("other/t0", kind="turn", session_id="other", seq=0), entry("doc")])
    assert [e.seq for e in catalog.session_neighbours("t", "chat", 5, 2, 1)] == [3, 4, 5, 6]
    assert [e.seq for e in catalog.session_neighbours("t", "chat", 0, 2, 1)] == [0, 1]
    assert [e.source_id for e in catalog.recent_turns("t", "chat", 3)] == ["chat/t7", "chat/t8", "chat/t9"]
    assert catalog.recent_turns("t", "missing", 3) == []
    assert catalog.session_neighbours("x", "chat", 5, 2, 2) == []


def test_persists_across_reopen(opener):
    first = opener()
    first.put_many([entry("kept", title="Kept Page", item_ids=["i"])])
    first.close()
    again = opener()
    assert again.get("t", "kept").item_ids == ["i"]
    assert again.titled("t", ["kept page"]) == {"kept page": ["kept"]}


@pytest.mark.parametrize("backend", [postgres_param()])
def test_services_build_the_postgres_catalog_from_settings(backend, tmp_path):
    from postgres_support import POSTGRES_URL

    from agent_memory.core.config import load_settings
    from agent_memory.services import build_services
    from agent_memory.stores.postgres_catalog import PostgresCatalog

    with build_services(load_settings(data_dir=tmp_path, postgres_url=POSTGRES_URL)) as services:
        assert isinstance(services.catalog, PostgresCatalog)
        assert services.catalog.count("no-such-tenant-" + tmp_path.name) == 0
    assert not (tmp_path / "catalog.sqlite").exists()


def test_a_bad_postgres_url_is_unavailable_without_its_password(tmp_path):
    from agent_memory.core.errors import StoreUnavailableError
    from agent_memory.stores.postgres import PostgresDB

    with pytest.raises(StoreUnavailableError, match="127.0.0.1:1/x") as err:
        PostgresDB("postgresql://u:secret-pw@127.0.0.1:1/x", timeout=1)
    assert "secret-pw" not in str(err.value)


def test_owners_are_claimed_per_tenant_and_forgotten_with_the_source(catalog):
    catalog.put_many([entry("a"), entry("b"), entry("a", tenant="u")])
    catalog.claim("t", "file:/x.jsonl", ["a", "b"])
    catalog.claim("u", "api", ["a"])
    assert catalog.owners("t", ["a", "b", "c"]) == {"a": "file:/x.jsonl", "b": "file:/x.jsonl"}
    assert catalog.owners("u", ["a", "b"]) == {"a": "api"} and catalog.owners("t", []) == {}
    catalog.claim("t", "file:/y.jsonl", ["b"])  # the caller checked it was free: the new owner wins
    assert catalog.owners("t", ["b"]) == {"b": "file:/y.jsonl"}
    assert catalog.delete("t", "a")
    assert catalog.owners("t", ["a", "b"]) == {"b": "file:/y.jsonl"} and catalog.owners("u", ["a"]) == {"a": "api"}


def test_source_ids_by_prefix_and_deleting_many_or_a_whole_tenant(catalog):
    catalog.put_many([entry("notes/a", title="Alpha"), entry("notes/b"), entry("notes%/c"), entry("other/d"),
                      entry("file:notes/b", kind="file"), entry("notes/a", tenant="u")])
    catalog.claim("t", "file:notes/e.jsonl", ["notes/e#0"])  # a claim whose entry was never written
    assert catalog.source_ids("t", "notes/") == ["notes/a", "notes/b", "notes/e#0"]
    assert catalog.source_ids("t", "notes%") == ["notes%/c"]  # no wildcard: compared as text
    assert catalog.source_ids("t") == ["file:notes/b", "notes%/c", "notes/a", "notes/b", "notes/e#0", "other/d"]
    assert catalog.delete_many("t", ["notes/a", "notes/e#0", "missing", "notes/a"]) == 1
    assert catalog.source_ids("t", "notes/") == ["notes/b"] and catalog.titled("t", ["alpha"]) == {}
    assert catalog.owners("t", ["notes/e#0"]) == {} and catalog.delete_many("t", []) == 0
    assert catalog.delete_tenant("t") == 4
    assert catalog.source_ids("t") == [] and catalog.count("t") == 0
    assert catalog.source_ids("u") == ["notes/a"] and catalog.get("u", "notes/a") is not None


def test_under_path_finds_entries_of_a_kind_by_path_prefix(catalog):
    catalog.put_many([entry("file:n/a.md", kind="file", path="/r/n/a.md"),
                      entry("file:n/s/b.md", kind="file", path="/r/n/s/b.md"),
                      entry("file:n2/c.md", kind="file", path="/r/n2/c.md"),  # a sibling sharing the letters
                      entry("file:n/%_.md", kind="file", path="/r/n/%_.md"),  # LIKE's wildcards, literal here
                      entry("n/a.md", kind="document", path="/r/n/a.md"),
                      entry("file:n/a.md", tenant="u", kind="file", path="/r/n/a.md")])
    assert [e.source_id for e in catalog.under_path("t", "file", "/r/n/")] == \
        ["file:n/%_.md", "file:n/a.md", "file:n/s/b.md"]
    assert [e.source_id for e in catalog.under_path("t", "file", "/r/n/%")] == ["file:n/%_.md"]
    assert catalog.under_path("t", "file", "/elsewhere/") == []


def test_a_catalog_from_before_named_files_opens_and_an_older_version_still_writes_it(tmp_path):
    """An SQLite catalog written before files named by the user were recorded opens (its files: walked) and
    records them from then on, in a table of their own: a version from before, which inserts twelve values
    into ``sources`` by position, still writes the catalog this one opened (PostgreSQL: migration 007)."""
    import sqlite3

    path = tmp_path / "catalog.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE sources (tenant TEXT NOT NULL, source_id TEXT NOT NULL, kind TEXT NOT NULL,"
                 " content_hash TEXT NOT NULL, path TEXT NOT NULL DEFAULT '', title TEXT NOT NULL DEFAULT '',"
                 " session_id TEXT, seq INTEGER, timestamp TEXT NOT NULL DEFAULT '',"
                 " item_ids TEXT NOT NULL DEFAULT '[]', n_triples INTEGER NOT NULL DEFAULT 0,"
                 " updated_at REAL NOT NULL, PRIMARY KEY (tenant, source_id))")
    conn.execute("INSERT INTO sources VALUES ('t','file:a.md','file','h','/r/a.md','','',NULL,'','[\"x\"]',0,1.0)")
    conn.commit()
    conn.close()
    catalog = SQLiteCatalog(path)
    old = catalog.get("t", "file:a.md")
    assert old is not None and old.named_by_user is False and old.item_ids == ["x"] and old.path == "/r/a.md"
    catalog.put_many([entry("file:b.md", kind="file", path="/r/b.md", named_by_user=True)])
    assert [(e.source_id, e.named_by_user) for e in catalog.under_path("t", "file", "/r/")] == \
        [("file:a.md", False), ("file:b.md", True)]
    catalog.close()
    older = sqlite3.connect(path)  # what the version before writes, by position
    older.execute("INSERT OR REPLACE INTO sources VALUES ('t','file:c.md','file','h','/r/c.md','','',NULL,'','[]',0,2.0)")
    older.commit()
    older.close()
    again = SQLiteCatalog(path)
    assert again.get("t", "file:b.md").named_by_user is True and again.get("t", "file:c.md").named_by_user is False


def test_named_by_user_is_set_cleared_and_forgotten_with_its_entry(catalog):
    catalog.put_many([entry("file:n.md", kind="file", path="/r/n.md", named_by_user=True)])
    assert catalog.get("t", "file:n.md").named_by_user is True
    catalog.put_many([entry("file:n.md", kind="file", path="/r/n.md")])
    assert catalog.get("t", "file:n.md").named_by_user is False
    catalog.put_many([entry("file:n.md", kind="file", path="/r/n.md", named_by_user=True)])
    assert catalog.delete("t", "file:n.md") and catalog.get("t", "file:n.md") is None
    catalog.put_many([entry("file:n.md", kind="file", path="/r/n.md")])
    assert catalog.get("t", "file:n.md").named_by_user is False  # the old flag went with the entry
    assert catalog.get_many("t", ["file:n.md"])["file:n.md"].named_by_user is False


def test_entries_are_every_entry_of_one_tenant_by_source_id(catalog):
    """What `agent-memory check` compares with the vectors and the graph: a tenant's entries, manifests too."""
    catalog.put_many([entry("b", item_ids=["i2"]), entry("a", item_ids=["i1"], kind="turn", session_id="s", seq=0),
                      entry("file:a.md", kind="file", item_ids=["a"]), entry("a", tenant="other")])
    got = catalog.entries("t")
    assert [e.source_id for e in got] == ["a", "b", "file:a.md"]
    assert got[0].item_ids == ["i1"] and got[0].session_id == "s" and got[2].kind == "file"
    assert [e.source_id for e in catalog.entries("other")] == ["a"]
    assert catalog.entries("nobody") == []


def test_a_snapshot_opens_with_every_entry_or_names_the_servers_backup_tool(opener, tmp_path):
    catalog = opener()
    catalog.put_many([entry("a", item_ids=["i1"]), entry("b", tenant="u", title="Über uns")])
    target = tmp_path / "backup" / "catalog.sqlite"
    if opener.backend == "postgres":
        with pytest.raises(BackupError, match="pg_dump"):
            catalog.snapshot_to(target)
        assert not target.exists()
        return
    catalog.put_many([entry("c")])  # still in the live file's write-ahead log: a copy of the file alone lacked it
    catalog.snapshot_to(target)
    catalog.put_many([entry("after")])  # the copy is the catalog as it was
    assert not target.with_name("catalog.sqlite-wal").exists()
    copy = SQLiteCatalog(target)
    try:
        assert copy.count() == 3 and copy.get("t", "after") is None
        assert copy.get("t", "a").item_ids == ["i1"] and copy.get("u", "b").title == "Über uns"
    finally:
        copy.close()
    with pytest.raises(StoreError, match="exists already"):
        catalog.snapshot_to(target)
