-- A compaction summary's lines' vectors, written by the archive pass after the summary (sqlite_sessions.py adds
-- the same column): the live summaries are ranked by meaning without embedding at question time
-- (conversation/summary_vectors.py). NULL: not embedded yet (the question embeds the lines).
ALTER TABLE session_summaries ADD COLUMN IF NOT EXISTS line_vectors text;
