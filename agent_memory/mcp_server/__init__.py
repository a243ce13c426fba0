"""``agent-memory mcp``: the memory over the Model Context Protocol (the official ``mcp`` package).

Stdio by default (one client, the settings' tenant, or ``--tenant``); streamable HTTP on
``/mcp`` with ``--http``, under the HTTP API's rules: a key (``X-API-Key`` or ``Authorization:
Bearer``) is required whenever keys are configured or the server listens beyond loopback, and
each key is bound to one tenant.

Tools: ``remember`` (a text, documents, or messages into a session with a retention class),
``recall`` (the bounded prompt for a question, with its sources), ``search`` (ranked passages with
a relevance in 0..1), ``forget``, ``session_view``, ``session_list`` and
``session_delete``. Their input and output schemas are pydantic models (the HTTP API's where it
has one, ``agent_memory/api/schemas.py`` and ``schemas_sessions.py``), the same models validate the
arguments and shape the structured results, and each tool says whether it only reads or may destroy
(annotations). A thin layer over ``agent_memory.Memory`` or, when a server owns the data dir,
over that server's HTTP API (``agent_memory/remote/``); the low-level ``Server`` is used so the
schemas are the models' own.

Two modules: ``tools.py`` (the tools: argument and result models, the local and remote backends,
the ``TOOLS`` table) and ``server.py`` (the MCP ``Server`` over them and its stdio and HTTP transports).
"""
