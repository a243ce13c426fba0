"""Store protocols and their drivers. Backend-specific code lives only in this package."""

from agent_memory.core.sparse import SparseVector
from agent_memory.stores.base import EntityRecord, GraphStore, VectorStore

__all__ = ["EntityRecord", "GraphStore", "SparseVector", "VectorStore"]
