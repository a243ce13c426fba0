-- A file the user named to a job (given alone, or under a folder given that ignore rules leave out), not only
-- reached by a walk (catalog.py adds the same column): a later walk whose ignore rules leave it out keeps it.
-- Existing rows: walked.
ALTER TABLE catalog_sources ADD COLUMN IF NOT EXISTS named_by_user boolean NOT NULL DEFAULT false;
