"""How a session's messages are named and found once archived in long-term memory: ``<tenant>/<session id>``
keys the session, ``<session id>/m<seq>`` the turn its message ``seq`` becomes (``working_memory.py`` archives
them; forget, check, export and import find them by these names), and the catalog's reads of those turns."""

from __future__ import annotations

import re

from agent_memory.core.records import MemoryItem

# The limit of ``catalog.recent_turns`` that reads every stored turn of a session.
ALL_TURNS = 1_000_000


def numbered_turns(catalog, tenant: str, session_id: str) -> tuple[int, dict[str, int]]:
    """The session's stored turns, in one read of the catalog: the position after its last one (0: none),
    and each ``<session id>/m<n>`` source ID among them with its n (archived turns, and turns of
    ``Memory.add_turns`` named so)."""
    stored = catalog.recent_turns(tenant, session_id, ALL_TURNS)
    after = max((e.seq + 1 for e in stored if e.seq is not None), default=0)
    numbered = {e.source_id: turn_seq(session_id, e.source_id) for e in stored}
    return after, {sid: seq for sid, seq in numbered.items() if seq is not None}


def catalog_recent_turns(services, tenant: str, session_id: str, n: int) -> list[MemoryItem]:
    """The last ``n`` ingested turns of a transcript session, oldest first."""
    ids = [i for e in services.catalog.recent_turns(tenant, session_id, n) for i in e.item_ids]
    found = {i.id: i for i in services.vectors.get(ids)} if ids else {}
    return [found[i] for i in ids if i in found]


def session_key(tenant: str, session_id: str) -> str:
    return f"{tenant}/{session_id}"


def turn_source_id(session_id: str, seq: int) -> str:
    """The source ID long-term memory holds the session's message ``seq`` under, once archived."""
    return f"{session_id}/m{seq}"


def turn_seq(session_id: str, source_id: str) -> int | None:
    """The message position ``source_id`` names as a turn of ``session_id`` (``<session id>/m<n>``), or None."""
    match = re.fullmatch(re.escape(session_id) + r"/m(\d+)", source_id)
    return int(match.group(1)) if match else None


def split_key(key: str, default_tenant: str) -> tuple[str, str]:
    tenant, sep, session_id = key.partition("/")
    return (tenant, session_id) if sep else (default_tenant, key)
