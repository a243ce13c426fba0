"""Qdrant Edge's keyword (IDF) weighting forgets deleted points: after the upkeep (a background reopen past
``edge_reopen_deleted_share``, or ``agent-memory gc``), a keyword search scores as a fresh collection of the
live points does, and as the same data dir after a restart.

A deleted point keeps counting in the weighting's document count and frequencies until the shard is loaded
again: a forget changed keyword scores only after a restart (stores/edge_reload.py).
"""

from __future__ import annotations

import threading
import time

import pytest
import qdrant_edge as qe

from agent_memory import Memory
from agent_memory.core.config import Settings, load_settings
from agent_memory.core.errors import StoreUnavailableError
from agent_memory.core.records import SearchFilter
from agent_memory.ingest.upkeep import expire
from agent_memory.stores.qdrant_edge_store import EdgeVectorStore
from agent_memory.stores.vector_factory import open_vector_store
from tests.integration.test_vector_store_keyword_weights import KEPT, QUESTION, keyword_scores
from tests.vector_store_support import DIM, make_item, put

# The contract's kept points, question and scores; fewer deleted ones (200 of 203) than its 300, as no server's
# vacuum floor applies here.
GONE = [make_item(f"apple banana filler {i}", source="gone", start=i * 100) for i in range(200)]


@pytest.fixture
def fresh_scores(tmp_path) -> list[tuple[str, float]]:
    with EdgeVectorStore(tmp_path / "fresh", "c", DIM) as fresh:
        put(fresh, KEPT)
        return keyword_scores(fresh)


def wait_until(condition, timeout_s: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_deleted_points_stop_counting_once_refreshed_as_in_a_fresh_or_reopened_collection(tmp_path, fresh_scores):
    with EdgeVectorStore(tmp_path / "edge", "c", DIM) as store:
        put(store, KEPT + GONE)
        assert store.delete_by_source("A", "gone") == len(GONE)
        assert store.deleted_share() == pytest.approx(len(GONE) / len(KEPT + GONE))
        assert keyword_scores(store) != fresh_scores  # the engine still weighs by the deleted points
        assert store.refresh_keyword_weights() == len(GONE)
        assert store.deleted_share() == 0
        assert keyword_scores(store) == fresh_scores
        assert store.refresh_keyword_weights() == 0  # nothing more counted: nothing done
        put(store, [make_item("apple pie after the reopen", source="later")])  # writes go on
        assert store.count() == len(KEPT) + 1
    with EdgeVectorStore(tmp_path / "edge", "c", DIM) as reopened:
        reopened.delete_by_source("A", "later")
        reopened.refresh_keyword_weights()
        assert keyword_scores(reopened) == fresh_scores


def test_without_deletes_nothing_is_reopened_and_scores_stay(tmp_path, fresh_scores):
    with EdgeVectorStore(tmp_path / "edge", "c", DIM, reopen_share=0.0) as store:
        put(store, KEPT)
        put(store, KEPT)  # the same items again: replaced in place, nothing deleted
        assert store.deleted_share() == 0 and store.refresh_keyword_weights() == 0
        assert keyword_scores(store) == fresh_scores


def test_deletes_past_the_share_reopen_the_shard_in_the_background(tmp_path, fresh_scores):
    with EdgeVectorStore(tmp_path / "edge", "c", DIM, reopen_share=0.5) as store:
        put(store, KEPT + GONE)
        store.delete_ids([GONE[0].id])  # 1 of 203: under the share, nothing is asked
        assert store.deleted_share() > 0
        store.delete_by_source("A", "gone")
        assert wait_until(lambda: store.deleted_share() == 0)
        assert keyword_scores(store) == fresh_scores


def test_a_share_of_one_leaves_the_reopen_to_gc(tmp_path):
    with EdgeVectorStore(tmp_path / "edge", "c", DIM, reopen_share=1.0) as store:
        put(store, KEPT + GONE)
        store.delete_by_source("A", "gone")
        time.sleep(1.5)  # past the settling time a background reopen would wait
        assert store.deleted_share() > 0


def test_reads_during_reopens_wait_for_the_new_shard_and_never_fail(tmp_path, fresh_scores):
    with EdgeVectorStore(tmp_path / "edge", "c", DIM) as store:
        put(store, KEPT)
        seen, errors, done = set(), [], threading.Event()

        def read() -> None:
            while not done.is_set():
                try:
                    seen.add(tuple(keyword_scores(store)))
                    assert store.count(SearchFilter(tenant="A", source_ids=["kept"])) == len(KEPT)
                except Exception as exc:  # noqa: BLE001 - any failure of a read is what this test looks for
                    errors.append(exc)

        readers = [threading.Thread(target=read) for _ in range(2)]
        for reader in readers:
            reader.start()
        try:
            for round_ in range(5):
                extra = [make_item(f"apple filler {round_}.{i}", source="gone", start=i) for i in range(20)]
                put(store, extra)
                store.delete_by_source("A", "gone")
                assert store.refresh_keyword_weights() == len(extra)
        finally:
            done.set()
            for reader in readers:
                reader.join()
        assert errors == []
        assert tuple(fresh_scores) in seen and keyword_scores(store) == fresh_scores


def test_a_shard_that_cannot_be_loaded_again_says_so_on_every_call(tmp_path, monkeypatch):
    store = EdgeVectorStore(tmp_path / "edge", "c", DIM)
    put(store, KEPT + GONE)
    store.delete_by_source("A", "gone")

    def refuse(path, config=None):
        raise RuntimeError(f"Service internal error: cannot read {path}")

    monkeypatch.setattr(qe.EdgeShard, "load", staticmethod(refuse))
    with pytest.raises(StoreUnavailableError, match="could not be reopened"):
        store.refresh_keyword_weights()
    with pytest.raises(StoreUnavailableError, match=str(tmp_path / "edge" / "c")):
        store.search_sparse(QUESTION, SearchFilter(tenant="A"), 10)
    store.close()  # nothing left open to close: no error


def test_the_share_setting_reaches_the_store(tmp_path):
    settings = Settings(data_dir=tmp_path, edge_reopen_deleted_share=0.25, qdrant_url=None, _env_file=None)
    with open_vector_store(settings, DIM, "c") as store:
        assert isinstance(store, EdgeVectorStore) and store.reopen_share == 0.25


def _memory(data_dir, **settings) -> Memory:
    return Memory(settings=load_settings(data_dir=data_dir, triple_extractor="rules", qdrant_url=None,
                                         neo4j_uri=None, postgres_url=None, ttl_days={}, **settings))


def _keyword_scores(memory: Memory, question: str) -> list[tuple[str, float]]:
    vectors = memory.services.vectors
    hits = vectors.search_sparse(memory.services.sparse_encoder.encode_query(question),
                                 SearchFilter(tenant="default"), 10)
    return [(h.item.source_id, round(h.score, 5)) for h in hits]


def test_after_a_forget_and_gc_a_question_ranks_as_in_a_fresh_data_dir_and_after_a_restart(tmp_path):
    """A forget through the Python API, then the upkeep `agent-memory gc` runs: the keyword route scores the
    items left as a data dir that never held the forgotten ones, and as the same data dir after a restart."""
    kept = {"notes/kiwi": "The Glorpax kiwi harvest starts in May.", "notes/pear": "Glorpax pears ripen late."}
    gone = {f"notes/old{i}": f"Glorpax kiwi crate {i} was shipped." for i in range(30)}
    question = "Glorpax kiwi harvest"
    with _memory(tmp_path / "fresh") as fresh:
        for source_id, text in kept.items():
            fresh.add(text, source_id=source_id)
        want = _keyword_scores(fresh, question)
    with _memory(tmp_path / "data", edge_reopen_deleted_share=1.0) as memory:
        for source_id, text in {**kept, **gone}.items():
            memory.add(text, source_id=source_id)
        for source_id in gone:
            memory.forget(source_id)
        assert _keyword_scores(memory, question) != want  # before the upkeep: weighed by the forgotten items
        expire(memory.services, memory.ingestion.forget)  # what `agent-memory gc` and POST /v1/gc run
        assert _keyword_scores(memory, question) == want
    with _memory(tmp_path / "data") as restarted:
        assert _keyword_scores(restarted, question) == want
