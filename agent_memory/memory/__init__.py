"""The Python API: ``Memory`` (``from agent_memory import Memory``) and the records its calls return.

Three modules: ``memory.py`` (``Memory``: the parts built on first use, documents, questions,
lifetime; ``Added``, ``AskResult``), ``sessions.py`` (its working-memory calls, a base class of
``Memory``) and ``arguments.py`` (the checks on what callers pass). The surfaces above (CLI, HTTP
API, MCP server, integrations) import ``Memory`` from here.
"""

from agent_memory.memory.memory import Added, AskResult, Memory

__all__ = ["Added", "AskResult", "Memory"]
