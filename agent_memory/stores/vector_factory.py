"""Pick the vector store from the settings: a Qdrant server if configured, else embedded."""

from __future__ import annotations

import re

from agent_memory.core.config import Settings
from agent_memory.core.errors import ConfigError
from agent_memory.core.extras import require_extra
from agent_memory.stores.base import VectorStore

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def open_vector_store(settings: Settings, dimension: int, collection: str) -> VectorStore:
    """``qdrant_url`` set -> server; else ``vector_backend`` "edge" (default) or "local" under ``data_dir``."""
    if not collection or _UNSAFE.search(collection) or collection in {".", ".."}:
        raise ConfigError(f"collection name {collection!r} must be non-empty and use only letters, digits, '_', '.', '-'")
    if settings.qdrant_url or settings.vector_backend == "local":
        require_extra("qdrant_client", "servers", f"vector_backend={settings.vector_backend!r} or a Qdrant URL")
    if settings.qdrant_url:
        from agent_memory.stores.qdrant_server_store import QdrantServerVectorStore

        return QdrantServerVectorStore(collection, dimension, url=settings.qdrant_url, api_key=settings.qdrant_api_key,
                                       vacuum_share=settings.qdrant_vacuum_deleted_share)
    if settings.vector_backend == "edge":
        from agent_memory.stores.qdrant_edge_store import EdgeVectorStore

        return EdgeVectorStore(settings.data_dir / vectors_folder(settings), collection, dimension,
                               in_memory=settings.edge_in_memory, reserve_mb=settings.min_free_mb,
                               reopen_share=settings.edge_reopen_deleted_share)
    if settings.vector_backend == "local":
        from agent_memory.stores.qdrant_server_store import QdrantServerVectorStore

        return QdrantServerVectorStore(collection, dimension, path=settings.data_dir / vectors_folder(settings))
    raise ConfigError(f"vector_backend={settings.vector_backend!r} is not one of 'edge', 'local'")


def vectors_folder(settings: Settings) -> str:
    """The folder under the data dir that holds the embedded vector store's collections."""
    return "qdrant-local" if settings.vector_backend == "local" else "qdrant-edge"
