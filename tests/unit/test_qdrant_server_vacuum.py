"""The server driver's vacuum steps against a stand-in client: what the telemetry says is counted, and how a
wait for the server's vacuum ends (done, still running, failed). A real server runs them in
tests/integration/test_qdrant_server_keyword_weights.py when AGENT_MEMORY_QDRANT_URL is set."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from qdrant_client import models

from agent_memory.core.errors import StoreError
from agent_memory.stores import qdrant_server_vacuum
from agent_memory.stores.qdrant_server_store import QdrantServerVectorStore
from agent_memory.stores.qdrant_server_vacuum import deleted_counted, vacuum_config, wait_for_vacuum


def telemetry(*collections: dict) -> dict:
    return {"result": {"collections": {"collections": list(collections)}}}


def shard(points: int, sparse: int) -> dict:
    return {"local": {"num_points": points, "num_vectors_by_name": {"dense": sparse, "sparse": sparse}}}


class Client:
    """What the vacuum steps call on a QdrantClient: the telemetry and the collection's info, and nothing
    that changes the collection (a collection update could stop a vacuum and lose its deletes)."""

    def __init__(self, answer=None, statuses=()):
        self.answer = answer
        self.statuses = list(statuses)
        self.http = SimpleNamespace(client=SimpleNamespace(request=self._request))

    def _request(self, **_):
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer

    def get_collection(self, name):
        status = self.statuses.pop(0) if len(self.statuses) > 1 else self.statuses[0]
        return SimpleNamespace(status=status, optimizer_status=models.OptimizersStatusOneOf.OK)


def test_the_deleted_points_counted_are_the_sparse_vectors_beyond_the_live_points_of_every_local_shard():
    client = Client(telemetry({"id": "other", "shards": [shard(1, 50)]},
                              {"id": "c", "shards": [shard(3, 53), shard(10, 10), {"remote": []}]}))
    assert deleted_counted(client, "c") == 50
    assert deleted_counted(client, "absent") is None


@pytest.mark.parametrize("answer", [RuntimeError("403 Forbidden"), {"result": {"collections": {}}},
                                    telemetry({"id": "c", "shards": [{"local": {"num_points": 3}}]})])
def test_telemetry_that_does_not_say_gives_no_count(answer):
    assert deleted_counted(Client(answer), "c") is None


def test_the_wait_ends_when_the_servers_optimizers_are_done():
    client = Client(statuses=[models.CollectionStatus.YELLOW, models.CollectionStatus.YELLOW,
                              models.CollectionStatus.GREEN])
    assert wait_for_vacuum(client, "c", wait_s=10) is True
    assert client.statuses == [models.CollectionStatus.GREEN]


def test_a_vacuum_still_running_after_the_wait_is_left_to_run(monkeypatch, caplog):
    monkeypatch.setattr(qdrant_server_vacuum, "_POLL_S", 0.01)
    assert wait_for_vacuum(Client(statuses=[models.CollectionStatus.YELLOW]), "c", wait_s=0.05) is False
    assert "'c' is still being optimized" in caplog.text


def test_failed_optimizers_are_a_store_error_naming_the_collection():
    with pytest.raises(StoreError, match="Qdrant collection 'c': the server's optimizers failed"):
        wait_for_vacuum(Client(statuses=[models.CollectionStatus.RED]), "c", wait_s=10)


def test_the_vacuum_settings_start_at_the_servers_floor():
    config = vacuum_config(0.01)
    assert (config.deleted_threshold, config.vacuum_min_vector_number) == (0.01, 100)


@pytest.mark.parametrize("share, kept", [(0.01, 0.01), (0.0, 0.0), (1.0, None), (None, None)])
def test_a_share_of_one_leaves_a_new_collection_to_the_servers_settings(share, kept):
    store = QdrantServerVectorStore("c", 8, location=":memory:", vacuum_share=share)
    try:
        assert store.vacuum_share == kept and store.refresh_keyword_weights() == 0  # local mode: nothing to do
    finally:
        store.close()


class Versioned:
    """A QdrantClient's ``info()`` and nothing else: the release the gate reads."""

    def __init__(self, version: str | Exception):
        self.version = version

    def info(self):
        if isinstance(self.version, Exception):
            raise self.version
        return SimpleNamespace(version=self.version)


@pytest.mark.parametrize("version, safe", [("1.18.1", True), ("1.19.0", True), ("2.0.0-rc1", True),
                                           ("1.18.0", False), ("1.16.3", False)])
def test_a_low_threshold_only_for_a_release_whose_vacuum_keeps_deletes(version, safe, caplog):
    qdrant_server_vacuum._warned.clear()
    with caplog.at_level("WARNING", logger=qdrant_server_vacuum.__name__):
        assert qdrant_server_vacuum.low_threshold_is_safe(Versioned(version), f"http://q-{version}") is safe
    warned = [r.getMessage() for r in caplog.records]
    if safe:
        assert warned == []
    else:
        assert len(warned) == 1 and f"is {version}" in warned[0] and "qdrant/qdrant#9052" in warned[0]


def test_an_unknown_release_is_taken_for_an_old_one_and_warned_of_once_per_server(caplog):
    qdrant_server_vacuum._warned.clear()
    client = Versioned(ConnectionError("no answer"))
    with caplog.at_level("WARNING", logger=qdrant_server_vacuum.__name__):
        assert not qdrant_server_vacuum.low_threshold_is_safe(client, "http://q-unknown")
        assert not qdrant_server_vacuum.low_threshold_is_safe(client, "http://q-unknown")
    assert [r.getMessage().count("of unknown version") for r in caplog.records] == [1]
