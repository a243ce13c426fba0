"""The VectorStore contract on a point's named vectors beside its dense one: a turn's context vector and a
long turn's sentence vectors, stored with the point, read and scored in one batch, and added on open to a
collection created before them.

Every backend runs these tests (tests/vector_store_support.py holds the parametrized fixtures).
"""

from __future__ import annotations

import os
import uuid

import numpy as np
import pytest

from agent_memory.core.errors import DimensionMismatchError, StoreError
from agent_memory.core.records import SearchFilter
from tests import vector_store_support
from tests.vector_store_support import DIM, ENC, SERVER_URL, make_item, onehot

# The contract's backend fixtures, bound in this module so pytest finds them here: each contract file runs on
# the same parametrized backends. (Imported by name, a fixture reads to the linter as an unused import.)
opener = vector_store_support.opener
store = vector_store_support.store


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
    if opener.backend == "server" and vector_store_support.server_version() < (1, 18):
        with pytest.raises(StoreError, match=r"cannot add a named vector.*1\.18"):  # not a bare "404"
            opener()
        return
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
