-- Working-memory sessions (agent_memory/conversation/store.py has the SQLite twin).
CREATE TABLE IF NOT EXISTS session_messages (
    session_id text NOT NULL, agent_id text NOT NULL, seq integer NOT NULL,
    role text NOT NULL, retention text NOT NULL, unclassified boolean NOT NULL DEFAULT false,
    body text NOT NULL, tokens integer NOT NULL, status text NOT NULL DEFAULT 'active',
    significant boolean NOT NULL DEFAULT false, created_at double precision NOT NULL,
    PRIMARY KEY (session_id, agent_id, seq)
);
CREATE TABLE IF NOT EXISTS session_summaries (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, session_id text NOT NULL, agent_id text NOT NULL,
    first_seq integer NOT NULL, last_seq integer NOT NULL, tier integer NOT NULL, text text NOT NULL,
    tokens integer NOT NULL, method text NOT NULL, validation text NOT NULL, created_at double precision NOT NULL
);
CREATE INDEX IF NOT EXISTS session_summaries_by_session ON session_summaries (session_id, agent_id, id);
CREATE TABLE IF NOT EXISTS session_entities (
    session_id text NOT NULL, agent_id text NOT NULL, name text NOT NULL,
    count integer NOT NULL, last_seq integer NOT NULL,
    PRIMARY KEY (session_id, agent_id, name)
);
CREATE TABLE IF NOT EXISTS session_state (
    session_id text NOT NULL, agent_id text NOT NULL, state text NOT NULL,
    PRIMARY KEY (session_id, agent_id)
);
