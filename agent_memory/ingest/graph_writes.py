"""A batch's triples: read from its chunks and turns, dated, merged into the graph.

Extraction touches no store, so the job runs it in a thread while the embedder encodes the same
batch (agent_memory/ingest/pipeline.py ``_write``); the merge comes after, once the items are stored. Extraction
is best effort: a text the extractor cannot read loses its own triples, never the batch's.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Callable, Mapping, Sequence

from agent_memory.core.entities import normalize_name
from agent_memory.core.updates import relation_group, said_at, supersede
from agent_memory.index.items import is_tool_turn
from agent_memory.index.triples.base import GENERIC  # the type of a noun phrase that names no entity
from agent_memory.index.triples.prose import kept, plain_prose, prose_of
from agent_memory.index.triples.speaker import fact_subjects, first_person_named, names_in, one_user
from agent_memory.ingest.items import SourceItems
from agent_memory.ingest.report import IngestReport

# Texts handed to the extractor at once: a batch's progress is told after each (``extract_triples``'s
# ``on_read``). Each text's triples are its own (the extractors read each text alone), so slicing changes none;
# 64 keeps spaCy's batching and reports every few seconds on a CPU.
EXTRACT_SLICE_TEXTS = 64


def extract_triples(extractor, units: list[SourceItems], *,
                    speaker_relations: Mapping[str, Sequence[str]] | None = None,
                    on_read: Callable[[int, int], None] | None = None) -> tuple[list, dict[str, int], list[str]]:
    """Triples of the units' chunks and turns, dated; per-source counts; warnings. No store is touched.
    ``on_read(done, total)``: told the texts read so far, of those to read, after each ``EXTRACT_SLICE_TEXTS``.

    ``speaker_relations`` (``Settings.speaker_fact_groups``' functional relations; None: off): a named
    speaker's (or the user's) first person is that speaker (index/triples/speaker.py), and a fact that names the speaker
    only through it is kept when its relation is one of these (lives in, moved to ...). Chat in the first
    person is mostly not about facts ("I love that, Nate!" reads as Joanna loves Nate): only the facts a
    newer statement replaces are worth reading from it."""
    counts: dict[str, int] = {u.source_id: 0 for u in units}
    by_tenant: dict[str, list] = defaultdict(list)
    for unit in units:
        by_tenant[unit.tenant] += facts_read_from(unit)
    triples, warnings = [], []
    total, done = sum(map(len, by_tenant.values())), 0
    for tenant, items in by_tenant.items():
        read = [_extraction_text(item, speaker_relations is not None) for item in items]
        found = []
        for start in range(0, len(items), EXTRACT_SLICE_TEXTS):
            part = slice(start, start + EXTRACT_SLICE_TEXTS)
            found += _extract_slice(extractor, items[part], [text for text, _, _ in read[part]], tenant, warnings)
            done += len(items[part])
            if on_read is not None:
                on_read(done, total)
        for item, (text, speakers, prose_only), item_triples in zip(items, read, found):
            if prose_only:  # its prose alone was read: what of it is code is not a fact either
                item_triples = [t for t in item_triples if kept(t, text)]
            if speakers:
                item_triples = [one_user(t, speakers) for t in item_triples
                                if _kept_speaker_fact(t, speakers, speaker_relations)]
            counts[item.source_id] += len(item_triples)
            when = said_at(item.metadata, item.created_at)  # the turn's or document's date
            for triple in item_triples:
                triple.valid_from = triple.valid_from or when
            triples += item_triples
    return triples, counts, warnings


def facts_read_from(unit: SourceItems) -> list:
    """The items of ``unit`` whose texts are read for triples: its chunks and turns, not its summaries (they
    restate them). What extraction reads and what its progress counts."""
    return [item for item in unit.items if item.kind != "summary"]


def _extract_slice(extractor, items: list, texts: list[str], tenant: str, warnings: list[str]) -> list:
    """The triples of each of ``texts``; a text the extractor cannot read has none, and a warning says so."""
    try:
        return _extract_texts(extractor, items, texts, tenant)
    except Exception:  # noqa: BLE001 - extraction is best effort; the chunks are stored
        # One text the extractor cannot read must not cost the batch its triples: item by
        # item, only the items that fail lose theirs (each text is read on its own anyway).
        found = []
        for item, text in zip(items, texts):
            try:
                found += _extract_texts(extractor, [item], [text], tenant)
            except Exception as exc:  # noqa: BLE001
                warnings.append(f"triple extraction failed for {item.source_id} (item {item.id}): {exc}")
                found.append([])
        return found


def speaker_relations(settings) -> dict | None:
    """The functional relations a speaker's first person is read for (``extract_triples``); None: off."""
    return {g: settings.functional_relations[g] for g in settings.speaker_fact_groups} or None


def _extract_texts(extractor, items: list, texts: list[str], tenant: str) -> list:
    return extractor.extract_many(texts, tenant=tenant, source_ids=[i.source_id for i in items],
                                  item_ids=[i.id for i in items])


def _extraction_text(item, speakers: bool) -> tuple[str, tuple[str, ...], bool]:
    """What the extractor reads, the names it gave the speaker, and whether it is the item's prose alone: a
    turn of a named speaker or of the user with its first person named (index/triples/speaker.py); anything
    else as stored, naming nobody new. A name the turn holds already is not one its first person alone gave.
    Of a tool call and its results, its prose alone; of any other text, all but its code
    (index/triples/prose.py)."""
    tool_turn = is_tool_turn(item)
    text = prose_of(item.text) if tool_turn else plain_prose(item.text)
    prose_only = tool_turn or text != item.text
    names = fact_subjects(item.metadata) if speakers and item.kind == "turn" else None
    if names is None:
        return text, (), prose_only
    named = first_person_named(text, *names)
    if named == text:
        return text, (), prose_only
    return named, tuple(name for name in dict.fromkeys(names) if not names_in(name, text)), prose_only


def _kept_speaker_fact(triple, speakers: tuple[str, ...], relations: Mapping[str, Sequence[str]]) -> bool:
    """A fact that names the speaker only through their first person is kept when its relation is one of
    ``relations`` and its other side is a name (a place, a company), not a common noun: chat's "I live in
    the city" or "I moved into a small apartment" says no new home, and would otherwise supersede the
    Munich the speaker named before. A fact that does not name the speaker is kept as any other."""
    keys = {normalize_name(speaker) for speaker in speakers}
    if normalize_name(triple.subject) in keys:
        other = triple.object_type
    elif normalize_name(triple.object) in keys:
        other = triple.subject_type
    else:
        return True
    return relation_group(triple.relation, relations) is not None and other != GENERIC


def merge_triples(services, triples: list, report: IngestReport) -> None:
    """Write ``triples`` to the graph; a newer fact of a functional relation supersedes the older one
    (agent_memory/core/updates.py); other relations are judged by the LLM when one is configured (best
    effort: a failure is a warning)."""
    if not triples:
        return
    services.graph.merge_triples(triples)
    report.triples += len(triples)
    settings = services.settings
    supersede(services.graph, triples, settings.functional_relations, llm=services.llm,
              max_pairs=settings.contradiction_max_pairs, warn=report.warnings.append)


def delete_source_facts(services, tenant: str, source_id: str) -> tuple[int, list[str]]:
    """Delete the source's relations; returns how many and the subjects they were about, whose
    intervals ``rederive`` must compute again once the graph holds what it will hold."""
    subjects = services.graph.source_subjects(tenant, source_id)
    return services.graph.delete_by_source(tenant, source_id), subjects


def rederive(services, tenant: str, subjects) -> int:
    """The subjects' intervals from the facts still stored: a fact that a forgotten or rewritten one had
    superseded is current again (agent_memory/core/updates.py ``validity_changes``)."""
    if not subjects:
        return 0
    return services.graph.update_validity(tenant, sorted(subjects), services.settings.functional_relations)


def write_facts(services, units: list, triples: list, report: IngestReport) -> None:
    """A batch's facts into the graph, each rewritten source's old facts replaced; ``units``: (its items, its
    catalog entry before or None)."""
    rewritten: dict[str, set[str]] = defaultdict(set)  # tenant -> subjects of replaced facts
    for unit, previous in units:
        if previous is not None and previous.n_triples:
            rewritten[unit.tenant].update(delete_source_facts(services, unit.tenant, unit.source_id)[1])
    merge_triples(services, triples, report)
    for tenant, subjects in rewritten.items():
        rederive(services, tenant, subjects)
