"""Re-embed a memory with other embedding settings, from the text the stores hold.

A data dir records the models its vectors were written by (``index-format.json``); a process
whose settings ask for other models is refused (``Services._refuse_other_format``) rather than
mixing two vector spaces. ``agent-memory reindex`` reads every stored item back (all tenants,
all spaces), embeds its text with the models now configured, writes it to the space its text
routes to, records the new layout, and removes the collections the new layout no longer uses
(embedded: with their folders; on a Qdrant server, shared with other processes: emptied). No source
file is read again; IDs, payloads, the catalog and the graph are unchanged.
Each turn's ``context`` vector (the turn read after the one it answers, agent_memory/index/context.py) is
rebuilt with it, so are a long turn's sentence vectors (agent_memory/index/sentences.py), and each item's
keyword terms are stored with it; a data dir written before those
vectors or terms were stored, or with another keyword tokenization (``SPARSE_FORMAT``), is re-indexed
for them alone (its dense vectors come from the embedding cache when it still holds them).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from agent_memory.core.config import Settings
from agent_memory.core.records import MemoryItem, SearchFilter
from agent_memory.core.sparse import SPARSE_FORMAT
from agent_memory.index.context import context_texts_for
from agent_memory.index.items import embedding_text, stamp_terms
from agent_memory.ingest.extraction import make_extractor
from agent_memory.ingest.stored_readings import read_again
from agent_memory.ingest.vectors import point_vectors
from agent_memory.services import (
    STORED_EXTRAS,
    STORED_FACTS,
    Services,
    read_index_format,
    recorded_layout,
    settings_with_layout,
    space_layout,
    write_index_format,
)

log = logging.getLogger(__name__)
BATCH = 256


@dataclass
class ReindexReport:
    before: dict
    after: dict
    items: int = 0
    embeddings_computed: int = 0
    removed_collections: list[str] = field(default_factory=list)  # of models the new layout does not use
    # Tool turns' facts read again (ingest/tool_turn_facts.py): sources, triples before and after; None: not needed.
    tool_turn_facts: dict[str, int] | None = None
    # Whom stored turns tell of read for them (ingest/told_of_record.py): turns read, those that tell of someone.
    told_of: dict[str, int] | None = None

    def to_dict(self) -> dict:
        return {"before": self.before, "after": self.after, "items": self.items,
                "embeddings_computed": self.embeddings_computed, "removed_collections": self.removed_collections,
                "tool_turn_facts": self.tool_turn_facts, "told_of": self.told_of}


def _stored_items(services: Services) -> list[MemoryItem]:
    items: dict[str, MemoryItem] = {}
    # The vectors' own tenants: a tenant the catalog lost (agent-memory check) is moved too, never left behind
    # in the old format under a marker that names the new one.
    for tenant in sorted(services.vectors.tenants()):
        for item in services.vectors.scroll(SearchFilter(tenant=tenant)):
            items[item.id] = item
    return list(items.values())


def _context_texts(services: Services, items: list[MemoryItem]) -> dict[str, str]:
    """Item ID → context text of every stored turn, its previous turn found among ``items``."""
    by_tenant: dict[str, list[MemoryItem]] = {}
    for item in items:
        if item.kind == "turn":
            by_tenant.setdefault(item.tenant, []).append(item)
    out: dict[str, str] = {}
    for tenant, turns in by_tenant.items():
        out.update((i.id, text) for i, text in zip(turns, context_texts_for(services, tenant, turns)))
    return out


def reindex(settings: Settings, everything: bool = False) -> ReindexReport:
    """Move every stored vector to the embedding layout ``settings`` ask for; ``everything``: re-embed
    every item even when the data dir records that layout already (settings it does not record, such
    as the sentence vectors' speakers, changed). A graph that holds tool turns' facts as an earlier version read
    them has those turns read again (``STORED_FACTS``, ingest/tool_turn_facts.py), whatever the vectors need."""
    data_dir = settings.data_dir
    found = read_index_format(data_dir)
    wanted = space_layout(settings).as_dict()
    # A marker of the keyword format alone (the first ones), or one that does not read: its vectors are taken
    # to be the settings' models (opening them checks their dimension); refusing left no way forward.
    old_layout = recorded_layout(found.get("embedding")) or wanted
    report = ReindexReport(before=old_layout, after=wanted)
    extras = {key: version for key, (version, *_) in STORED_EXTRAS.items()}
    facts = {key: version for key, (version, *_) in STORED_FACTS.items()}
    current = (old_layout == wanted and found.get("sparse") == SPARSE_FORMAT
               and all(found.get(key) == version for key, version in extras.items()))
    facts_current = all(found.get(key) == version for key, version in facts.items())
    if not everything and current and facts_current:
        return report
    old_settings = settings_with_layout(settings, old_layout)
    if not facts_current:  # before the vectors move: they are read where the marker says they are
        with Services(old_settings, check_layout=False) as old:
            done = read_again(old, make_extractor(settings, old.llm),
                              [key for key, version in facts.items() if found.get(key) != version])
            report.tool_turn_facts, report.told_of = done.get("tool_turn_facts"), done.get("told_of")
    items: list[MemoryItem] = []
    dropped: set[str] = set()
    if everything or not current:
        items, dropped = _reembed(settings, old_settings, report)
    # Recorded first: a stop in what follows leaves a collection that nothing consults, never a layout
    # that names a collection gone.
    write_index_format(data_dir, {"sparse": SPARSE_FORMAT, "embedding": wanted, **extras, **facts})
    for model in sorted(dropped):
        # Collections of models the new layout does not use: an embedded one is removed with its files (the
        # text it held with them); a Qdrant server's is shared with other processes: emptied, and left.
        gone = settings.model_copy(update={"embedding_model": model, "multilingual_embedding_model": None})
        with Services(gone, check_layout=False) as leftover:
            if settings.qdrant_url:
                ids = [i.id for i in items]
                for start in range(0, len(ids), BATCH):
                    leftover.vectors.delete_ids(ids[start : start + BATCH])
            else:
                report.removed_collections += leftover.vectors.drop()
    log.info("re-indexed %d items from %s to %s", report.items, old_layout, wanted)
    return report


def _reembed(settings: Settings, old_settings: Settings, report: ReindexReport) -> tuple[list[MemoryItem], set[str]]:
    """Every stored item embedded and encoded as ``settings`` say, into their collections; the items, and the
    models of ``old_settings`` the new layout does not use."""
    # Read everything back first: old and new layouts may share a collection (one model kept),
    # and an embedded collection is opened by one store at a time.
    with Services(old_settings, check_layout=False) as old:
        items = _stored_items(old)
        old_models = set(old.embedder.embedders)
        contexts = _context_texts(old, items)
    with Services(settings, check_layout=False) as new:
        spaces = new.embedder
        for start in range(0, len(items), BATCH):
            batch = items[start : start + BATCH]
            for item in batch:
                item.terms = None  # tokenized again, as SPARSE_FORMAT now says (its sparse vector is too)
            stamp_terms(batch)
            texts = [embedding_text(i) for i in batch]
            routed = spaces.spaces_for(texts)
            vectors = point_vectors(spaces, batch, texts, routed, contexts, settings)
            report.embeddings_computed += vectors.computed
            new.vectors.upsert(batch, vectors.dense, new.sparse_encoder.encode_documents(texts), spaces=routed,
                               context=vectors.context, sentences=vectors.sentences)
            report.items += len(batch)
        return items, old_models - set(spaces.embedders)
