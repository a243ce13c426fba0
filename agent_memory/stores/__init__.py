"""Store protocols and their drivers. Backend-specific code lives only in this package."""

from typing import TYPE_CHECKING

from agent_memory.core.lazy_names import lazy_names

# Each name from the module that defines it, imported on first use (PEP 562): importing one driver-free module of
# this package (the catalog's records, a lock) does not load the protocols' numpy with it.
_HOMES = {"EntityRecord": "agent_memory.stores.base", "GraphStore": "agent_memory.stores.base",
          "VectorStore": "agent_memory.stores.base", "SparseVector": "agent_memory.core.sparse"}

__all__ = ["EntityRecord", "GraphStore", "SparseVector", "VectorStore"]

if TYPE_CHECKING:  # what type checkers and editors read; at run time __getattr__ below
    from agent_memory.core.sparse import SparseVector
    from agent_memory.stores.base import EntityRecord, GraphStore, VectorStore


__getattr__ = lazy_names(__name__, _HOMES)
