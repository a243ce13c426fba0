-- The token counter each stored count was made with (sqlite_sessions.py adds the same column): a
-- session opened under another AGENT_MEMORY_TOKENIZER counts those messages again. NULL: not recorded.
ALTER TABLE session_messages ADD COLUMN IF NOT EXISTS tokenizer text;
