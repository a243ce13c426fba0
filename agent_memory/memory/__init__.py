"""The Python API: ``Memory`` (``from agent_memory import Memory``) and the records its calls return.

Five modules: ``memory.py`` (``Memory``: the parts built on first use, lifetime), ``documents.py``
(its calls that store and forget documents, files and turns; ``Added``), ``sessions.py`` (its
working-memory calls) and ``questions.py`` (its prompts, searches and answers; ``AskResult``), base
classes of ``Memory``, and ``arguments.py`` (the checks on what callers pass). The surfaces above (CLI,
HTTP API, MCP server, integrations) import ``Memory`` from here.
"""

from agent_memory.memory.memory import Added, AskResult, Memory

__all__ = ["Added", "AskResult", "Memory"]
