"""A running ``agent-memory serve`` as the CLI's and the MCP server's memory: the same commands,
through its HTTP API instead of the stores it owns (``agent_memory/core/owner.py``).

``client.py``: ``RemoteMemory``, the calls. ``upload_job.py``: the ingestion job, whose files are uploaded
one by one under the source ID a local ingestion would give them, big ones through the server's background
jobs; through the server that owns the data dir a folder job also forgets the files gone from disk, as a
local job does. ``responses.py``: the server's answers read back, a refusal as the error a local call
raises (``RemoteError`` for the server's own codes). The API key comes from ``AGENT_MEMORY_API_KEY``
(``KEY_ENV``: a server beyond loopback, or one with ``AGENT_MEMORY_API_KEYS``, needs one); the server
answers for that key's tenant.
"""

from agent_memory.remote.client import CONNECT_WAIT_S, Progress, RemoteMemory
from agent_memory.remote.responses import KEY_ENV, RemoteError, prompt_result

__all__ = ["CONNECT_WAIT_S", "KEY_ENV", "Progress", "RemoteError", "RemoteMemory", "prompt_result"]
