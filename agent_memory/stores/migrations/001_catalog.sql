-- The source catalog (agent_memory/catalog.py has the SQLite twin): one row per ingested source.
CREATE TABLE IF NOT EXISTS catalog_sources (
    tenant text NOT NULL,
    source_id text NOT NULL,
    kind text NOT NULL,
    content_hash text NOT NULL,
    path text NOT NULL DEFAULT '',
    title text NOT NULL DEFAULT '',
    session_id text,
    seq integer,
    "timestamp" text NOT NULL DEFAULT '',
    item_ids jsonb NOT NULL DEFAULT '[]',
    n_triples integer NOT NULL DEFAULT 0,
    updated_at double precision NOT NULL,
    PRIMARY KEY (tenant, source_id)
);
CREATE INDEX IF NOT EXISTS catalog_sources_session ON catalog_sources (tenant, session_id, seq);
CREATE TABLE IF NOT EXISTS catalog_titles (
    tenant text NOT NULL,
    title_key text NOT NULL,
    source_id text NOT NULL,
    PRIMARY KEY (tenant, title_key, source_id)
);
