"""Conversation turns into the ingestion pipeline: a transcript's turns (a file, ``Memory.add_turns``, an import)
and a session's archived messages alike, one source per turn and one summary per session.

Mixed into ``IngestionPipeline`` (``pipeline.py``), whose ``services``, ``builder`` and ``_write`` it uses: the
turns are built into their units here, and written by the same step as documents. What is particular to turns
is here too: each written turn is stored with its ``context`` vector (the turn read after the one before it,
``index/context.py``), and the turn after a written one, when not written with it, gets its context again.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Sequence

from agent_memory.core.records import DEFAULT_TENANT, MemoryItem, TurnRecord, with_tenant
from agent_memory.index.context import context_text, next_turns, turn_context_texts
from agent_memory.index.items import embedding_text
from agent_memory.ingest.items import SourceItems
from agent_memory.ingest.ownership import refuse_held
from agent_memory.ingest.report import IngestReport
from agent_memory.stores.catalog import SourceEntry

# Sources written together: the embedder sees this many sources' texts at once (documents' batches too).
BATCH_SOURCES = 256


class TurnIngestion:
    """``IngestionPipeline``'s turns: ``ingest_direct_turns`` and ``ingest_turns``."""

    def ingest_direct_turns(self, turns: Sequence[TurnRecord], report: IngestReport | None = None) -> list[str]:
        """``Memory.add_turns``: turns written directly, which claim nothing (re-adding a transcript is a
        no-op); one whose ID a file, a document or a session holds raises IngestError before anything is
        written (ingest/ownership.py)."""
        turns = [with_tenant(t, DEFAULT_TENANT) for t in turns]
        by_tenant: dict[str, list[str]] = defaultdict(list)
        for turn in turns:
            by_tenant[turn.tenant].append(turn.source_id)
        for tenant, ids in by_tenant.items():
            refuse_held(self.services.catalog, tenant, ids, None, "turn", "give the turn another session or turn ID")
        return self.ingest_turns(turns, report)

    def ingest_turns(self, turns: Sequence[TurnRecord], report: IngestReport | None = None) -> list[str]:
        """Ingest conversation turns (one source per turn) and one summary per session."""
        report = report if report is not None else IngestReport()
        sessions: dict[tuple[str, str], list[TurnRecord]] = defaultdict(list)
        for turn in (with_tenant(t, DEFAULT_TENANT) for t in turns):
            sessions[(turn.tenant, turn.session_id)].append(turn)
        ids: list[str] = []
        pending: list[tuple[SourceItems, SourceEntry | None]] = []
        rewritten: list[tuple[list[SourceItems], list[SourceItems]]] = []  # per session: its units, those written
        for (tenant, session_id), session_turns in sessions.items():
            units = [self.builder.turn(t, seq if t.seq is None else t.seq) for seq, t in enumerate(session_turns)]
            summary = self.builder.session_summary(tenant, session_id, session_turns)
            if summary is not None:
                units.append(summary)
            known = self.services.catalog.get_many(tenant, [u.source_id for u in units])
            changed = [u for u in units if known.get(u.source_id) is None
                       or known[u.source_id].content_hash != u.content_hash]
            # Each written turn read after the turn before it: stored with it as its ``context``
            # vector, the reranker's turn_context signal (agent_memory/index/context.py).
            contexts = turn_context_texts(self.services, units, changed)
            for unit in changed:
                if unit.kind == "turn" and unit.items:
                    unit.context_text = contexts.get(unit.items[0].id)
            written = {id(u) for u in changed}
            for unit in units:
                ids.append(unit.source_id)
                if id(unit) not in written:
                    report.sources_unchanged += 1
                    continue
                pending.append((unit, known.get(unit.source_id)))
                if len(pending) >= BATCH_SOURCES:
                    self._write(pending, report)
                    pending = []
            if any(u.kind == "turn" for u in changed):
                rewritten.append((units, changed))
        self._write(pending, report)
        for units, changed in rewritten:
            self._refresh_next_contexts(units, changed, report)
        return ids

    def _refresh_next_contexts(self, units: list[SourceItems], changed: list[SourceItems], report: IngestReport) -> None:
        """A written turn changes the context of the turn after it: when that one was not written
        too (unchanged, or stored by an earlier job), its stored ``context`` vector is replaced."""
        by_seq = {u.seq: u for u in units if u.kind == "turn" and u.items}
        written = {id(u) for u in changed}
        refresh: dict[str, tuple[MemoryItem, MemoryItem]] = {}  # next turn's first piece id → (it, previous)
        stored_next: list[MemoryItem] = []
        for unit in changed:
            if unit.kind != "turn" or not unit.items or unit.seq is None:
                continue
            following = by_seq.get(unit.seq + 1)
            if following is None:
                stored_next.append(unit.items[-1])
            elif id(following) not in written:
                refresh[following.items[0].id] = (following.items[0], unit.items[-1])
        if stored_next:
            found = next_turns(self.services, stored_next[0].tenant, stored_next)
            by_id = {i.id: i for i in stored_next}
            refresh.update((n.id, (n, by_id[prev_id])) for prev_id, n in found.items())
        if not refresh:
            return
        embedder = self.services.embedder
        pairs = list(refresh.values())
        spaces = embedder.spaces_for([embedding_text(item) for item, _ in pairs])  # where each turn lives
        before = embedder.computed
        limit = self.services.settings.turn_context_previous_max_words
        vectors = embedder.embed_documents([context_text(item, prev, limit) for item, prev in pairs], spaces)
        report.embeddings_computed += embedder.computed - before
        self.services.vectors.set_context({item.id: (space, vector)
                                           for (item, _), space, vector in zip(pairs, spaces, vectors)})
