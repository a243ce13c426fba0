-- Source ownership (agent_memory/catalog.py's owners table): which file or caller wrote a source ID.
CREATE TABLE IF NOT EXISTS catalog_owners (
    tenant text NOT NULL,
    source_id text NOT NULL,
    owner text NOT NULL,
    PRIMARY KEY (tenant, source_id)
);
