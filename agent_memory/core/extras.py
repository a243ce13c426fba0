"""Optional dependencies (pyproject's extras): a clear error naming the extra when one is missing."""

from __future__ import annotations

import importlib.util

from agent_memory.core.errors import ConfigError


def require_extra(module: str, extra: str, needed_for: str) -> None:
    """Raise ConfigError unless ``module`` is installed; ``extra`` is the pyproject extra that installs it."""
    if importlib.util.find_spec(module) is None:
        raise ConfigError(f"{needed_for} needs the Python package {module!r}: "
                          f"pip install 'agent-memory[{extra}]'")


def has_extra(module: str) -> bool:
    return importlib.util.find_spec(module) is not None
