"""The backends every VectorStore contract test runs on, and the items and vectors those tests store.

One contract for every VectorStore backend: Qdrant Edge, and the Qdrant server driver over
qdrant-client's local mode (on disk and in memory, the same client API a server answers) and
over a real server. The contract is tested in several files by topic; each binds the ``opener`` and
``store`` fixtures from here, so every file runs on the same parametrized backends.

The real server runs only when AGENT_MEMORY_QDRANT_URL is set (no Qdrant server is installable
here); the server driver's code runs in every test run through the local modes. Vectors are small and
deterministic (one-hot plus a little noise) so rankings are known in advance.
"""

from __future__ import annotations

import os
import uuid

import numpy as np
import pytest

from agent_memory.core.config import Settings
from agent_memory.core.ids import content_hash, item_id
from agent_memory.core.records import MemoryItem
from agent_memory.core.sparse import SparseEncoder
from agent_memory.stores.base import VectorStore
from agent_memory.stores.qdrant_edge_store import EdgeVectorStore
from agent_memory.stores.qdrant_server_store import QdrantServerVectorStore

DIM = 8
SERVER_URL = os.environ.get("AGENT_MEMORY_QDRANT_URL")
ENC = SparseEncoder()
# A server collection vacuums its deleted points as the product creates it (settings.qdrant_vacuum_deleted_share).
VACUUM_SHARE = Settings.model_fields["qdrant_vacuum_deleted_share"].default


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


def server_version() -> tuple[int, ...]:
    """The real server's version (major, minor, patch): what it can do differs by version."""
    from qdrant_client import QdrantClient

    client = QdrantClient(url=SERVER_URL, api_key=os.environ.get("AGENT_MEMORY_QDRANT_API_KEY"),
                          check_compatibility=False)
    try:
        return tuple(int(part) for part in client.info().version.split(".")[:3])
    finally:
        client.close()


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
            store = QdrantServerVectorStore(self.collection, dimension, url=SERVER_URL, vacuum_share=VACUUM_SHARE,
                                            api_key=os.environ.get("AGENT_MEMORY_QDRANT_API_KEY"))
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
