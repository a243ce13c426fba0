"""A real Qdrant server's keyword (IDF) weighting after deletes (runs when AGENT_MEMORY_QDRANT_URL is set).

A server counts a deleted point in the IDF modifier's document counts until its vacuum optimizer rebuilds the
segment (by default past 20% deleted of 1000+ points; a restart did not clear it). The driver creates a
collection with the vacuum threshold ``qdrant_vacuum_deleted_share`` so the server vacuums on its own, and gc
waits for it (tests/integration/test_vector_store_keyword_weights.py, every backend). It never changes the
settings of a collection that exists: on Qdrant 1.16.3 that stopped a vacuum and brought deleted points back.
"""

from __future__ import annotations

import os
import time
import uuid

import pytest
from qdrant_client import QdrantClient, models

from agent_memory import Memory
from agent_memory.core.config import Settings, load_settings
from agent_memory.core.records import Document, SearchFilter
from agent_memory.ingest.upkeep import expire
from agent_memory.stores import qdrant_server_vacuum
from agent_memory.stores.qdrant_server_store import QdrantServerVectorStore
from agent_memory.stores.qdrant_server_vacuum import VACUUM_FLOOR
from agent_memory.stores.vector_factory import open_vector_store
from tests.integration.test_vector_store_keyword_weights import GONE, KEPT, LIVE, keyword_scores
from tests.vector_store_support import DIM, SERVER_URL, make_item, put

pytestmark = [pytest.mark.qdrant_server,
              pytest.mark.skipif(not SERVER_URL, reason="AGENT_MEMORY_QDRANT_URL not set: no Qdrant server to test")]
API_KEY = os.environ.get("AGENT_MEMORY_QDRANT_API_KEY")


@pytest.fixture(autouse=True)
def any_release_vacuums(monkeypatch):
    """The driver sets a low threshold only from Qdrant 1.18.1 (qdrant_server_vacuum.LOW_THRESHOLD_SINCE); these
    tests check what the threshold does, on whatever release runs them (1.16.3 here)."""
    monkeypatch.setattr(qdrant_server_vacuum, "LOW_THRESHOLD_SINCE", (0,))


@pytest.fixture
def server():
    """Opens stores on new collections of the server; drops them all at the end."""
    client = QdrantClient(url=SERVER_URL, api_key=API_KEY, check_compatibility=False)
    opened: list[QdrantServerVectorStore] = []

    def open_store(collection: str | None = None, **options) -> QdrantServerVectorStore:
        store = QdrantServerVectorStore(collection or f"idf_{uuid.uuid4().hex[:12]}", DIM, url=SERVER_URL,
                                        api_key=API_KEY, **options)
        opened.append(store)
        return store

    open_store.client = client
    yield open_store
    for store in opened:
        store.close()
    for name in {store.collection for store in opened}:
        client.delete_collection(name)
    client.close()


def vacuum_settings(client: QdrantClient, collection: str) -> tuple[float, int]:
    config = client.get_collection(collection).config.optimizer_config
    return config.deleted_threshold, config.vacuum_min_vector_number


def settled(client: QdrantClient, collection: str, timeout_s: float = 60.0) -> bool:
    """Whether the server's optimizers finished within the time (its collection status green)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if client.get_collection(collection).status == models.CollectionStatus.GREEN:
            return True
        time.sleep(0.1)
    return False


def test_deleted_points_count_until_vacuumed_and_with_a_share_the_server_vacuums_on_its_own(server):
    fresh = server()
    put(fresh, KEPT + LIVE)
    want = keyword_scores(fresh)
    untouched = server()  # the collection's vacuum settings as the server has them
    put(untouched, KEPT + LIVE + GONE)
    untouched.delete_by_source("A", "gone")
    assert settled(server.client, untouched.collection)
    assert keyword_scores(untouched) != want  # the record: a server weighs by the deleted points
    store = server(vacuum_share=0.01)
    assert vacuum_settings(server.client, store.collection) == (0.01, VACUUM_FLOOR)
    put(store, KEPT + LIVE + GONE)
    store.delete_by_source("A", "gone")
    assert settled(server.client, store.collection)
    assert keyword_scores(store) == want  # no refresh asked: the server's own vacuum


def test_an_existing_collection_keeps_its_vacuum_settings_and_a_refresh_waits_for_the_servers_vacuum(server):
    first = server()  # made with the server's own settings
    before = vacuum_settings(server.client, first.collection)
    put(first, KEPT + LIVE + GONE)
    first.close()
    store = server(first.collection, vacuum_share=0.01)
    assert vacuum_settings(server.client, store.collection) == before  # changing them could lose deletes
    fresh = server(vacuum_share=0.01)
    put(fresh, KEPT + LIVE)
    vacuumed = server(vacuum_share=0.01)
    put(vacuumed, KEPT + LIVE + GONE)
    vacuumed.delete_by_source("A", "gone")
    vacuumed.refresh_keyword_weights()  # waits for the server's vacuum (done already, at times)
    assert keyword_scores(vacuumed) == keyword_scores(fresh)
    assert vacuumed.refresh_keyword_weights() == 0
    assert server.client.count(vacuumed.collection, exact=True).count == len(KEPT + LIVE)  # none came back


def test_the_setting_reaches_the_server_store(server, tmp_path):
    name = f"idf_{uuid.uuid4().hex[:12]}"
    settings = Settings(data_dir=tmp_path, qdrant_url=SERVER_URL, qdrant_api_key=API_KEY,
                        qdrant_vacuum_deleted_share=0.1, _env_file=None)
    with open_vector_store(settings, DIM, name) as store:
        assert isinstance(store, QdrantServerVectorStore) and store.vacuum_share == 0.1
    server(name)  # dropped at the end
    assert vacuum_settings(server.client, name) == (0.1, VACUUM_FLOOR)


def test_a_segment_under_the_servers_vacuum_floor_keeps_counting_its_deleted_points(server):
    """The limit, recorded: a server vacuums no segment of fewer than 100 points (deleted ones included), so
    in a collection this small neither the share nor gc clears them (docs/deployment.md)."""
    few = [make_item(f"apple banana filler {i}", source="gone", start=i * 100) for i in range(20)]
    fresh = server()
    put(fresh, KEPT)
    store = server(vacuum_share=0.01)
    put(store, KEPT + few)
    store.delete_by_source("A", "gone")
    store.refresh_keyword_weights()
    assert keyword_scores(store) != keyword_scores(fresh)


def test_after_a_forget_and_gc_a_question_ranks_as_before_the_forgotten_items_came(tmp_path):
    """Through the Python API with its vectors on the server: items added and forgotten, then the upkeep
    `agent-memory gc` runs; the keyword route scores the items left as it did before those items came."""
    tenant = f"idf-{uuid.uuid4().hex[:8]}"  # the server's collection is shared: a tenant of its own
    kept = {"notes/kiwi": "The Glorpax kiwi harvest starts in May.", "notes/pear": "Glorpax pears ripen late."}
    gone = [Document(source_id=f"old/{i}", text=f"Glorpax kiwi crate {i} was shipped.", tenant=tenant)
            for i in range(300)]
    settings = load_settings(data_dir=tmp_path, triple_extractor="rules", qdrant_url=SERVER_URL,
                             qdrant_api_key=API_KEY, neo4j_uri=None, postgres_url=None, ttl_days={})
    live = [Document(source_id=f"live/{i}", text=f"Pear and plum note {i}.", tenant=tenant) for i in range(300)]
    with Memory(settings=settings) as memory:
        for source_id, text in kept.items():
            memory.add(text, source_id=source_id, tenant=tenant)
        memory.add_documents(live)  # segments of 100+ points: a server vacuums no smaller one
        expire(memory.services, memory.ingestion.forget)  # deletes other tests left counted: not this test's
        want = _keyword_scores(memory, tenant, "Glorpax kiwi harvest")
        memory.add_documents(gone)
        assert memory.forget_prefix("old/", tenant=tenant)["sources"] == len(gone)
        expire(memory.services, memory.ingestion.forget)  # what `agent-memory gc` and POST /v1/gc run
        assert _keyword_scores(memory, tenant, "Glorpax kiwi harvest") == want
        memory.forget_tenant(tenant)


def _keyword_scores(memory: Memory, tenant: str, question: str) -> list[tuple[str, float]]:
    hits = memory.services.vectors.search_sparse(memory.services.sparse_encoder.encode_query(question),
                                                 SearchFilter(tenant=tenant), 10)
    return [(h.item.source_id, round(h.score, 5)) for h in hits]


def test_an_older_release_keeps_its_own_vacuum_settings(server, monkeypatch):
    release = qdrant_server_vacuum.server_version(server.client)
    if release is not None and release >= (1, 18, 1):
        pytest.skip(f"the server is {release}: it takes the low threshold")
    monkeypatch.setattr(qdrant_server_vacuum, "LOW_THRESHOLD_SINCE", (1, 18, 1))
    store = server(vacuum_share=0.01)
    default = models.OptimizersConfigDiff()  # what a collection created without settings has
    threshold, _ = vacuum_settings(server.client, store.collection)
    assert threshold != 0.01 and default.deleted_threshold is None and threshold == 0.2
