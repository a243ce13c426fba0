"""A value built on first use, once: what the model wrappers defer (a graph, a question encoder)."""

from __future__ import annotations

import threading
from typing import Any, Callable


class BuiltOnce:
    """A value built on first use, once, by whichever thread asks first (the others wait); a build
    that gave None (a question encoder that could not be made) is not tried again."""

    def __init__(self, build: Callable[[], Any]) -> None:
        self._build = build
        self._built = False
        self._value: Any = None
        self._lock = threading.Lock()

    def get(self) -> Any:
        with self._lock:
            if not self._built:
                self._value = self._build()
                self._built = True
        return self._value
