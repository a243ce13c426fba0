"""The rules for the names callers give to what they own: tenants and session IDs. One rule per kind of
name, checked where a caller's value enters on every surface (Python, the HTTP API's key settings and
paths, the CLI's and MCP's ``--tenant``, a LangGraph namespace), so a name one surface takes every other
takes too.

Both are parts of keys and source IDs (a session is ``<tenant>/<session id>`` in the session store, its
archived turns ``<session id>/m<seq>``), so neither may hold ``/`` or a control character (C0, DEL, C1:
``core/storable.control_character``), and both are at most ``MAX_NAME_CHARS`` characters, the HTTP API's
cap on a session ID. A tenant name is also never blank nor surrounded by whitespace: ``"acme "`` would be
another tenant than ``"acme"`` that no one can tell apart in a listing.
"""

from __future__ import annotations

from typing import Callable

from agent_memory.core.errors import ConfigError
from agent_memory.core.storable import control_character

MAX_NAME_CHARS = 256

TENANT_RULE = (f"tenant names are non-blank strings of at most {MAX_NAME_CHARS} characters, without '/', "
               "control characters or whitespace around them")
SESSION_ID_RULE = (f"session IDs are non-blank strings of at most {MAX_NAME_CHARS} characters, without '/' or "
                   "control characters")
# SESSION_ID_RULE as a regular expression (its length aside), for a schema: one character neither blank nor
# refused, among characters that are not refused (C0, DEL, C1: storable.control_character).
_SESSION_ID_CHAR = r"[^/\x00-\x1f\x7f-\x9f]"
SESSION_ID_PATTERN = rf"^{_SESSION_ID_CHAR}*[^/\s\x00-\x1f\x7f-\x9f]{_SESSION_ID_CHAR}*$"


def _problem(name: str) -> str | None:
    if not name.strip():
        return "is blank"
    if len(name) > MAX_NAME_CHARS:
        return f"has {len(name)} characters"
    if "/" in name:
        return "holds '/'"
    bad = control_character(name)
    if bad is not None:
        return f"holds a control character ({bad!r})"
    return None


def tenant_problem(tenant: str) -> str | None:
    """Why ``tenant`` (a str) is no tenant name (``TENANT_RULE``), or None."""
    problem = _problem(tenant)
    if problem is None and tenant != tenant.strip():
        return "has whitespace around it"
    return problem


def tenant_named(tenant: str, held: Callable[[str], bool] | None = None) -> str:
    """``tenant`` if it is a tenant name, else a ConfigError naming the rule and the problem. ``held``: whether the
    data dir holds data under a name; a name the rule refuses that does is taken all the same, so a tenant stored
    before the rule stays readable and forgettable."""
    problem = tenant_problem(tenant)
    if problem is None or (tenant and held is not None and held(tenant)):
        return tenant
    raise ConfigError(refusal(TENANT_RULE, tenant, problem))


def session_id_problem(session_id: str) -> str | None:
    """Why ``session_id`` (a str) is no session ID (``SESSION_ID_RULE``), or None."""
    return _problem(session_id)


def refusal(rule: str, name: str, problem: str) -> str:
    """The words of a refused name: the rule, the name given (its first 80 characters: a 10,000-character name
    is not echoed whole) and what is wrong with it."""
    return f"{rule}; got {name[:80]!r}{'...' if len(name) > 80 else ''} ({problem})"
