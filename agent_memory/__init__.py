"""agent-memory: long memory for LLM agents inside a bounded prompt."""

__version__ = "0.1.0"
