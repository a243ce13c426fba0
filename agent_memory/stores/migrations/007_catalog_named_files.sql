-- The files the user named to a job (given alone, or under a folder given that ignore rules leave out), not
-- only reached by a walk: a later walk whose ignore rules leave one out keeps it (catalog.py's named_files).
-- A table of its own, not a column of catalog_sources: a version from before it writes that table unchanged.
CREATE TABLE IF NOT EXISTS catalog_named_files (
    tenant text NOT NULL,
    source_id text NOT NULL,
    PRIMARY KEY (tenant, source_id)
);
