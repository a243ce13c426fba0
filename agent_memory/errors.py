"""One root exception and a few meaningful subclasses.

Callers catch ``AgentMemoryError`` for anything this package raises on purpose;
the subclasses say which part failed so surfaces (CLI, API) can map them to exit
codes and HTTP statuses without string matching.
"""

from __future__ import annotations


class AgentMemoryError(Exception):
    """Root of every error raised on purpose by agent-memory."""


class ConfigError(AgentMemoryError):
    """Settings are missing, contradictory or point at something unusable."""


class StoreError(AgentMemoryError):
    """A vector or graph store failed an operation."""


class StoreUnavailableError(StoreError):
    """A store cannot be reached or opened (server down, path locked)."""


class DimensionMismatchError(StoreError):
    """A collection exists with another vector size than the embedder produces."""


class IngestError(AgentMemoryError):
    """An input could not be ingested (the job reports it and goes on)."""


class BudgetError(AgentMemoryError):
    """A token budget cannot be met (e.g. smaller than the question itself)."""


class LLMError(AgentMemoryError):
    """The configured LLM endpoint failed or answered something unusable."""


class NotFoundError(AgentMemoryError):
    """A named session, source or job does not exist."""
