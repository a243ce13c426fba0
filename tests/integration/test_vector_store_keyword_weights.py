"""The VectorStore contract on keyword (IDF) weighting after deletes: once ``refresh_keyword_weights()`` has
run (what `agent-memory gc` and POST /v1/gc end with), a keyword search scores the points left as a
collection that never held the deleted ones does.

The IDF modifier weighs a term by how many points hold it, of how many points there are. Qdrant's engine
takes both from its segments' sparse indexes, which keep a deleted point until the segment is rebuilt: Qdrant
Edge reopens its shard (stores/edge_reload.py); a Qdrant server rebuilds segments with its vacuum optimizer
(stores/qdrant_server_vacuum.py); qdrant-client's local mode counts the live points at once.

Every backend runs these tests (tests/vector_store_support.py holds the parametrized fixtures); the real
server runs them when AGENT_MEMORY_QDRANT_URL is set. The collections hold 300 more live points: a server
vacuums no segment of fewer than 100 points (that limit is recorded in
tests/integration/test_qdrant_server_keyword_weights.py).
"""

from __future__ import annotations

import pytest

from agent_memory.core.records import SearchFilter
from agent_memory.stores import qdrant_server_vacuum
from tests import vector_store_support
from tests.vector_store_support import ENC, Opener, make_item, put

opener = vector_store_support.opener
store = vector_store_support.store


@pytest.fixture(autouse=True)
def any_release_vacuums(monkeypatch):
    """A server takes the driver's low vacuum threshold only from Qdrant 1.18.1 (older ones keep their own
    settings: tests/unit/test_qdrant_server_vacuum.py); the contract is checked on whatever release runs it."""
    monkeypatch.setattr(qdrant_server_vacuum, "LOW_THRESHOLD_SINCE", (0,))

# A rare term ("orchard") on the kept points, a common one ("apple") on every point: the deleted points
# change both the document count and the common term's frequency, so their weights move if still counted.
KEPT = [make_item(f"apple orchard note {i}", source="kept", start=i * 100) for i in range(3)]
GONE = [make_item(f"apple banana filler {i}", source="gone", start=i * 100) for i in range(300)]
LIVE = [make_item(f"pear plum note {i}", source="live", start=i * 100) for i in range(300)]
QUESTION = ENC.encode_query("apple orchard")


def keyword_scores(store) -> list[tuple[str, float]]:
    return [(h.item.id, round(h.score, 5)) for h in store.search_sparse(QUESTION, SearchFilter(tenant="A"), 10)]


@pytest.fixture
def fresh_scores(opener, tmp_path) -> list[tuple[str, float]]:
    """The keyword scores of a collection on the same backend that only ever held the live points."""
    fresh = Opener(opener.backend, tmp_path / "fresh")
    try:
        store = fresh()
        put(store, KEPT + LIVE)
        return keyword_scores(store)
    finally:
        fresh.cleanup()


def test_after_deletes_and_the_refresh_keyword_scores_are_a_fresh_collections(store, fresh_scores):
    put(store, KEPT + LIVE + GONE)
    assert store.delete_by_source("A", "gone") == len(GONE)
    store.refresh_keyword_weights()
    assert keyword_scores(store) == fresh_scores
    assert store.refresh_keyword_weights() == 0  # nothing more counted: nothing done
    assert keyword_scores(store) == fresh_scores


def test_after_deleting_points_by_id_the_refresh_does_the_same(store, fresh_scores):
    put(store, KEPT + LIVE + GONE)
    store.delete_ids([item.id for item in GONE[::2]])
    store.delete_ids([item.id for item in GONE[1::2]])
    store.refresh_keyword_weights()
    assert keyword_scores(store) == fresh_scores


def test_writes_after_the_refresh_are_weighed_as_in_a_fresh_collection(store, opener, tmp_path):
    later = make_item("apple orchard after the refresh", source="later")
    put(store, KEPT + LIVE + GONE)
    store.delete_by_source("A", "gone")
    store.refresh_keyword_weights()
    put(store, [later])
    fresh = Opener(opener.backend, tmp_path / "fresh-later")
    try:
        other = fresh()
        put(other, KEPT + LIVE + [later])
        assert keyword_scores(store) == keyword_scores(other)
    finally:
        fresh.cleanup()
