-- A job's progress inside one unit of a file (a whole PDF, a large Markdown file): its chunks stored so far, of
-- those split so far (stores/jobs.py CHUNKS_STAGE). Defaults of 0: a version from before writes rows unchanged.
ALTER TABLE jobs ADD COLUMN IF NOT EXISTS chunks_done integer NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN IF NOT EXISTS chunks_total integer NOT NULL DEFAULT 0;
