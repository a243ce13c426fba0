"""Filters on an item's own metadata keys, beyond tenant, source, kind and time.

A spec maps a metadata key to a condition::

    {"team": "ops"}                       equality
    {"lang": ["en", "de"]}                membership
    {"version": {"gte": 2}}               numeric range (gte / lte, inclusive; both may be given)

The vector stores turn it into payload conditions on ``metadata.<key>`` (so every store-backed
route filters in the store); ``matches`` applies the same spec in Python to items a route
reached without a store query (graph, neighbours). Bad specs raise ValueError naming the value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]{0,63}$")
_RANGE_OPS = {"gte", "lte"}

Condition = tuple[str, str, Any, Any]  # (kind: eq | in | range, payload key, value or low, high)


def conditions(spec: Mapping[str, Any] | None) -> list[Condition]:
    """Validated conditions, keys prefixed ``metadata.`` (the payload's nesting)."""
    out: list[Condition] = []
    for key, cond in (spec or {}).items():
        if not isinstance(key, str) or not _KEY.match(key):
            raise ValueError(f"metadata filter keys are identifiers (letters, digits, _ and -), got {key!r}")
        path = f"metadata.{key}"
        if isinstance(cond, Mapping):
            unknown = set(cond) - _RANGE_OPS
            if unknown or not cond:
                raise ValueError(f"metadata range for {key!r} takes 'gte' and/or 'lte', got {dict(cond)!r}")
            low, high = cond.get("gte"), cond.get("lte")
            for bound in (low, high):
                if bound is not None and (isinstance(bound, bool) or not isinstance(bound, (int, float))):
                    raise ValueError(f"metadata range bounds for {key!r} must be numbers, got {bound!r}")
            out.append(("range", path, low, high))
        elif isinstance(cond, list):
            if not cond or not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in cond):
                raise ValueError(f"metadata membership for {key!r} needs a list of strings or integers, got {cond!r}")
            out.append(("in", path, list(cond), None))
        elif isinstance(cond, (str, int, bool)):
            out.append(("eq", path, cond, None))
        elif isinstance(cond, float):
            out.append(("range", path, cond, cond))
        else:
            raise ValueError(f"metadata filter for {key!r} must be a value, a list or a range, got {cond!r}")
    return out


def matches(metadata: Mapping[str, Any], spec: Mapping[str, Any] | None) -> bool:
    for kind, path, value, high in conditions(spec):
        found = metadata.get(path.split(".", 1)[1])
        if kind == "eq" and found != value:
            return False
        if kind == "in" and found not in value:
            return False
        if kind == "range":
            if isinstance(found, bool) or not isinstance(found, (int, float)):
                return False
            if (value is not None and found < value) or (high is not None and found > high):
                return False
    return True
