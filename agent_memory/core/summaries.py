"""The one summarizer protocol: a summary of a source (a document's text, a span of a session's
messages) in at most about ``max_tokens`` tokens. Ingestion summarizes texts
(agent_memory/ingest/summarize.py), compaction spans of messages (agent_memory/conversation/summarize.py);
each offers an LLM summarizer and an offline one under this one shape."""

from __future__ import annotations

from typing import Protocol, TypeVar

Source = TypeVar("Source", contravariant=True)


class Summarizer(Protocol[Source]):
    name: str  # "llm", "extractive", "structural": reported with what it made

    def summarize(self, source: Source, /, *, max_tokens: int) -> str: ...
