-- A file given alone to a job (by its path), not only reached by a folder walk (catalog.py adds the same
-- column): a later walk of its folder whose ignore rules leave it out keeps it. Existing rows: walked.
ALTER TABLE catalog_sources ADD COLUMN IF NOT EXISTS named_alone boolean NOT NULL DEFAULT false;
