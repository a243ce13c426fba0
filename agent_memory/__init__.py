"""agent-memory: long memory for LLM agents inside a bounded prompt.

``from agent_memory import Memory`` is the Python API (``agent_memory/memory.py``). It is a
surface above ``retrieval`` and ``ingest``, so it is imported on first access only: importing
the core (``agent_memory.config``, ``agent_memory.records`` ...) never imports upward.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Memory", "__version__"]

if TYPE_CHECKING:
    from .memory import Memory


def __getattr__(name: str) -> Any:
    if name == "Memory":
        from .memory import Memory

        return Memory
    raise AttributeError(f"module 'agent_memory' has no attribute {name!r}")
