"""The ingestion job: files → sources → items → embeddings → vector store, triples → graph.

Files on disk and their manifests are ``file_ingestion.py``, which reads them and hands their units to
this pipeline (it calls down to here, never the other way); from sources on, it is here, conversation
turns in ``turn_ingestion.py`` (mixed into the pipeline: a transcript's turns built into units, written
by the same step as documents).

Batches sources so the embedder sees many texts at once. Per source, the order of writes
keeps what was stored safe: new items are upserted, then the facts go to the graph, then stale
items are deleted, and the catalog (which decides "unchanged") is written last, so a crash mid-way
means the source is simply re-ingested next time. A graph that refuses the facts (Neo4j away) takes
the new items back: nothing is searchable that the catalog does not know, and the version stored
before stays whole.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Iterable, Sequence

from agent_memory.core.ids import content_hash
from agent_memory.core.records import DEFAULT_TENANT, Document, MemoryItem, with_tenant
from agent_memory.index.importance import stamp_importance
from agent_memory.index.items import stamp_terms
from agent_memory.index.told_of import TOLD_OF, people_told_of
from agent_memory.ingest import sources as readers
from agent_memory.ingest.discovery import discover_files, file_source_id
from agent_memory.ingest.extraction import make_extractor
from agent_memory.ingest.graph_writes import extract_triples, facts_read_from, speaker_relations, write_facts
from agent_memory.ingest.items import ItemBuilder, SourceItems, SummaryTokens
from agent_memory.ingest.ownership import DIRECT_OWNER, refuse_held, release_unwritten, writing
from agent_memory.ingest.removal import batches, forget_ids
from agent_memory.ingest.report import IngestReport
from agent_memory.ingest.sources import TextStream
from agent_memory.ingest.splitting import Splitter
from agent_memory.ingest.summarize import make_summarizer
from agent_memory.ingest.turn_ingestion import BATCH_SOURCES, TurnIngestion
from agent_memory.ingest.upkeep import stamp_expiry
from agent_memory.ingest.vectors import point_vectors
from agent_memory.services import Services
from agent_memory.stores.catalog import SourceEntry

log = logging.getLogger(__name__)
# A call's items are embedded and stored this many at a time, each slice then reported to the caller's
# ``on_chunks``: a document of thousands of chunks (a 300-page PDF is one source) shows how far it is
# instead of nothing until its end. Four of the embedder's own batches of 64 (core/embedding.py): the
# models still get texts enough to sort by length, and the extra calls (sparse encoding, one upsert per
# slice) cost nothing next to the encoding.
STORE_SLICE_ITEMS = 256

# ``on_chunks(done, total)``: chunks of the call stored so far, of the chunks it stores; called after each
# slice, the last call with done == total. A streamed text's total is estimated from the characters left
# (its chunks are not known before its segments are split) and exact in its last call.
ChunkProgress = Callable[[int, int], None]
# ``on_graph(done, total)``: a batch's texts (chunks, turns) read for the graph's facts so far, of those it
# reads, from the extraction's thread (graph_writes.extract_triples); done == total once the facts are written
# into the graph, which may be well after the last chunk is stored. Never called where no facts are read.
GraphProgress = Callable[[int, int], None]


class IngestionPipeline(TurnIngestion):
    """Sources into the stores: documents and large texts here, turns by ``TurnIngestion`` (turn_ingestion.py),
    both written by ``_write``."""

    def __init__(self, services: Services, *, extractor=None, summaries: bool = True) -> None:
        self.services = services
        settings = services.settings
        self.splitter = Splitter(services.counter, settings.chunk_tokens, settings.chunk_overlap_tokens)
        sizes = SummaryTokens(settings.chunk_summary_tokens, settings.document_summary_tokens,
                              settings.session_summary_tokens)
        self.builder = ItemBuilder(self.splitter, make_summarizer(services.counter, services.llm), sizes, summaries)
        self._extractor = extractor

    @property
    def extractor(self):
        if self._extractor is None:
            self._extractor = make_extractor(self.services.settings, self.services.llm)
        return self._extractor

    # ---- documents ---------------------------------------------------------------------------------

    def ingest_documents(self, docs: Iterable[Document], report: IngestReport | None = None, *,
                         owner: str = DIRECT_OWNER, on_chunks: ChunkProgress | None = None,
                         on_graph: GraphProgress | None = None) -> list[str]:
        """Ingest documents; returns their source IDs (unchanged ones included).

        ``owner`` writes them (default: a direct caller, the API's JSON documents); a source ID
        that a file owns raises IngestError before anything is written: a posted document never
        silently replaces what a file holds. ``on_chunks``: told the chunks stored of each batch of
        documents (``ChunkProgress``); none when nothing changed. ``on_graph``: told the texts of each batch
        read for the graph (``GraphProgress``)."""
        report = report if report is not None else IngestReport()
        ids: list[str] = []
        batch: list[Document] = []
        for doc in docs:
            batch.append(with_tenant(doc, DEFAULT_TENANT))
            if len(batch) >= BATCH_SOURCES:
                ids += self._document_batch(batch, report, owner, on_chunks, on_graph)
                batch = []
        if batch:
            ids += self._document_batch(batch, report, owner, on_chunks, on_graph)
        return ids

    def _document_batch(self, docs: list[Document], report: IngestReport, owner: str,
                        on_chunks: ChunkProgress | None = None, on_graph: GraphProgress | None = None) -> list[str]:
        by_tenant: dict[str, list[Document]] = defaultdict(list)
        for doc in docs:
            by_tenant[doc.tenant].append(doc)
        for tenant, group in by_tenant.items():
            ids = [d.source_id for d in group]
            refuse_held(self.services.catalog, tenant, ids, owner, "source", "use another source_id")
            claimed_before = self.services.catalog.owners(tenant, ids)
            self.services.catalog.claim(tenant, owner, ids)
            try:
                self._document_group(group, report, on_chunks, on_graph)
            except Exception:
                # A refused write (a store away) holds no ID it claimed and did not write: 404 for it, and no
                # other writer refused for it.
                release_unwritten(self.services.catalog, tenant, [sid for sid in ids if sid not in claimed_before])
                raise
        return [d.source_id for d in docs]

    def _document_group(self, group: list[Document], report: IngestReport,
                        on_chunks: ChunkProgress | None = None, on_graph: GraphProgress | None = None) -> None:
        """One tenant's documents of a batch, their IDs claimed: each unchanged one counted, each new or
        changed one written."""
        known = self.services.catalog.get_many(group[0].tenant, [d.source_id for d in group])
        fresh = []
        for doc in group:
            if not doc.text.strip():
                report.warnings.append(f"{doc.source_id}: empty text")
                continue
            if len(doc.text) > readers.STREAM_THRESHOLD_BYTES:
                # A large posted text takes the path of an uploaded file of the same size
                # (segments, no per-chunk summaries): as fast, and memory bounded the same way.
                self._document_stream(doc, known.get(doc.source_id), report, on_chunks)
                continue
            built = self.builder.document(doc)
            entry = known.get(doc.source_id)
            if entry is not None and entry.content_hash == built.content_hash:
                report.sources_unchanged += 1
                continue
            fresh.append((built, entry))
        self._write(fresh, report, on_chunks, on_graph)


    def _document_stream(self, doc: Document, entry: SourceEntry | None, report: IngestReport,
                         on_chunks: ChunkProgress | None = None) -> None:
        digest = content_hash(doc.title + "\x1f" + doc.text)
        if entry is not None and entry.content_hash == digest:
            report.sources_unchanged += 1
            return
        meta = {**doc.metadata, "title": doc.title} if doc.title else dict(doc.metadata)
        self._ingest_stream(TextStream(source_id=doc.source_id, path=Path(doc.path or doc.source_id), tenant=doc.tenant,
                                       content_hash=digest, metadata=meta, text=doc.text), report, on_chunks)

    def _ingest_stream(self, stream: TextStream, report: IngestReport,
                       on_chunks: ChunkProgress | None = None) -> list[str]:
        """A large text file, segment by segment: memory stays bounded by one segment. ``on_chunks`` is told
        the chunks stored after each slice, of a total estimated from the characters read so far."""
        with writing(self.services, {stream.tenant: [stream.source_id]}):  # from its first slice to its entry
            return self._stream_held(stream, report, on_chunks)

    def _stream_held(self, stream: TextStream, report: IngestReport, on_chunks: ChunkProgress | None) -> list[str]:
        tenant, sid = stream.tenant, stream.source_id
        previous = self.services.catalog.get(tenant, sid)
        new_ids: list[str] = []
        summaries: list[str] = []
        index = read = 0
        size = len(stream.text) if stream.text is not None else _file_size(stream.path)
        for offset, segment in stream.segments():
            spans = self.splitter.split(segment, base_offset=offset)
            items = self.builder.chunk_items(tenant, sid, spans, dict(stream.metadata), start_index=index)
            unit = SourceItems(tenant, sid, "document", stream.content_hash, items=items, path=str(stream.path))
            read = offset + len(segment)  # characters (of a file: about its bytes, the estimate's unit)
            estimate = round((index + len(items)) * max(size, read) / read) if read else 0
            self._store_items([unit], report, may_move=[i.id for i in items] if previous else [],
                              on_chunks=_segment_chunks(on_chunks, index, estimate))
            index += len(items)
            new_ids += [i.id for i in items]
            summaries.append(self.builder.summarizer.summarize(
                segment[:20_000], max_tokens=self.services.settings.segment_summary_tokens))
        if self.builder.summaries and summaries:
            digest_text = " ".join(summaries)
            # Its span is the whole text's, as a document's summary is: 0 to the characters read.
            items = self.builder.summary_items(tenant, sid, digest_text, [], dict(stream.metadata), length=read)
            if items:
                self._store_items([SourceItems(tenant, sid, "document", stream.content_hash, items=items)], report,
                                  may_move=[i.id for i in items] if previous else [])
                new_ids += [i.id for i in items]
        if on_chunks is not None:
            on_chunks(index, index)  # the exact total, now that every segment is split
        stale = sorted(set(previous.item_ids) - set(new_ids)) if previous else []
        if stale:
            self.services.vectors.delete_ids(stale)
            report.items_deleted += len(stale)
        self.services.catalog.put_many([SourceEntry(tenant, sid, "document", stream.content_hash,
                                                    path=str(stream.path), item_ids=new_ids)])
        report.sources_written += 1
        return [sid]

    # ---- writing -----------------------------------------------------------------------------------

    def _write(self, units: list[tuple[SourceItems, SourceEntry | None]], report: IngestReport,
               on_chunks: ChunkProgress | None = None, on_graph: GraphProgress | None = None) -> None:
        if not units:
            return
        by_tenant: dict[str, list[str]] = defaultdict(list)
        for unit, _ in units:
            by_tenant[unit.tenant].append(unit.source_id)
        with writing(self.services, by_tenant):  # from the first item stored to the catalog's entries
            self._write_held(units, report, on_chunks, on_graph)

    def _write_held(self, units: list[tuple[SourceItems, SourceEntry | None]], report: IngestReport,
                    on_chunks: ChunkProgress | None, on_graph: GraphProgress | None) -> None:
        graph_units = [u for u, _ in units if u.kind in ("document", "turn")]
        # Triples are read from the texts while the embedder encodes them: extraction touches no
        # store, and the two use the cores unevenly (spaCy one, the model's matmuls the rest).
        # A thread per batch, not per pipeline: a pipeline made per promoted turn must leave none behind.
        graph = _GraphSteps(on_graph if self._extracting(graph_units) else None, graph_units)
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="triples") as pool:
            extraction = None
            if self._extracting(graph_units):
                extraction = pool.submit(extract_triples, self.extractor, graph_units,
                                         speaker_relations=speaker_relations(self.services.settings),
                                         on_read=graph.read)
            # Only a re-written source's items may sit in another space (see SpacedVectorStore.upsert).
            self._store_items([u for u, _ in units], report,
                              may_move=[i.id for u, previous in units if previous is not None for i in u.items],
                              on_chunks=on_chunks)
            triples, triples_per_source, warnings = extraction.result() if extraction is not None else ([], {}, [])
        report.warnings.extend(warnings)
        try:
            told = people_told_of((item for unit, _ in units for item in unit.items), triples)
            if told:  # after the items' own upsert, which wrote their metadata whole
                self.services.vectors.update_metadata({item_id: {TOLD_OF: names} for item_id, names in told.items()})
            write_facts(self.services, units, triples, report)
            graph.written()
        except Exception:
            # The graph refused (Neo4j away): the new items go again, so nothing is searchable that the
            # catalog does not know, and the version stored before (items not deleted yet, entry) stays.
            self._take_back(units)
            raise
        for unit, previous in units:
            if previous is not None:
                stale = sorted(set(previous.item_ids) - {i.id for i in unit.items})
                if stale:
                    self.services.vectors.delete_ids(stale)
                    report.items_deleted += len(stale)
        self.services.catalog.put_many([
            SourceEntry(u.tenant, u.source_id, u.kind, u.content_hash, path=u.path, title=u.title,
                        session_id=u.session_id, seq=u.seq, timestamp=u.timestamp,
                        item_ids=[i.id for i in u.items], n_triples=triples_per_source.get(u.source_id, 0))
            for u, _ in units
        ])
        report.sources_written += len(units)

    def _take_back(self, units: list[tuple[SourceItems, SourceEntry | None]]) -> None:
        """Delete the items ``_write`` stored that the units' catalog entries do not hold (an item of the
        version stored before has the same ID, and stays). Best effort: the write's own error is what is said."""
        new: list[str] = []
        for unit, previous in units:
            kept = set(previous.item_ids) if previous is not None else set()
            new += [i.id for i in unit.items if i.id not in kept]
        if not new:
            return
        try:
            self.services.vectors.delete_ids(new)
        except Exception as exc:  # noqa: BLE001 - the store that failed the write is the one to report
            log.warning("could not take back %d items of a write that failed: %s", len(new), exc)

    def _store_items(self, units: list[SourceItems], report: IngestReport,
                     may_move: Sequence[str] | None = None, on_chunks: ChunkProgress | None = None) -> None:
        """Embed and upsert the units' items, ``STORE_SLICE_ITEMS`` at a time; ``may_move``: the IDs another
        embedding space may hold (None: any of them; SpacedVectorStore.upsert); ``on_chunks``: told the
        chunks stored after each slice."""
        items = [item for unit in units for item in unit.items]
        if not items:
            return
        stamp_expiry(items, self.services.settings.ttl_days)  # time to live per kind/source/tenant (upkeep.py)
        stamp_importance(items)  # the reranker's importance signal (index/importance.py)
        stamp_terms(items)  # the reranker's terms signal (items.py)
        texts = [text for unit in units for text in unit.embed_texts()]
        # Each turn read after the turn before it (agent_memory/index/context.py), and a long turn's single
        # sentences (agent_memory/index/sentences.py), stored inside its point: embedded with the items' own texts.
        contexts = {u.items[0].id: u.context_text for u in units if u.context_text and u.items}
        chunks_total = sum(item.kind == "chunk" for item in items)
        chunks_done = 0
        for start in range(0, len(items), STORE_SLICE_ITEMS):
            part = slice(start, start + STORE_SLICE_ITEMS)
            self._store_slice(items[part], texts[part], contexts, report, may_move)
            chunks_done += sum(item.kind == "chunk" for item in items[part])
            if on_chunks is not None and chunks_total:
                on_chunks(chunks_done, chunks_total)

    def _store_slice(self, items: list[MemoryItem], texts: list[str], contexts: dict[str, str],
                     report: IngestReport, may_move: Sequence[str] | None) -> None:
        embedder = self.services.embedder
        spaces = embedder.spaces_for(texts)  # each text by the model that reads its language
        vectors = point_vectors(embedder, items, texts, spaces, contexts, self.services.settings)
        report.embeddings_computed += vectors.computed
        sparse = self.services.sparse_encoder.encode_documents(texts)
        self.services.vectors.upsert(items, vectors.dense, sparse, spaces=spaces, context=vectors.context,
                                     sentences=vectors.sentences, may_move=may_move)
        for item in items:
            if item.kind == "chunk":
                report.chunks += 1
            elif item.kind == "summary":
                report.summaries += 1
            else:
                report.turns += 1

    def _extracting(self, units: list[SourceItems]) -> bool:
        return bool(units) and self.services.settings.triple_extractor != "none" and self.extractor is not None

    # ---- forgetting --------------------------------------------------------------------------------

    def forget(self, tenant: str, source_id: str, report: IngestReport | None = None) -> dict[str, int]:
        """Remove one source everywhere (agent_memory/ingest/removal.py ``forget``), under its writer's lock."""
        return self.forget_ids(tenant, [source_id], report)

    def forget_ids(self, tenant: str, source_ids: list[str], report: IngestReport | None = None) -> dict[str, int]:
        """:meth:`forget` of each of ``source_ids`` in batched removals: the counts those would add up to.
        Each batch under its writers' locks: a repair in another process never marks or counts a source half
        removed (and a session of thousands of turns never holds thousands of locks at once)."""
        counts = {"sources": 0, "items": 0, "triples": 0}
        for batch in batches(list(dict.fromkeys(source_ids))):
            with writing(self.services, {tenant: batch}):
                for key, value in forget_ids(self.services, tenant, batch, report).counts().items():
                    counts[key] = counts.get(key, 0) + value
        return counts


class _GraphSteps:
    """A batch's ``on_graph``: 0 of its texts when extraction starts, then each slice read, all of them only once
    the facts are written into the graph (the merge, and what newer facts supersede, take their time too)."""

    def __init__(self, on_graph: GraphProgress | None, units: list[SourceItems]) -> None:
        self.on_graph = on_graph
        self.total = sum(len(facts_read_from(unit)) for unit in units)
        if on_graph is not None and self.total:
            on_graph(0, self.total)

    def read(self, done: int, total: int) -> None:
        if self.on_graph is not None and done < total:
            self.on_graph(done, total)

    def written(self) -> None:
        if self.on_graph is not None and self.total:
            self.on_graph(self.total, self.total)


def _segment_chunks(on_chunks: ChunkProgress | None, before: int, estimate: int) -> ChunkProgress | None:
    """A streamed text's ``on_chunks`` for one segment: its chunks after the ``before`` of the segments before
    it, of at least the ``estimate``."""
    if on_chunks is None:
        return None
    return lambda done, total: on_chunks(before + done, max(before + total, estimate))


def _file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:  # gone since it was read: the estimate is the characters read so far
        return 0


__all__ = ["IngestionPipeline", "content_hash", "discover_files", "file_source_id"]
