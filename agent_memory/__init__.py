"""agent-memory: long memory for LLM agents inside a bounded prompt.

``from agent_memory import Memory`` is the Python API (``agent_memory/memory/``), with the
types its calls return (``PromptResult``, ``Passage``, ``AskResult``, ``Added``, ``IngestReport``)
and the errors they raise. ``Memory`` is a surface above ``retrieval`` and ``ingest``, so it and
those types are imported on first access only: importing the core (``agent_memory.core.config``,
``agent_memory.core.records`` ...) never imports upward.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_memory.core.lazy_names import lazy_names
from agent_memory.core.version import __version__

# name -> the module that defines it, imported when the name is first used.
_ERRORS = ("AgentMemoryError", "BackupError", "BudgetError", "ClosedError", "ConfigError", "IndexFormatError",
           "IngestError", "LLMError", "NotFoundError", "SourceBusyError", "StoreError", "StoreUnavailableError")
_LAZY = {
    "Memory": "agent_memory.memory", "AskResult": "agent_memory.memory", "Added": "agent_memory.memory",
    "PromptResult": "agent_memory.retrieval.types", "Passage": "agent_memory.retrieval.types", "Decision": "agent_memory.retrieval.types",
    "IngestReport": "agent_memory.ingest.report", "Document": "agent_memory.core.records", "TurnRecord": "agent_memory.core.records",
    **dict.fromkeys(_ERRORS, "agent_memory.core.errors"), "DataDirBusyError": "agent_memory.core.owner",
}
# The errors a caller catches: AgentMemoryError is the root of all (DataDirBusyError is a ConfigError).
__all__ = ["Memory", "AskResult", "Added", "PromptResult", "Passage", "Decision", "IngestReport", "Document",
           "TurnRecord", "AgentMemoryError", "BackupError", "BudgetError", "ClosedError", "ConfigError",
           "IndexFormatError", "IngestError", "LLMError", "NotFoundError", "SourceBusyError", "StoreError",
           "StoreUnavailableError", "DataDirBusyError", "__version__"]

if TYPE_CHECKING:
    from agent_memory.core.errors import (
        AgentMemoryError,
        BackupError,
        BudgetError,
        ClosedError,
        ConfigError,
        IndexFormatError,
        IngestError,
        LLMError,
        NotFoundError,
        SourceBusyError,
        StoreError,
        StoreUnavailableError,
    )
    from agent_memory.core.owner import DataDirBusyError
    from agent_memory.core.records import Document, TurnRecord
    from agent_memory.ingest.report import IngestReport
    from agent_memory.memory import Added, AskResult, Memory
    from agent_memory.retrieval.types import Decision, Passage, PromptResult


__getattr__ = lazy_names(__name__, _LAZY)
