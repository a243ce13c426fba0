"""SpacedVectorStore's dense search over two spaces: ranked per space without payloads, merged by
calibrated score, and only the merged winners read."""

from __future__ import annotations

import numpy as np
import pytest

from agent_memory.core.records import SearchFilter
from agent_memory.core.sparse import SparseEncoder
from agent_memory.stores.qdrant_edge_store import EdgeVectorStore
from agent_memory.stores.spaced import SpacedVectorStore
from tests.vector_store_support import make_item, onehot

DIM = 8


def calibrate(space, cosines, question_lang="en", passage_lang="en"):
    # Space "b" reads cosines higher than "a" for the same closeness (as e5 does): taken down.
    return np.asarray(cosines, dtype=np.float64) - (0.05 if space == "b" else 0.0)


@pytest.fixture
def spaced(tmp_path):
    stores = {name: EdgeVectorStore(tmp_path / name, f"mem_{name}", DIM) for name in ("a", "b")}
    store = SpacedVectorStore(stores, "a", calibrate)
    sparse = SparseEncoder()
    items = [make_item(f"{space} item {i}", source=f"{space}-{i}", start=i, metadata={"space": space})
             for space in ("a", "b") for i in range(4)]
    # Item i lies at angle 0.25 i from the question, in "b" 0.125 further.
    question = onehot(0)
    dense = []
    for item in items:
        i = item.start
        angle = 0.25 * i + (0.125 if item.metadata["space"] == "b" else 0.0)
        dense.append(np.cos(angle) * question + np.sin(angle) * onehot(1))
    for space in ("a", "b"):
        chosen = [n for n, item in enumerate(items) if item.metadata["space"] == space]
        stores[space].upsert([items[n] for n in chosen], np.stack([dense[n] for n in chosen]),
                             sparse.encode_documents([items[n].text for n in chosen]))
    yield store, question
    store.close()


def test_two_spaces_merge_by_calibrated_score_and_read_only_the_winners(spaced, monkeypatch):
    store, question = spaced
    read: list[list[str]] = []
    for inner in store.stores.values():
        original = inner.get
        monkeypatch.setattr(inner, "get", lambda ids, original=original: read.append(list(ids)) or original(ids))
    hits = store.search_dense({"a": question, "b": question}, SearchFilter(tenant="A"), 3)
    # Calibrated: a0 1.0, a1 0.969, b0 0.942, b1 0.880, a2 0.878.
    assert [h.item.text for h in hits] == ["a item 0", "a item 1", "b item 0"]
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert hits[0].score == pytest.approx(1.0, abs=1e-4)
    assert [h.item.metadata["space"] for h in hits] == ["a", "a", "b"]  # payloads read
    assert sorted(len(ids) for ids in read) == [1, 2]  # the three winners, not three per space
    assert store.rank_dense({"a": question, "b": question}, SearchFilter(tenant="A"), 3) == [
        (h.item.id, h.score) for h in hits]


def test_a_point_deleted_between_the_two_reads_is_left_out(spaced, monkeypatch):
    store, question = spaced
    inner = store.stores["a"]
    original = inner.get

    def get_after_delete(ids):
        inner.delete_ids(ids[:1])
        return original(ids)

    monkeypatch.setattr(inner, "get", get_after_delete)
    hits = store.search_dense({"a": question, "b": question}, SearchFilter(tenant="A"), 3)
    assert [h.item.text for h in hits] == ["a item 1", "b item 0"]
