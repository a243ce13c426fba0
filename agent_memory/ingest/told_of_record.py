"""Whom stored turns tell of, read for a data dir written before turns carried that record (index/told_of.py).

A turn stored by an earlier version carries no ``told_of``, so a question in the first person ranks what the user
told of others there as it did before (agent_memory/retrieval/rerank/signals.py ``tells_of_others``). The data dir
records whether its turns carry it (``index-format.json``'s ``told_of``, stores/index_format.py ``STORED_FACTS``);
``agent-memory reindex`` and ``agent-memory check --repair`` call :func:`record_told_of` when it records none
(ingest/stored_readings.py). Each stored turn's text is read again by the configured extractor, for whom its
facts are about only: the graph, the text and the vectors stay as they are.
"""

from __future__ import annotations

from agent_memory.core.records import SearchFilter
from agent_memory.index.told_of import TOLD_OF, people_told_of
from agent_memory.ingest.graph_writes import extract_triples, speaker_relations
from agent_memory.ingest.items import SourceItems

# Turns read at once: one extraction call and one metadata update each.
TURN_BATCH = 256


def record_told_of(services, extractor) -> dict[str, int]:
    """Every tenant's stored turns read for whom they tell of (``extractor`` None: none configured, so none are
    read); the record written to those that tell of someone. Returns the turns read and those that tell of someone."""
    out = {"turns": 0, "told_of": 0}
    if extractor is None:
        return out
    relations = speaker_relations(services.settings)
    for tenant in sorted(services.vectors.tenants()):
        turns = list(services.vectors.scroll(SearchFilter(tenant=tenant, kinds=["turn"])))
        for start in range(0, len(turns), TURN_BATCH):
            batch = turns[start:start + TURN_BATCH]
            units = [SourceItems(tenant, turn.source_id, "turn", "", items=[turn]) for turn in batch]
            triples, _, _ = extract_triples(extractor, units, speaker_relations=relations)
            told = people_told_of(batch, triples)
            if told:
                services.vectors.update_metadata({item_id: {TOLD_OF: names} for item_id, names in told.items()})
            out["turns"] += len(batch)
            out["told_of"] += len(told)
    return out

