"""Pick the graph store from the settings: Neo4j if a URI is configured, else embedded LadybugDB."""

from __future__ import annotations

from agent_memory.core.config import Settings
from agent_memory.core.extras import require_extra
from agent_memory.stores.base import GraphStore

GRAPH_FILE = "graph"  # the embedded graph's database file under the data dir (LadybugDB adds graph.wal beside it)


def open_graph_store(settings: Settings) -> GraphStore:
    """``neo4j_uri`` set -> Neo4j (user/password/database from settings); else LadybugDB at ``data_dir/graph``.

    Raises :class:`~agent_memory.core.errors.StoreUnavailableError` when the store cannot be
    reached or opened (server down, wrong credentials, database held by another process).
    """
    if settings.neo4j_uri:
        require_extra("neo4j", "servers", "a Neo4j graph store (AGENT_MEMORY_NEO4J_URI)")
        from agent_memory.stores.neo4j_graph import Neo4jGraphStore

        return Neo4jGraphStore(
            settings.neo4j_uri,
            settings.neo4j_user,
            settings.neo4j_password,
            settings.neo4j_database or None,
        )
    from agent_memory.stores.ladybug_graph import LadybugGraphStore

    return LadybugGraphStore(settings.data_dir / GRAPH_FILE)
