-- Whether a message's time is its own timestamp (sqlite_sessions.py adds the same column): a session opened
-- again rebuilds its timeline of undated messages from it (conversation/timeline.py). NULL: not recorded.
ALTER TABLE session_messages ADD COLUMN IF NOT EXISTS stated boolean;
