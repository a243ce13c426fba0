"""Whether a command shows progress on stderr: ``AGENT_MEMORY_NO_PROGRESS=1`` (the Docker image, scripts, tests)
turns every progress display off, a local job's bar and an upload's line alike."""

from __future__ import annotations

import os

NO_PROGRESS_ENV = "AGENT_MEMORY_NO_PROGRESS"


def progress_shown(asked: bool = True) -> bool:
    """Whether to show the progress a caller ``asked`` for: not when the environment turns it off."""
    return asked and os.environ.get(NO_PROGRESS_ENV) != "1"
