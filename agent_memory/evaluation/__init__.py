"""The evaluation harness: evidence recall inside a bounded prompt (see ../shared/eval/README.md)."""

from __future__ import annotations

import importlib
from typing import Any

# The names are imported from their modules when first used (PEP 562): `agent-memory --help` reads this
# package's arguments.py for the eval command's flags, and need not load the datasets' parsers with it.
_HOMES = {"EvalSet": "datasets", "Evidence": "datasets", "Material": "datasets", "Question": "datasets",
          "detect_format": "datasets", "load_dataset": "datasets", "parse_dataset": "datasets",
          "parse_citations": "metric", "score_question": "metric", "word_coverage": "metric"}

__all__ = list(_HOMES)


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
