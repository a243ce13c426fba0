"""The version of agent-memory, in one place.

pyproject.toml reads it from here (``[tool.setuptools.dynamic]``, parsed, not imported), and every surface
that states a version reads it from here: ``agent-memory --version``, ``/healthz``, ``/readyz``, the
OpenAPI document, the MCP server. A constant in the code rather than ``importlib.metadata``: the installed
distribution's metadata can belong to other code than the code running (a checkout run with
``PYTHONPATH``, an editable install not reinstalled since the version changed, no metadata at all),
while this constant always travels with the code it describes.
"""

__version__ = "0.1.0"
