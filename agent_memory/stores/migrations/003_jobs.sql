-- Durable ingestion jobs: the API inserts, `agent-memory worker` takes them with FOR UPDATE SKIP LOCKED.
-- A running job whose heartbeat is older than the lease is taken again (its worker died).
CREATE TABLE IF NOT EXISTS jobs (
    id text PRIMARY KEY,
    tenant text NOT NULL,
    kind text NOT NULL,
    source_key text NOT NULL,
    params jsonb NOT NULL DEFAULT '{}',
    body bytea,
    bytes bigint NOT NULL DEFAULT 0,
    status text NOT NULL DEFAULT 'queued',
    stage text NOT NULL DEFAULT 'queued',
    units_done integer NOT NULL DEFAULT 0,
    units_total integer NOT NULL DEFAULT 0,
    attempts integer NOT NULL DEFAULT 0,
    worker text,
    heartbeat_at double precision,
    created_at double precision NOT NULL,
    started_at double precision,
    finished_at double precision,
    result jsonb,
    error jsonb
);
CREATE INDEX IF NOT EXISTS jobs_open ON jobs (created_at) WHERE status IN ('queued', 'running');
