"""Knowledge updates: when a newer fact replaces an older one, and when things were said.

"Maria moved to Berlin" (January) and "Maria moved to Lisbon" (June) are both true in their
time. For a *functional* relation (one current object per subject: lives in, works at,
prefers, owns, status, role, price ...) the older fact is marked superseded with the
interval it was valid, never deleted: a question about the past still finds it. The
relations that count as functional, grouped so that "moved to" replaces "lives in", are
a rule list in settings (``functional_relations``); the defaults are below.

With an LLM configured, a new dated fact whose relation the rules do not know as functional
("drives a Tesla" after "drives a Volvo") is paired with the subject's older current facts of
such relations, and one batched call judges whether the newer replaces the older
(``judge_replacements``, at most ``contradiction_max_pairs`` pairs per ingestion batch). A yes
marks the older superseded as the rules do. Best effort: a failing or unusable answer leaves the
rules' result and a warning. The rules own the functional relations, the LLM only the rest, so
the two never rewrite each other's intervals.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from dateutil import parser

from agent_memory.core.entities import normalize_name
from agent_memory.core.errors import LLMError
from agent_memory.core.prompt_data import DATA_RULE, data_block, data_inline

log = logging.getLogger(__name__)

# The Chinese verbs are the relations the rule-based Chinese extractor writes (agent_memory/index/triples/
# chinese.py names a triple by its verb as jieba cuts it: 小王住在北京 → 住, 小王搬到上海了 → 搬到), so that
# 我搬到上海了 replaces 我住在北京 as "moved to" replaces "lives in".
FUNCTIONAL_RELATIONS: dict[str, list[str]] = {
    "residence": ["live in", "live at", "move to", "relocate to", "reside in", "settle in", "base in",
                  "move into", "home in",
                  "住", "住在", "居住", "居住在", "搬到", "搬去", "搬往", "搬进", "迁到", "迁居", "迁往", "定居",
                  "定居在"],
    "employer": ["work at", "work for", "join", "employ by", "hire by", "employer",
                 "加入", "就职", "就职于", "任职", "任职于", "入职", "受雇于"],
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


def _subject(row: Mapping[str, Any]) -> str:
    """Whom a fact is about: the subject's name, not its entity key. The key holds the entity type, and the
    tagger may type one name differently sentence by sentence ("Maria lives in Berlin": NORP, "Maria moved
    to Paris": ORG); a subject's facts are fetched by name (``subject_facts``), so they are chained by it."""
    return normalize_name(row.get("subject") or "") or row["subject_key"]


def _object(row: Mapping[str, Any]) -> str:
    """The fact's object by name, for the same reason: Paris typed twice is one city, not a move."""
    return normalize_name(row.get("object") or "") or row["object_key"]


def validity_changes(rows: list[dict[str, Any]], functional: Mapping[str, Sequence[str]]) -> list[dict[str, Any]]:
    """From a subject's relations (graph rows with key, subject_key, relation, object_key, valid_from,
    valid_to, superseded_by), the rows whose interval must change.

    Per (subject name, functional group), facts in time order: each one is valid until the first
    later fact with another object (a repeated statement of the same object does not end it);
    the newest is current. Undated facts take no part. Idempotent and order-independent:
    ingesting the June fact before the January one gives the same intervals.

    Any other fact marked replaced by a fact that is no longer there (its source forgotten or
    re-written; an LLM's judgement, ``judge_contradictions``) is current again: a mark never
    outlives the fact that made it.
    """
    chains: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        group = relation_group(row.get("relation") or "", functional)
        if group is not None and row.get("valid_from"):
            chains[(_subject(row), group)].append(row)
    changes = []
    chained = {row["key"] for chain in chains.values() for row in chain}
    present = {row["key"] for row in rows}
    for row in rows:
        if row["key"] not in chained and (row.get("superseded_by") or "") and row["superseded_by"] not in present:
            changes.append({"subject_key": row["subject_key"], "key": row["key"], "valid_to": "", "superseded_by": ""})
    for chain in chains.values():
        chain.sort(key=lambda r: (r["valid_from"], r["key"]))
        for i, row in enumerate(chain):
            later = next((r for r in chain[i + 1:] if r["valid_from"] > row["valid_from"]
                          and _object(r) != _object(row)), None)
            valid_to, by = (later["valid_from"], later["key"]) if later else ("", "")
            if (row.get("valid_to") or "") != valid_to or (row.get("superseded_by") or "") != by:
                changes.append({"subject_key": row["subject_key"], "key": row["key"], "valid_to": valid_to,
                                "superseded_by": by})
    return changes


_WEEKDAY_TAG = re.compile(r"\((Mon|Tue|Wed|Thu|Fri|Sat|Sun)\w*\)", re.IGNORECASE)
# Two defaults a year apart: what a text does not say comes from the default, so a text whose year
# moves with it named no year.
_DEFAULTS = (datetime(2000, 1, 1), datetime(2001, 1, 1))


def parse_dated(stamp: str) -> datetime | None:
    """A stamp as written in a transcript, a document's metadata or a question's date ("1:56 pm on 8 May,
    2023", "2023/05/08 (Mon) 13:56", ISO) as a datetime (its offset kept); None when it names no year.

    The parse is fuzzy, since transcripts wrap their dates in words, and a fuzzy parse fills what the text
    lacks from its default, today unless told: "version 3" was the 3rd of this month, "Tuesday" this week's.
    A date must name its year; a month or day it omits is the first, never today's."""
    if not isinstance(stamp, str) or not stamp.strip():
        return None
    text = _WEEKDAY_TAG.sub(" ", stamp).replace(" on ", " ")
    try:
        first, second = (parser.parse(text, fuzzy=True, default=default) for default in _DEFAULTS)
    except (ValueError, OverflowError):
        return None
    return first if first.year == second.year else None


def iso_stamp(stamp: str) -> str:
    """A stamp as written in a transcript or a document's metadata ("1:56 pm on 8 May, 2023",
    "2023/05/08 (Mon) 13:56", ISO) as an ISO datetime in UTC, so stamps compare as strings; '' if none
    (``parse_dated``: a text that names no year is none)."""
    when = parse_dated(str(stamp)) if stamp else None
    if when is None:
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


def supersede(graph, triples, functional: Mapping[str, Sequence[str]], *, llm=None, max_pairs: int = 0,
              warn: Callable[[str], None] | None = None) -> int:
    """After a merge: re-derive the intervals of the subjects whose new facts are functional; with an
    ``llm``, judge the new facts of other relations against the subject's older ones (at most
    ``max_pairs`` pairs, one call). Returns how many relations changed."""
    subjects: dict[str, set[str]] = defaultdict(set)
    for t in triples:
        if t.valid_from and relation_group(t.relation, functional) is not None:
            subjects[t.tenant].add(t.subject)
    changed = sum(graph.update_validity(tenant, sorted(names), functional) for tenant, names in subjects.items())
    if llm is not None and max_pairs > 0:
        changed += judge_contradictions(graph, triples, functional, llm, max_pairs, warn)
    return changed


# ---- contradictions the rules do not know: judged by an LLM -----------------------------------------

JUDGE_PROMPT = (
    "Each numbered pair holds an older and a newer fact about the same subject, with the day each was "
    "stated. Decide for each pair whether the newer fact replaces the older one: the older is no longer true "
    "(the subject changed, moved, switched, gave it up, or a value was corrected). Facts that can both be true "
    "at once do not replace each other. Answer with JSON only: "
    '{"replaced": [the numbers of the pairs where the newer fact replaces the older]}. ' + DATA_RULE)


def contradiction_pairs(rows: list[dict[str, Any]], new_sources: set[str], functional: Mapping[str, Sequence[str]],
                        limit: int) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(older, newer) pairs of one subject's dated facts of relations the rules do not know as functional:
    the newer from a source just ingested, the older current (not superseded), said earlier, with another
    object. Newest facts first; the same relation before others; at most ``limit``."""
    by_subject: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        if row.get("valid_from") and relation_group(row.get("relation") or "", functional) is None:
            by_subject[_subject(row)].append(row)
    candidates = []
    for facts in by_subject.values():
        for new in (r for r in facts if r.get("source_id") in new_sources):
            for old in facts:
                if (not old.get("valid_to") and old["valid_from"] < new["valid_from"]
                        and _object(old) != _object(new)):
                    same = _norm(old["relation"]) == _norm(new["relation"])
                    candidates.append(((new["valid_from"], same, old["valid_from"]), old, new))
    candidates.sort(key=lambda c: (c[0], c[1]["key"], c[2]["key"]), reverse=True)
    return [(old, new) for _, old, new in candidates[:limit]]


def _day(stamp: str) -> str:
    return (stamp or "?")[:10]


def _fact(row: Mapping[str, Any]) -> str:
    return (f"({data_inline(_day(row['valid_from']))}): {data_inline(str(row['subject']))} | "
            f"{data_inline(str(row['relation']))} | {data_inline(str(row['object']))}")


def judge_replacements(llm, pairs: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> list[bool]:
    """One LLM call: for each (older, newer) pair, does the newer fact replace the older? Raises
    LLMError when the call fails or the answer is not the JSON asked for."""
    # The facts were extracted from stored documents: each field kept inside its line (a line break in an
    # object cannot start a forged pair or heading), and the list fenced as data.
    lines = []
    for number, (old, new) in enumerate(pairs, start=1):
        lines.append(f"{number}. older {_fact(old)}\n   newer {_fact(new)}")
    reply = llm.complete([{"role": "system", "content": JUDGE_PROMPT},
                          {"role": "user", "content": data_block("\n".join(lines))}], max_tokens=32 + 6 * len(pairs))
    text = reply.text
    start, stop = text.find("{"), text.rfind("}")
    try:
        replaced = json.loads(text[start:stop + 1])["replaced"] if 0 <= start < stop else None
    except (ValueError, KeyError, TypeError):
        replaced = None
    if not isinstance(replaced, list) or not all(isinstance(n, int) and not isinstance(n, bool) for n in replaced):
        raise LLMError(f"contradiction judge answered {text[:200]!r}, not {{\"replaced\": [pair numbers]}}")
    chosen = set(replaced)
    return [number in chosen for number in range(1, len(pairs) + 1)]


def judge_contradictions(graph, triples, functional: Mapping[str, Sequence[str]], llm, max_pairs: int,
                         warn: Callable[[str], None] | None = None) -> int:
    """The LLM's part of :func:`supersede`; returns how many older facts it marked superseded."""
    subjects: dict[str, set[str]] = defaultdict(set)
    sources: dict[str, set[str]] = defaultdict(set)
    for t in triples:
        if t.valid_from and relation_group(t.relation, functional) is None:
            subjects[t.tenant].add(t.subject)
            sources[t.tenant].add(t.source_id)
    pairs: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    for tenant in sorted(subjects):
        if len(pairs) >= max_pairs:
            break
        rows = graph.subject_facts(tenant, sorted(subjects[tenant]))
        pairs += [(tenant, old, new) for old, new in
                  contradiction_pairs(rows, sources[tenant], functional, max_pairs - len(pairs))]
    if not pairs:
        return 0
    try:
        verdicts = judge_replacements(llm, [(old, new) for _, old, new in pairs])
    except LLMError as exc:
        message = f"LLM contradiction judging of {len(pairs)} fact pairs failed; the rules' result stands: {exc}"
        log.warning(message)
        if warn is not None:
            warn(message)
        return 0
    # An older fact replaced by several newer ones is valid until the first of them.
    first: dict[tuple[str, str], tuple[dict[str, Any], dict[str, Any]]] = {}
    for (tenant, old, new), yes in zip(pairs, verdicts):
        known = first.get((tenant, old["key"]))
        if yes and (known is None or new["valid_from"] < known[1]["valid_from"]):
            first[(tenant, old["key"])] = (old, new)
    changes: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for (tenant, _), (old, new) in first.items():
        changes[tenant].append({"subject_key": old["subject_key"], "key": old["key"], "valid_to": new["valid_from"],
                                "superseded_by": new["key"]})
    return sum(graph.mark_superseded(tenant, rows) for tenant, rows in changes.items())
