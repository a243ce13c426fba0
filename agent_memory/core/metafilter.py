"""Filters on an item's own metadata keys, beyond tenant, source, kind and time.

A spec maps a metadata key to a condition::

    {"team": "ops"}                       equality
    {"lang": ["en", "de"]}                membership
    {"version": {"gte": 2}}               numeric range (gte / lte, inclusive; both may be given)
    {"published": {"gte": "2024-03-01", "lte": "2024-06-30"}}
                                          date range: ISO dates or datetimes as bounds

The vector stores turn it into payload conditions on ``metadata.<key>`` (so every store-backed
route filters in the store); ``matches`` applies the same spec in Python to items a route
reached without a store query (graph, neighbours). Bad specs raise ValueError naming the value.

Date ranges compare the stored value as a datetime (Qdrant's ``DatetimeRange``, which both the Edge
shard and qdrant-client's local mode evaluate: no companion key is stored, so documents ingested
before this existed filter too). Bounds are normalized to UTC RFC 3339; a date alone as ``gte``
is the start of that day, as ``lte`` its end (``"lte": "2024-06-30"`` keeps June 30th's afternoon).
A stored value without an offset, or a date alone, counts as UTC, as Qdrant reads it. A stored
value that is not an ISO date or datetime (a number, free text) never falls inside a date range.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import datetime, time, timezone
from typing import Any

_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]{0,63}$")
_RANGE_OPS = {"gte", "lte"}

Condition = tuple[str, str, Any, Any]  # (kind: eq | in | range | dates, payload key, value or low, high)
_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_BOUND_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def parse_when(value: Any) -> datetime | None:
    """An ISO date or datetime string as an aware UTC datetime (no offset: UTC); None if it is not one."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        when = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    return when.replace(tzinfo=timezone.utc) if when.tzinfo is None else when.astimezone(timezone.utc)


def _date_bound(key: str, bound: str, op: str) -> str:
    when = parse_when(bound)
    if when is None:
        raise ValueError(f"metadata range bound {op!r} for {key!r} must be a number or an ISO date or datetime "
                         f"(2024-03-01, 2024-03-01T09:30:00Z), got {bound!r}")
    if op == "lte" and _DATE_ONLY.match(bound.strip()):
        # A day as an upper bound means the whole day, not its first instant.
        when = datetime.combine(when.date(), time.max, timezone.utc)
    return when.strftime(_BOUND_FORMAT)


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
            given = [b for b in (low, high) if b is not None]
            if given and all(isinstance(b, str) for b in given):
                out.append(("dates", path, None if low is None else _date_bound(key, low, "gte"),
                            None if high is None else _date_bound(key, high, "lte")))
                continue
            for op, bound in (("gte", low), ("lte", high)):
                if isinstance(bound, str) and parse_when(bound) is None:
                    _date_bound(key, bound, op)  # raises, naming the value that is no date
                if bound is not None and (isinstance(bound, bool) or not isinstance(bound, (int, float))
                                          or not math.isfinite(bound)):  # NaN panics the vector engine
                    raise ValueError(f"metadata range bounds for {key!r} must be both finite numbers or both ISO "
                                     f"dates, got {bound!r} in {dict(cond)!r}")
            out.append(("range", path, low, high))
        elif isinstance(cond, list):
            if not cond or not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in cond):
                raise ValueError(f"metadata membership for {key!r} needs a list of strings or integers, got {cond!r}")
            out.append(("in", path, list(cond), None))
        elif isinstance(cond, (str, int, bool)):
            out.append(("eq", path, cond, None))
        elif isinstance(cond, float):
            if not math.isfinite(cond):
                raise ValueError(f"metadata filter for {key!r} must be a finite number, got {cond!r}")
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
        if kind == "dates":
            when = parse_when(found)
            if when is None:
                return False
            if (value is not None and when < parse_when(value)) or (high is not None and when > parse_when(high)):
                return False
    return True
