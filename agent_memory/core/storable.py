"""What every store can hold, checked where a caller's value enters (``Memory``, the HTTP API, a message's
append), so a bad value is refused naming its field instead of failing deep inside a store.

- NUL (``"\\x00"``): PostgreSQL's ``text`` and ``jsonb`` refuse it (a 500 on that deployment), and an ID
  holding one can never be named again from a command line (argv cannot carry NUL).
- A lone surrogate (``"\\ud800"``): Python parses it from JSON, but UTF-8 cannot encode it.
- Infinity and NaN: no JSON number, and the embedded vector engine's payload conversion fails on one
  with a Rust enum dump.
- In an ID (source or session), any control character: C0 and DEL (a NUL, a newline that would split a
  report line) and C1 (U+0085 is a line break to ``str.splitlines``).
"""

from __future__ import annotations

import math
from typing import Any


def control_character(text: str) -> str | None:
    """The first C0 control character, DEL or C1 control character in ``text``, or None."""
    return next((c for c in text if ord(c) < 32 or 127 <= ord(c) < 160), None)


def text_problem(text: str) -> str | None:
    """Why no store can keep ``text`` as text (a NUL, a lone surrogate), or None."""
    nul = text.find("\x00")
    if nul >= 0:
        return f"holds a NUL character (\\x00) at character {nul}, which cannot be stored as text"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (f"holds a lone surrogate {text[exc.start:exc.end]!r} at character {exc.start}, "
                "which is not valid text")
    return None


def check_text(text: str, where: str) -> str:
    """``text``, or a ValueError naming ``where`` and what it holds."""
    problem = text_problem(text)
    if problem is not None:
        raise ValueError(f"{where} {problem}")
    return text


def number_problem(value: float) -> str | None:
    if isinstance(value, float) and not math.isfinite(value):
        return (f"is {value!r}: Infinity and NaN are not JSON numbers and no store keeps them "
                "(send a finite number, or the value as a string)")
    return None


def check_storable(value: Any, where: str, max_depth: int | None = None) -> None:
    """ValueError naming the first place in ``value`` (a str, number, or lists and dicts of them, nested)
    that no store can hold: a string or a key with a NUL or a lone surrogate, a non-finite float, or,
    with ``max_depth``, nesting deeper than that (a later json.dumps would raise RecursionError).
    The place is named like ``metadata['tags'][2]``. Iterative: a deep value exhausts no stack."""
    stack: list[tuple[Any, str, int]] = [(value, where, 0)]
    while stack:
        item, at, depth = stack.pop()
        if isinstance(item, str):
            check_text(item, at)
        elif isinstance(item, float):
            problem = number_problem(item)
            if problem is not None:
                raise ValueError(f"{at} {problem}")
        elif isinstance(item, (dict, list, tuple)):
            if max_depth is not None and depth >= max_depth:
                raise ValueError(f"{where} is nested deeper than {max_depth} levels")
            if isinstance(item, dict):
                for key in item:
                    if isinstance(key, str):
                        check_text(key, f"{at}: the key {key!r}")
                children = [(inner, f"{at}[{key!r}]") for key, inner in item.items()]
            else:
                children = [(inner, f"{at}[{n}]") for n, inner in enumerate(item)]
            # Reversed onto the stack: the first bad value in reading order is the one named.
            stack.extend((inner, path, depth + 1) for inner, path in reversed(children))
