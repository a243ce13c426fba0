"""The extractor seam and the small pieces every extractor shares.

An extractor turns one text into :class:`~agent_memory.core.records.Triple` objects with
provenance (tenant, source_id, item_id) and the sentence as evidence. Entities that
take part in no relation are still useful to the graph route, so extractors also
expose ``entities(text)``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Protocol, Sequence, runtime_checkable

from agent_memory.core.entities import normalize_name
from agent_memory.core.records import Triple

# Generic type for anything that is not a recognised named entity.
GENERIC = "entity"

# spaCy/OntoNotes labels folded into the few types the graph cares about.
_LABEL_MAP = {
    "DATE": "DATE",
    "TIME": "DATE",
    "CARDINAL": "NUMBER",
    "QUANTITY": "NUMBER",
    "PERCENT": "NUMBER",
    "MONEY": "NUMBER",
    "ORDINAL": "NUMBER",
    "PRODUCT": "PRODUCT",
}

# Product/model identifiers: letters and digits mixed, optionally hyphenated ("X-200",
# "GPT-4o", "AGG01", "RTX4090"). ASCII-only boundaries so that ids inside Chinese text
# match as well. Decades and ordinals ("1990s", "21st") are not ids.
MODEL_ID = re.compile(
    r"(?<![A-Za-z0-9_-])(?=[A-Za-z0-9-]*[A-Za-z])(?=[A-Za-z0-9-]*\d)[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+(?![A-Za-z0-9_-])"
    r"|(?<![A-Za-z0-9_-])[A-Z][A-Za-z]*\d+[A-Za-z0-9]*(?![A-Za-z0-9_-])"
)
_NOT_MODEL_ID = re.compile(r"^\d+(s|st|nd|rd|th)$", re.IGNORECASE)


def is_model_id(text: str) -> bool:
    text = text.strip()
    return bool(MODEL_ID.fullmatch(text)) and not _NOT_MODEL_ID.match(text)


def map_label(label: str) -> str:
    """spaCy entity label -> graph type (PERSON, ORG, GPE... kept; numbers/dates folded)."""
    if not label:
        return GENERIC
    return _LABEL_MAP.get(label, label)


@dataclass(frozen=True)
class Entity:
    """An entity mention found in text (no relation needed)."""

    name: str
    type: str = GENERIC


@runtime_checkable
class TripleExtractor(Protocol):
    def extract(self, text: str, *, tenant: str, source_id: str, item_id: str) -> list[Triple]: ...


def clean_name(name: str) -> str:
    """Trim whitespace and dangling punctuation a span can pick up ("Apple ,", "(Acme")."""
    name = re.sub(r"\s+", " ", name).strip()
    return name.strip(" ,;:()[]{}\"'“”‘’「」《》（）、，。；：")


# A side that is a number and nothing else: a count, a measure without its unit, an ordinal, a list's marker ("1.",
# "(2)", "3)"). The rules read one as a side whenever a number stands where a noun could ("计划的第1步是模块12" gave
# "1 — is_a → 12"; "Item 3 is 12", "the fifth National Hot Rod Reunion"), and a fact whose side is only a number
# names nothing a question can ask about. A number with its unit or noun is a side as any other ("3 kids", "45
# seconds", "85%"), so is a version ("4.23.5") or a time ("17:15"), and so is a year the extractor read as a date.
_NUMBER_WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
                 "sixteen seventeen eighteen nineteen twenty dozen hundred thousand million billion first second "
                 "third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth")
_ONLY_NUMBER = re.compile(
    r"\(?(?:#|No\.\s?|第)?[-+−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:st|nd|rd|th)?[.)]?"
    r"|(?:" + "|".join(_NUMBER_WORDS.split()) + ")",
    re.IGNORECASE,
)
_YEAR = re.compile(r"\d{4}")


def only_a_number(name: str, type_: str) -> bool:
    """Whether a side named ``name`` (of ``type_``) is only a number, ordinal or list marker (``_ONLY_NUMBER``); a
    year the extractor typed as a date ("founded in 2007") is not."""
    name = name.strip()
    if type_ == "DATE" and _YEAR.fullmatch(name):
        return False
    return bool(_ONLY_NUMBER.fullmatch(name))


def without_number_sides(triples: Iterable[Triple]) -> list[Triple]:
    """``triples`` but those whose subject is only a number (``only_a_number``: no one's fact is about "1"), and
    co-occurrences (``related_to``) with a bare number, which say nothing of what the number counts. A number
    that a relation gives its subject stays ("Caroline — is_a → 25", "Melanie — turn → 40",
    "Wytheville's population — is_a → 8,211"): dropping every number side cost HotpotQA 545 facts, half of them
    real quantities. The rule extractors' filter; an LLM's triples are left as read."""
    return [t for t in triples if not (only_a_number(t.subject, t.subject_type) or (
        t.relation == "related_to" and only_a_number(t.object, t.object_type)))]


def dedupe_triples(triples: Iterable[Triple]) -> list[Triple]:
    """One triple per (normalized subject, relation, normalized object); keep the most confident. None with a
    part that normalizes to nothing (a relation read from a bullet, "•", or an apostrophe): the graph stores would
    skip it, and the source's count of facts would name facts the graph never holds (``check``'s facts_missing)."""
    best: dict[tuple[str, str, str], Triple] = {}
    order: list[tuple[str, str, str]] = []
    for t in triples:
        key = (normalize_name(t.subject), t.relation, normalize_name(t.object))
        if not key[0] or not key[2] or key[0] == key[2] or not normalize_name(t.relation):
            continue
        if key not in best:
            order.append(key)
            best[key] = t
        elif t.confidence > best[key].confidence:
            best[key] = t
    return [best[k] for k in order]


def dedupe_entities(entities: Iterable[Entity]) -> list[Entity]:
    """First mention wins; a typed mention replaces an earlier generic one."""
    seen: dict[str, int] = {}
    out: list[Entity] = []
    for e in entities:
        key = normalize_name(e.name)
        if not key:
            continue
        if key in seen:
            i = seen[key]
            if out[i].type == GENERIC and e.type != GENERIC:
                out[i] = e
            continue
        seen[key] = len(out)
        out.append(e)
    return out


def check_batch(texts: Sequence[str], source_ids: Sequence[str], item_ids: Sequence[str]) -> None:
    """extract_many's inputs run in parallel: one source and item ID per text."""
    if not (len(texts) == len(source_ids) == len(item_ids)):
        raise ValueError(f"texts/source_ids/item_ids lengths differ: {len(texts)}/{len(source_ids)}/{len(item_ids)}")
