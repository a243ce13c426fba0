"""Store protocols and their drivers. Backend-specific code lives only in this package."""

from .base import EntityRecord, GraphStore, SparseVector, VectorStore

__all__ = ["EntityRecord", "GraphStore", "SparseVector", "VectorStore"]
