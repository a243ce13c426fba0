"""The facts of archived tool turns read again from their stored text, as this version reads them.

Versions before the graph read a tool turn's prose alone (index/triples/prose.py) read its payloads whole: on an
agent's coding loop 4,000 and more facts of code, JSON keys and pieces of paths, kept until each turn was written
again, which for a session's archived turn is never. The data dir records which reading its graph holds
(``index-format.json``'s ``tool_turn_facts``, stores/index_format.py ``STORED_FACTS``); ``agent-memory reindex``
calls :func:`reread_tool_turn_facts` when it records none or an older one, and so does ``agent-memory check --repair``
(ingest/stored_readings.py; a check without it names the way out). Only the sources holding a tool turn
and some facts are read again: each one's facts are replaced by what the configured extractor reads of it now
(none with ``triple_extractor`` "none", as a write of it would leave), and the intervals of the subjects they
were about derived again (graph_writes.rederive). Every other fact stays as it was written; the text, vectors
and catalog entries stay too, but for each re-read source's count of facts.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

from agent_memory.core.records import MemoryItem, SearchFilter
from agent_memory.index.items import is_tool_turn
from agent_memory.ingest.graph_writes import (
    delete_source_facts,
    extract_triples,
    merge_triples,
    rederive,
    speaker_relations,
)
from agent_memory.ingest.items import SourceItems
from agent_memory.ingest.removal import batches
from agent_memory.ingest.report import IngestReport

# Sources read again at once: their old facts removed, the new ones merged, their subjects re-derived.
SOURCE_BATCH = 128


def reread_tool_turn_facts(services, extractor) -> dict[str, int]:
    """Every tenant's tool-turn sources that hold facts, read again with ``extractor`` (None: no extractor
    configured, so none are read). Returns how many sources were read and their facts before and after."""
    out = {"sources": 0, "triples_before": 0, "triples_after": 0}
    for tenant in sorted(services.vectors.tenants()):
        held = services.graph.fact_sources(tenant).get(tenant, {})
        if not held:
            continue
        turns: dict[str, list[MemoryItem]] = defaultdict(list)
        for item in services.vectors.scroll(SearchFilter(tenant=tenant, kinds=["turn"])):
            if item.source_id in held:
                turns[item.source_id].append(item)
        sources = sorted(sid for sid, items in turns.items() if any(is_tool_turn(i) for i in items))
        for batch in batches(sources, SOURCE_BATCH):
            units = [SourceItems(tenant, sid, "turn", "", items=sorted(turns[sid], key=lambda i: (i.chunk_index, i.start, i.id)))
                     for sid in batch]
            triples, counts = _read(services, extractor, units)
            _replace_facts(services, tenant, units, triples, counts)
            out["sources"] += len(batch)
            out["triples_before"] += sum(held[sid] for sid in batch)
            out["triples_after"] += len(triples)
    return out


def _read(services, extractor, units: list[SourceItems]) -> tuple[list, dict[str, int]]:
    if extractor is None:
        return [], {unit.source_id: 0 for unit in units}
    triples, counts, _ = extract_triples(extractor, units, speaker_relations=speaker_relations(services.settings))
    return triples, counts


def _replace_facts(services, tenant: str, units: list[SourceItems], triples: list, counts: dict[str, int]) -> None:
    """The units' old facts out and ``triples`` in, as a source written again (graph_writes.write_facts); each
    catalog entry's count of facts is what it gave now."""
    subjects: set[str] = set()
    for unit in units:
        subjects.update(delete_source_facts(services, tenant, unit.source_id)[1])
    merge_triples(services, triples, IngestReport())
    rederive(services, tenant, subjects)
    entries = services.catalog.get_many(tenant, [unit.source_id for unit in units])
    services.catalog.put_many([replace(e, n_triples=counts.get(sid, 0)) for sid, e in entries.items()])

