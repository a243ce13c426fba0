"""``python -m agent_memory.cli``: the ``agent-memory`` command."""

import sys

from agent_memory.cli import main

sys.exit(main())
