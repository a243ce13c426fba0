-- The archive watermark of each working-memory session (conversation/store.py has the SQLite twin):
-- every message up to archived_through is in long-term memory or was judged not to go there; a
-- later pass (after a crash or restart too) archives what lies past it (agent_memory/working_memory.py).
CREATE TABLE IF NOT EXISTS session_archive_marks (
    session_id text NOT NULL, agent_id text NOT NULL, archived_through integer NOT NULL,
    PRIMARY KEY (session_id, agent_id)
);
