"""The VectorStore contract on what a store keeps: points written, read back, updated and deleted, kept
across a reopen, and how each backend is opened (Edge's files and lock, the server driver, the factory).

Every backend runs these tests (tests/vector_store_support.py holds the parametrized fixtures).
"""

from __future__ import annotations

import uuid

import numpy as np
import pytest

from agent_memory.core.config import Settings
from agent_memory.core.embedding import collection_name
from agent_memory.core.errors import BackupError, DimensionMismatchError, StoreError, StoreUnavailableError
from agent_memory.core.records import MemoryItem, SearchFilter
from agent_memory.stores.base import VectorStore
from agent_memory.stores.qdrant_edge_store import EdgeVectorStore
from agent_memory.stores.qdrant_server_store import QdrantServerVectorStore
from agent_memory.stores.vector_factory import open_vector_store
from tests import vector_store_support
from tests.vector_store_support import DIM, ENC, make_item, onehot, put

# The contract's backend fixtures, bound in this module so pytest finds them here: each contract file runs on
# the same parametrized backends. (Imported by name, a fixture reads to the linter as an unused import.)
opener = vector_store_support.opener
store = vector_store_support.store


def test_store_satisfies_protocol(store):
    assert isinstance(store, VectorStore)
    assert store.dimension == DIM


def test_upsert_get_round_trips_every_payload_field(store):
    item = make_item(
        "Qdrant keeps vectors and payloads", source="notes/2024.md", kind="summary", start=120,
        created_at=1717171717.125, metadata={"title": "笔记", "tags": ["a", "b"], "page": 3, "nested": {"ok": True}},
    )
    put(store, [item])
    [got] = store.get([item.id])
    assert got == item
    assert store.get([str(uuid.uuid4())]) == []


def test_an_items_keyword_terms_round_trip_and_an_item_without_them_reads_none(store):
    with_terms = make_item("Graph stores keep 实体 relations", start=0)
    with_terms.terms = "graph relat store 实体"
    empty = make_item("the and of", start=100)
    empty.terms = ""
    without = make_item("stored before items carried terms", start=200)
    put(store, [with_terms, empty, without])
    got = {i.id: i for i in store.get([with_terms.id, empty.id, without.id])}
    assert got[with_terms.id].terms == with_terms.terms
    assert got[empty.id].terms == ""
    assert got[without.id].terms is None


def test_speakers_are_the_distinct_speakers_of_a_tenants_turns(store):
    turns = [make_item(f"turn {i}", tenant="A", kind="turn", start=i, metadata={"speaker": who})
             for i, who in enumerate(["Caroline", "Melanie", "Caroline", "马超"])]
    other = make_item("elsewhere", tenant="B", kind="turn", metadata={"speaker": "Nate"})
    chunk = make_item("a chunk", tenant="A", metadata={"speaker": "Not a turn"})
    put(store, [*turns, other, chunk])
    assert store.speakers("A") == {"Caroline", "Melanie", "马超"}
    assert store.speakers("B") == {"Nate"} and store.speakers("C") == set()


def test_get_keeps_request_order(store):
    items = [make_item(f"text number {i}", start=i * 100) for i in range(5)]
    put(store, items)
    wanted = [items[3].id, items[0].id, items[4].id]
    assert [it.id for it in store.get(wanted)] == wanted


def test_reupsert_is_idempotent_and_updates_payload(store):
    items = [make_item(f"passage {i}", start=i * 10) for i in range(4)]
    put(store, items)
    assert store.count() == 4
    put(store, items)
    assert store.count() == 4
    changed = MemoryItem(**{**items[0].__dict__, "metadata": {"v": 2}})
    put(store, [changed])
    assert store.count() == 4
    assert store.get([items[0].id])[0].metadata == {"v": 2}


def test_delete_by_source_removes_only_that_source(store):
    s1 = [make_item(f"one {i}", source="s1", start=i) for i in range(3)]
    s2 = [make_item(f"two {i}", source="s2", start=i) for i in range(2)]
    put(store, s1 + s2)
    assert store.delete_by_source("A", "s1") == 3
    assert store.delete_by_source("A", "s1") == 0
    assert store.ids_for_source("A", "s1") == []
    assert sorted(store.ids_for_source("A", "s2")) == sorted(it.id for it in s2)
    assert store.count() == 2


def test_delete_ids(store):
    items = [make_item(f"p {i}", start=i) for i in range(3)]
    put(store, items)
    store.delete_ids([items[1].id, str(uuid.uuid4()), "not-a-uuid"])
    assert store.existing_ids([it.id for it in items]) == {items[0].id, items[2].id}


def test_existing_ids_and_ids_for_source(store):
    items = [make_item(f"p {i}", source="src", start=i) for i in range(3)]
    put(store, items)
    absent = str(uuid.uuid4())
    assert store.existing_ids([items[0].id, absent, "garbage"]) == {items[0].id}
    assert store.existing_ids([]) == set()
    assert sorted(store.ids_for_source("A", "src")) == sorted(it.id for it in items)
    assert store.ids_for_source("B", "src") == []


def test_scroll_pages_through_everything(store):
    items = [make_item(f"row {i}", start=i, kind="turn" if i % 3 == 0 else "chunk") for i in range(700)]
    dense = np.tile(onehot(1), (len(items), 1))
    store.upsert(items, dense, ENC.encode_documents([it.text for it in items]))
    got = list(store.scroll(SearchFilter(tenant="A")))
    assert len(got) == 700 and {it.id for it in got} == {it.id for it in items}
    turns = list(store.scroll(SearchFilter(tenant="A", kinds=["turn"])))
    assert len(turns) == len([i for i in range(700) if i % 3 == 0])
    assert all(t.kind == "turn" for t in turns)


def test_source_points_page_through_a_tenants_points_with_their_source_and_tenants_are_listed(store):
    """What `agent-memory check` reads: every point's source ID, a page at a time (more than one page here),
    filtered as scroll is; and the tenants holding any point."""
    items = [make_item(f"row {i}", source=f"s{i % 3}", start=i, kind="turn" if i % 2 else "chunk")
             for i in range(600)]
    items.append(make_item("another tenant's", tenant="B", source="s0"))
    put(store, items, np.tile(onehot(1), (len(items), 1)))
    got = list(store.source_points(SearchFilter(tenant="A")))
    assert sorted(got) == sorted((i.source_id, i.id) for i in items if i.tenant == "A")
    turns = set(store.source_points(SearchFilter(tenant="A", kinds=["turn"], source_ids=["s1"])))
    assert turns == {(i.source_id, i.id) for i in items if i.tenant == "A" and i.kind == "turn" and i.source_id == "s1"}
    assert list(store.source_points(SearchFilter(tenant="C"))) == []
    assert store.tenants() == {"A", "B"}
    store.delete_by_source("B", "s0")
    assert store.tenants() == {"A"}


def test_upsert_rejects_mismatched_batches(store):
    items = [make_item("x"), make_item("y", start=5)]
    with pytest.raises(DimensionMismatchError):
        store.upsert(items, np.ones((2, DIM + 2)), ENC.encode_documents(["x", "y"]))
    with pytest.raises(Exception, match="items=2"):
        store.upsert(items, np.ones((1, DIM)), ENC.encode_documents(["x", "y"]))
    assert store.count() == 0


def test_persists_across_reopen(opener):
    if opener.backend == "memory":
        pytest.skip("an in-memory client keeps nothing after close, by design")
    first = opener()
    items = [make_item(f"durable {i}", start=i) for i in range(5)]
    put(first, items)
    first.close()
    again = opener()
    assert again.count() == 5
    assert again.get([items[2].id])[0] == items[2]
    hits = again.search_sparse(ENC.encode_query("durable"), SearchFilter(tenant="A"), 10)
    assert len(hits) == 5


def test_dimension_mismatch_raises(opener):
    if opener.backend == "memory":
        pytest.skip("each in-memory client is a new empty store: nothing to mismatch")
    opener().close()
    with pytest.raises(DimensionMismatchError) as err:
        opener(DIM + 8)
    assert str(DIM) in str(err.value) and str(DIM + 8) in str(err.value)


def test_update_metadata_merges_keys_and_keeps_the_rest(store):
    items = [make_item(f"passage {i}", start=i * 10, metadata={"team": "ops", "importance": 0.5} if i else None)
             for i in range(3)]
    put(store, items)
    before = {i.id: i for i in store.get([i.id for i in items])}
    updated = store.update_metadata({items[0].id: {"importance": 0.6}, items[1].id: {"importance": 0.6},
                                     items[2].id: {"importance": 0.9, "cited": 2},
                                     str(uuid.uuid4()): {"importance": 1.0}, "not-a-uuid": {"importance": 1.0}})
    assert updated == 3  # IDs not stored are skipped
    after = {i.id: i for i in store.get([i.id for i in items])}
    assert after[items[0].id].metadata == {"importance": 0.6}  # an item stored without metadata gets the key
    assert after[items[1].id].metadata == {"team": "ops", "importance": 0.6}
    assert after[items[2].id].metadata == {"team": "ops", "importance": 0.9, "cited": 2}
    for key, item in after.items():  # text, provenance and vectors stay
        assert (item.text, item.source_id, item.created_at) == (before[key].text, before[key].source_id,
                                                                before[key].created_at)
    assert [h.item.id for h in store.search_dense(onehot(2), SearchFilter(tenant="A"), 1)] == [items[2].id]
    assert store.count(SearchFilter(tenant="A", metadata={"importance": 0.6})) == 2
    assert store.update_metadata({}) == 0


def test_a_snapshot_opens_as_the_store_it_copies_or_names_the_servers_backup_tool(opener, tmp_path):
    store = opener()
    items = [make_item(f"copied passage {i}", start=i) for i in range(5)]
    put(store, items)
    target = tmp_path / "backup"
    if opener.backend == "server":
        with pytest.raises(BackupError, match="snapshot"):
            store.snapshot_to(target)
        return
    dense = [(h.item.id, round(h.score, 5)) for h in store.search_dense(onehot(2), SearchFilter(tenant="A"), 10)]
    sparse = [(h.item.id, round(h.score, 5))
              for h in store.search_sparse(ENC.encode_query("copied passage"), SearchFilter(tenant="A"), 10)]
    store.snapshot_to(target)
    put(store, [make_item("written after the copy", start=99)])
    if opener.backend == "edge":  # opened while the store it copies is open
        copy = EdgeVectorStore(target, opener.collection, DIM)
    else:
        copy = QdrantServerVectorStore(opener.collection, DIM, path=target)
    with copy:
        assert copy.count() == 5 and copy.get([items[2].id]) == store.get([items[2].id])
        assert [(h.item.id, round(h.score, 5)) for h in copy.search_dense(onehot(2), SearchFilter(tenant="A"), 10)] \
            == dense
        assert [(h.item.id, round(h.score, 5)) for h in copy.search_sparse(
            ENC.encode_query("copied passage"), SearchFilter(tenant="A"), 10)] == sparse
    with pytest.raises(StoreError):  # never over a copy already there
        store.snapshot_to(target)


# -- backend-specific behaviour ------------------------------------------------------


def test_edge_path_locked_by_another_store_is_unavailable(tmp_path):
    with EdgeVectorStore(tmp_path, "c", DIM):
        with pytest.raises(StoreUnavailableError, match=str(tmp_path)):
            EdgeVectorStore(tmp_path, "c", DIM)


def test_edge_optimize_keeps_data_and_drops_deleted(tmp_path):
    with EdgeVectorStore(tmp_path, "c", DIM) as store:
        items = [make_item(f"keep {i}", source=f"s{i % 2}", start=i) for i in range(50)]
        put(store, items, np.stack([onehot(i) for i in range(50)]))
        store.delete_by_source("A", "s1")
        store.optimize()
        assert store.count() == 25
        assert {h.item.source_id for h in store.search_dense(onehot(0), SearchFilter(tenant="A"), 50)} == {"s0"}


def test_unreachable_server_maps_to_store_unavailable():
    url = "http://127.0.0.1:1"
    with pytest.raises(StoreUnavailableError, match="127.0.0.1:1"):
        QdrantServerVectorStore("c", DIM, url=url, timeout=2)


def test_factory_picks_backend_from_settings(tmp_path):
    edge = open_vector_store(Settings(data_dir=tmp_path, qdrant_url=None, _env_file=None), DIM, "m_8")
    try:
        assert isinstance(edge, EdgeVectorStore)
        assert edge.path == tmp_path / "qdrant-edge" / "m_8"
    finally:
        edge.close()
    local = open_vector_store(Settings(data_dir=tmp_path, vector_backend="local", qdrant_url=None, _env_file=None), DIM, "m_8")
    try:
        assert isinstance(local, QdrantServerVectorStore) and local.local
        assert (tmp_path / "qdrant-local").is_dir()
    finally:
        local.close()
    with pytest.raises(StoreUnavailableError, match="127.0.0.1:1"):
        open_vector_store(Settings(data_dir=tmp_path, qdrant_url="http://127.0.0.1:1", _env_file=None), DIM, "m_8")


def test_collection_name_is_safe():
    class Model:
        name, dimension = "sentence-transformers/all-MiniLM-L6-v2", 384

    assert collection_name(Model()) == "memory_sentence_transformers_all_minilm_l6_v2_384"
    with pytest.raises(Exception, match="a/b"):
        open_vector_store(Settings(_env_file=None), DIM, "a/b")


def test_edge_keeps_a_new_shards_payloads_and_sparse_index_in_memory_and_an_old_shard_as_it_was(tmp_path):
    import json

    def in_memory(path):  # (payloads, sparse index); Edge may write its on-disk default out on reopening
        config = json.loads((path / "c" / "edge_config.json").read_text(encoding="utf-8"))
        return config.get("on_disk_payload") is False, config["sparse_vectors"]["sparse"].get("on_disk") is False

    items = [make_item(f"the harbour ferry leaves at {i}", source=f"s{i}") for i in range(6)]
    with EdgeVectorStore(tmp_path / "new", "c", DIM) as store:
        put(store, items)
    assert in_memory(tmp_path / "new") == (True, True)
    with EdgeVectorStore(tmp_path / "old", "c", DIM, in_memory=False) as store:
        put(store, items)
    assert in_memory(tmp_path / "old") == (False, False)
    for path, as_created in ((tmp_path / "new", (True, True)), (tmp_path / "old", (False, False))):
        with EdgeVectorStore(path, "c", DIM) as store:  # reopened with the default: served, layout kept
            hits = store.search_sparse(ENC.encode_query("harbour ferry"), SearchFilter(tenant="A"), 10)
            assert len(hits) == 6
        assert in_memory(path) == as_created


def test_the_edge_in_memory_setting_reaches_the_store(tmp_path):
    settings = Settings(data_dir=tmp_path, edge_in_memory=False, qdrant_url=None)  # embedded, whatever the env says
    with open_vector_store(settings, DIM, "c") as store:
        assert isinstance(store, EdgeVectorStore) and store.in_memory is False
