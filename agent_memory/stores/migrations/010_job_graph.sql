-- A job's progress inside one unit while its facts go to the graph: its texts read for entity triples so far, of
-- those to read (stores/jobs.py GRAPH_STAGE). Defaults of 0: a version from before writes rows unchanged.
ALTER TABLE jobs ADD COLUMN IF NOT EXISTS graph_done integer NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN IF NOT EXISTS graph_total integer NOT NULL DEFAULT 0;
