"""A package's names imported on first use (PEP 562): a package ``__init__`` that names its classes for callers
(``from agent_memory.conversation import SessionManager``) without importing the modules that define them whenever
any one of its modules is imported."""

from __future__ import annotations

import importlib
import sys
from typing import Any, Callable, Mapping


def lazy_names(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``: each name of ``homes`` (name -> the module that defines it) imported from
    its module when first asked for, then kept in the package (looked up once); any other name an AttributeError."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
