"""Knowledge updates: when a newer fact replaces an older one, and when things were said.

"Maria moved to Berlin" (January) and "Maria moved to Lisbon" (June) are both true in their
time. For a *functional* relation (one current object per subject: lives in, works at,
prefers, owns, status, role, price ...) the older fact is marked superseded with the
interval it was valid, never deleted: a question about the past still finds it. The
relations that count as functional, grouped so that "moved to" replaces "lives in", are
a rule list in settings (``functional_relations``); the defaults are below.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from dateutil import parser

FUNCTIONAL_RELATIONS: dict[str, list[str]] = {
    "residence": ["live in", "live at", "move to", "relocate to", "reside in", "settle in", "base in",
                  "move into", "home in"],
    "employer": ["work at", "work for", "join", "employ by", "hire by", "employer"],
    "preference": ["prefer", "favorite", "favourite"],
    "owner": ["own"],
    "status": ["status", "status of", "be status"],
    "role": ["role", "role of", "title", "position"],
    "price": ["price", "price of", "cost", "priced at"],
}

def _norm(relation: str) -> str:
    return " ".join(relation.lower().replace("_", " ").replace("-", " ").split())


def _forms(verb: str) -> set[str]:
    """A verb's inflections ("move": moves, moved, moving), since LLM extractors do not lemmatize."""
    forms = {verb, verb + "s", verb + "es"}
    if verb.endswith("e"):
        forms |= {verb + "d", verb[:-1] + "ing"}
    elif verb.endswith("y"):
        forms |= {verb[:-1] + "ies", verb[:-1] + "ied", verb + "ing"}
    else:
        forms |= {verb + "ed", verb + "ing"}
    return forms


@functools.lru_cache(maxsize=64)
def _index(functional: tuple[tuple[str, tuple[str, ...]], ...]) -> dict[str, str]:
    index: dict[str, str] = {}
    for group, names in functional:
        for name in names:
            head, *rest = _norm(name).split() or [""]
            for form in _forms(head):
                index.setdefault(" ".join([form, *rest]), group)
    return index


def relation_group(relation: str, functional: Mapping[str, Sequence[str]]) -> str | None:
    """The functional group a relation belongs to, or None (not functional: facts accumulate)."""
    key = tuple((g, tuple(names)) for g, names in functional.items())
    return _index(key).get(_norm(relation))


def validity_changes(rows: list[dict[str, Any]], functional: Mapping[str, Sequence[str]]) -> list[dict[str, Any]]:
    """From a subject's relations (graph rows with key, subject_key, relation, object_key, valid_from,
    valid_to, superseded_by), the rows whose interval must change.

    Per (subject, functional group), facts in time order: each one is valid until the first
    later fact with another object (a repeated statement of the same object does not end it);
    the newest is current. Undated facts take no part. Idempotent and order-independent:
    ingesting the June fact before the January one gives the same intervals.
    """
    chains: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        group = relation_group(row.get("relation") or "", functional)
        if group is not None and row.get("valid_from"):
            chains[(row["subject_key"], group)].append(row)
    changes = []
    for chain in chains.values():
        chain.sort(key=lambda r: (r["valid_from"], r["key"]))
        for i, row in enumerate(chain):
            later = next((r for r in chain[i + 1:] if r["valid_from"] > row["valid_from"]
                          and r["object_key"] != row["object_key"]), None)
            valid_to, by = (later["valid_from"], later["key"]) if later else ("", "")
            if (row.get("valid_to") or "") != valid_to or (row.get("superseded_by") or "") != by:
                changes.append({"subject_key": row["subject_key"], "key": row["key"], "valid_to": valid_to,
                                "superseded_by": by})
    return changes


def iso_stamp(stamp: str) -> str:
    """A stamp as written in a transcript or a document's metadata ("1:56 pm on 8 May, 2023",
    "2023/05/08 (Mon) 13:56", ISO) as an ISO datetime, so stamps compare as strings; '' if none."""
    if not stamp or not str(stamp).strip():
        return ""
    text = re.sub(r"\((Mon|Tue|Wed|Thu|Fri|Sat|Sun)\w*\)", " ", str(stamp)).replace(" on ", " ")
    try:
        when = parser.parse(text, fuzzy=True)
    except (ValueError, OverflowError):
        return ""
    if when.tzinfo is not None:
        when = when.astimezone(timezone.utc).replace(tzinfo=None)
    return when.isoformat(timespec="seconds")


DATE_KEYS = ("timestamp", "date", "valid_from", "created", "published")


def said_at(metadata: Mapping[str, Any], created_at: float | None = None) -> str:
    """When an item was said or became true: its turn's or document's date, else when it was stored."""
    for key in DATE_KEYS:
        found = iso_stamp(str(metadata.get(key) or ""))
        if found:
            return found
    if created_at:
        return datetime.fromtimestamp(created_at, timezone.utc).replace(tzinfo=None).isoformat(timespec="seconds")
    return ""


def supersede(graph, triples, functional: Mapping[str, Sequence[str]]) -> int:
    """After a merge: re-derive the intervals of the subjects whose new facts are functional."""
    subjects: dict[str, set[str]] = defaultdict(set)
    for t in triples:
        if t.valid_from and relation_group(t.relation, functional) is not None:
            subjects[t.tenant].add(t.subject)
    return sum(graph.update_validity(tenant, sorted(names), functional) for tenant, names in subjects.items())
