"""The ingestion job: files → sources → items → embeddings → vector store, triples → graph.

Batches sources so the embedder sees many texts at once. Per source, the order of writes
keeps what was stored safe: new items are upserted before stale ones are deleted, and
the catalog (which decides "unchanged") is written last, so a crash mid-way means the
source is simply re-ingested next time.
"""

from __future__ import annotations

import logging
import os
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Iterable, Sequence

from tqdm import tqdm

from agent_memory.core.errors import IngestError, StoreError
from agent_memory.core.ids import content_hash
from agent_memory.core.records import Document, MemoryItem, TurnRecord
from agent_memory.index.context import context_text, next_turns, turn_context_texts
from agent_memory.index.importance import stamp_importance
from agent_memory.index.items import embedding_text, stamp_terms
from agent_memory.ingest import sources as readers
from agent_memory.ingest.discovery import discover_files, file_source_id, named_files
from agent_memory.ingest.extraction import make_extractor
from agent_memory.ingest.graph_writes import extract_triples, merge_triples
from agent_memory.ingest.items import ItemBuilder, SourceItems, SummaryTokens
from agent_memory.ingest.lock import ingest_lock
from agent_memory.ingest.ownership import DIRECT_OWNER, FILE_KEY, forget, forget_sources, own_units, still_owned
from agent_memory.ingest.report import IngestReport
from agent_memory.ingest.sources import Skipped, TextStream, Transcript, file_hash, load_path
from agent_memory.ingest.splitting import Splitter
from agent_memory.ingest.summarize import make_summarizer
from agent_memory.ingest.upkeep import stamp_expiry
from agent_memory.ingest.vectors import point_vectors
from agent_memory.services import Services
from agent_memory.stores.catalog import SourceEntry

log = logging.getLogger(__name__)
# How many folders up a file given alone looks for a folder job's ID of it (_stored_id).
MAX_ID_DEPTH = 12
BATCH_SOURCES = 256


class IngestionPipeline:
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

    # ---- files -----------------------------------------------------------------------------------

    def ingest_paths(self, paths: Sequence[str | Path], *, tenant: str | None = None, recursive: bool = False,
                     glob: str | None = None, progress: bool = False,
                     base: str | Path | None = None) -> IngestReport:
        """Ingest files and folders. Each file's source ID is its path relative to ``base``
        (default: the folder holding the path given, so ``notes/`` names ``notes/team.md`` from any
        working folder; see ``discovery.file_source_id``). A path outside ``base`` raises IngestError."""
        tenant = tenant or self.services.settings.tenant
        if base is not None:
            for raw in paths:
                if os.path.abspath(raw) != os.path.abspath(base):
                    file_source_id(Path(raw), base)  # raises, naming the path outside the base
        with ingest_lock(self.services.settings.data_dir):  # one job per data dir: the second fails fast
            return self._ingest_paths(paths, tenant, recursive, glob, progress, base)

    def _ingest_paths(self, paths, tenant: str, recursive: bool, glob: str | None, progress: bool,
                      base: str | Path | None = None) -> IngestReport:
        report = IngestReport()
        started = time.perf_counter()
        files = named_files(paths, recursive=recursive, glob=glob, report=report, base=base)
        if base is None:  # a file given alone that its folder's job stored already keeps that ID
            given = {os.path.abspath(raw) for raw in paths if os.path.isfile(raw)}
            files = [(path, self._stored_id(tenant, path, file_id) if os.path.abspath(path) in given else file_id)
                     for path, file_id in files]
        bar = _progress(len(files), progress)
        try:
            for path, file_id in files:
                report.files_seen += 1
                self.ingest_file(path, tenant=tenant, report=report, source_id=file_id, named_by_path=True)
                if bar:
                    bar.update(1)
                    bar.set_postfix(chunks=report.chunks, turns=report.turns, refresh=False)
        except StoreError as exc:
            # A store stopped answering: the job stops (every later file would fail the same way).
            # The file in flight is failed, the rest are listed as not attempted; none of them has a
            # manifest yet, so the next run resumes exactly there.
            report.store_error = str(exc)
            done = report.files_seen - 1  # the file in flight
            report.files_failed.append((str(files[done][0]), f"store failed: {exc}"))
            report.outcome(files[done][0], "failed")
            for path, _ in files[done + 1:]:
                report.outcome(path, "not attempted")
            log.error("store failed, stopping the job: %s", exc)
        finally:
            if bar:
                bar.close()
            report.seconds = time.perf_counter() - started
        return report

    def _stored_id(self, tenant: str, path: Path, file_id: str) -> str:
        """The ID this very file is stored under already, when a job over one of its folders named it
        (``ingest notes/`` stored ``notes/x.md``; ``ingest notes/x.md`` refreshes that source, not a
        second ``x.md``); else ``file_id``. Matched by the absolute path the manifest recorded."""
        where = os.path.abspath(path)
        parts = Path(where).parts
        for depth in range(2, min(len(parts), MAX_ID_DEPTH + 1)):
            candidate = "/".join(parts[-depth:])
            entry = self.services.catalog.get(tenant, FILE_KEY + candidate)
            if entry is not None and entry.path == where:
                return candidate
        return file_id

    def ingest_file(self, path: Path, *, tenant: str, source_id: str | None = None,
                    report: IngestReport | None = None, metadata: dict | None = None,
                    progress: Callable[[str, int, int], None] | None = None,
                    named_by_path: bool = False) -> list[str]:
        """Ingest one file under ``source_id`` (default: its file name; ``ingest_paths`` names it by
        its path under a base). Returns the sources it holds.

        A manifest in the catalog records the file's hash and its sources, so re-ingesting the
        same bytes does nothing (when those sources are still there and still the file's own) and
        a changed file forgets the sources it no longer holds. The file owns its source IDs: a
        record whose ID another file (or an API document) owns is refused, never overwritten.
        Problems go to the report (skipped/failed); only a store failure raises.
        An ID named by the path (no ``source_id``, or ``named_by_path``) that another existing file
        already holds is refused with that file named: two files never share one ID silently.
        """
        report = report if report is not None else IngestReport()
        named_by_path = named_by_path or source_id is None
        file_id = source_id or file_source_id(path)
        owner = FILE_KEY + file_id
        where = os.path.abspath(path)
        try:
            digest = file_hash(path)
        except OSError as exc:
            report.files_skipped.append((str(path), f"unreadable: {exc}"))
            report.outcome(path, "skipped")
            return []
        previous = self.services.catalog.get(tenant, owner)
        if named_by_path and previous is not None and _other_file(previous.path, where):
            report.files_failed.append((str(path), f"source ID {file_id!r} is held by another file, "
                                        f"{previous.path!r}: give --base (or source_id) so their IDs differ, "
                                        f"or forget {file_id!r} first"))
            report.outcome(path, "failed")
            return []
        if (previous is not None and previous.content_hash == digest
                and still_owned(self.services.catalog, tenant, owner, previous)):
            report.files_unchanged += 1
            report.outcome(path, "unchanged")
            return list(previous.item_ids)
        progress = progress or (lambda *_: None)
        try:
            loaded = load_path(path, tenant=tenant, source_id=file_id)
            skips = [x for x in loaded if isinstance(x, Skipped)]
            if skips and len(skips) == len(loaded):
                report.files_skipped.extend((s.path, s.reason) for s in skips)
                report.outcome(path, "skipped")
                return []
            report.warnings.extend(f"{s.path}: skipped: {s.reason}" for s in skips)
            units, refused = own_units(self.services.catalog, tenant, owner,
                                       [u for u in loaded if not isinstance(u, Skipped)])
            children: list[str] = []
            for done, unit in enumerate(units):
                progress("ingesting", done, len(units))
                if isinstance(unit, Document):
                    if metadata:
                        unit.metadata.update(metadata)
                    children += self.ingest_documents([unit], report, owner=owner)
                elif isinstance(unit, TextStream):
                    children += self._ingest_stream(unit, report)
                elif isinstance(unit, Transcript):
                    children += self.ingest_turns(unit.turns, report)
            progress("ingesting", len(units), len(units))
        except StoreError:
            raise
        except Exception as exc:  # noqa: BLE001 - one bad file must not stop the job
            log.exception("ingesting %s failed", path)
            report.files_failed.append((str(path), f"{type(exc).__name__}: {exc}"))
            report.outcome(path, "failed")
            return []
        # Derived sources (a session's summary) are the file's too.
        self.services.catalog.claim(tenant, owner, children)
        if previous is not None:
            forget_sources(self.services, tenant, sorted(set(previous.item_ids) - set(children)), report)
        # A file with refused records keeps a manifest (so forget finds what it did store) under a
        # hash that never matches: the next run reads it again and reports the refusal again.
        self.services.catalog.put_many([SourceEntry(tenant, owner, "file", "partial:" + digest if refused else digest,
                                                    path=where, item_ids=children)])
        if refused:
            report.files_failed.append((str(path), "; ".join(refused[:5]) + (
                f" (+{len(refused) - 5} more)" if len(refused) > 5 else "")))
            report.outcome(path, "partial")
        else:
            report.files_ingested += 1
            report.outcome(path, "ingested")
        return children

    # ---- documents ---------------------------------------------------------------------------------

    def ingest_documents(self, docs: Iterable[Document], report: IngestReport | None = None, *,
                         owner: str = DIRECT_OWNER) -> list[str]:
        """Ingest documents; returns their source IDs (unchanged ones included).

        ``owner`` writes them (default: a direct caller, the API's JSON documents); a source ID
        that a file owns raises IngestError before anything is written: a posted document never
        silently replaces what a file holds."""
        report = report if report is not None else IngestReport()
        ids: list[str] = []
        batch: list[Document] = []
        for doc in docs:
            batch.append(doc)
            if len(batch) >= BATCH_SOURCES:
                ids += self._document_batch(batch, report, owner)
                batch = []
        if batch:
            ids += self._document_batch(batch, report, owner)
        return ids

    def _document_batch(self, docs: list[Document], report: IngestReport, owner: str) -> list[str]:
        by_tenant: dict[str, list[Document]] = defaultdict(list)
        for doc in docs:
            by_tenant[doc.tenant].append(doc)
        for tenant, group in by_tenant.items():
            ids = [d.source_id for d in group]
            taken = {sid: who for sid, who in self.services.catalog.owners(tenant, ids).items() if who != owner}
            if taken:
                sid, who = next(iter(taken.items()))
                raise IngestError(f"source {sid!r} belongs to {who!r}: forget it first, or use another source_id")
            self.services.catalog.claim(tenant, owner, ids)
            known = self.services.catalog.get_many(tenant, ids)
            fresh = []
            for doc in group:
                if not doc.text.strip():
                    report.warnings.append(f"{doc.source_id}: empty text")
                    continue
                if len(doc.text) > readers.STREAM_THRESHOLD_BYTES:
                    # A large posted text takes the path of an uploaded file of the same size
                    # (segments, no per-chunk summaries): as fast, and memory bounded the same way.
                    self._document_stream(doc, known.get(doc.source_id), report)
                    continue
                built = self.builder.document(doc)
                entry = known.get(doc.source_id)
                if entry is not None and entry.content_hash == built.content_hash:
                    report.sources_unchanged += 1
                    continue
                fresh.append((built, entry))
            self._write(fresh, report)
        return [d.source_id for d in docs]

    def _document_stream(self, doc: Document, entry: SourceEntry | None, report: IngestReport) -> None:
        digest = content_hash(doc.title + "\x1f" + doc.text)
        if entry is not None and entry.content_hash == digest:
            report.sources_unchanged += 1
            return
        meta = {**doc.metadata, "title": doc.title} if doc.title else dict(doc.metadata)
        self._ingest_stream(TextStream(source_id=doc.source_id, path=Path(doc.path or doc.source_id), tenant=doc.tenant,
                                       content_hash=digest, metadata=meta, text=doc.text), report)

    def _ingest_stream(self, stream: TextStream, report: IngestReport) -> list[str]:
        """A large text file, segment by segment: memory stays bounded by one segment."""
        tenant, sid = stream.tenant, stream.source_id
        previous = self.services.catalog.get(tenant, sid)
        new_ids: list[str] = []
        summaries: list[str] = []
        index = 0
        for offset, segment in stream.segments():
            spans = self.splitter.split(segment, base_offset=offset)
            items = self.builder.chunk_items(tenant, sid, spans, dict(stream.metadata), start_index=index)
            index += len(items)
            unit = SourceItems(tenant, sid, "document", stream.content_hash, items=items, path=str(stream.path))
            self._store_items([unit], report, may_move=[i.id for i in items] if previous else [])
            new_ids += [i.id for i in items]
            summaries.append(self.builder.summarizer.summarize(
                segment[:20_000], max_tokens=self.services.settings.segment_summary_tokens))
        if self.builder.summaries and summaries:
            digest_text = " ".join(summaries)
            items = self.builder.summary_items(tenant, sid, digest_text, [], {"scope": "document"})
            if items:
                self._store_items([SourceItems(tenant, sid, "document", stream.content_hash, items=items)], report,
                                  may_move=[i.id for i in items] if previous else [])
                new_ids += [i.id for i in items]
        stale = sorted(set(previous.item_ids) - set(new_ids)) if previous else []
        if stale:
            self.services.vectors.delete_ids(stale)
            report.items_deleted += len(stale)
        self.services.catalog.put_many([SourceEntry(tenant, sid, "document", stream.content_hash,
                                                    path=str(stream.path), item_ids=new_ids)])
        report.sources_written += 1
        return [sid]

    # ---- turns -------------------------------------------------------------------------------------

    def ingest_turns(self, turns: Sequence[TurnRecord], report: IngestReport | None = None) -> list[str]:
        """Ingest conversation turns (one source per turn) and one summary per session."""
        report = report if report is not None else IngestReport()
        sessions: dict[tuple[str, str], list[TurnRecord]] = defaultdict(list)
        for turn in turns:
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

    # ---- writing -----------------------------------------------------------------------------------

    def _write(self, units: list[tuple[SourceItems, SourceEntry | None]], report: IngestReport) -> None:
        if not units:
            return
        graph_units = [u for u, _ in units if u.kind in ("document", "turn")]
        # Triples are read from the texts while the embedder encodes them: extraction touches no
        # store, and the two use the cores unevenly (spaCy one, the model's matmuls the rest).
        # A thread per batch, not per pipeline: a pipeline made per promoted turn must leave none behind.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="triples") as pool:
            extraction = None
            if self._extracting(graph_units):
                extraction = pool.submit(extract_triples, self.extractor, graph_units)
            # Only a re-written source's items may sit in another space (see SpacedVectorStore.upsert).
            self._store_items([u for u, _ in units], report,
                              may_move=[i.id for u, previous in units if previous is not None for i in u.items])
            triples, triples_per_source, warnings = extraction.result() if extraction is not None else ([], {}, [])
        report.warnings.extend(warnings)
        for unit, previous in units:
            if previous is not None:
                stale = sorted(set(previous.item_ids) - {i.id for i in unit.items})
                if stale:
                    self.services.vectors.delete_ids(stale)
                    report.items_deleted += len(stale)
                if previous.n_triples:
                    self.services.graph.delete_by_source(unit.tenant, unit.source_id)
        merge_triples(self.services, triples, report)
        self.services.catalog.put_many([
            SourceEntry(u.tenant, u.source_id, u.kind, u.content_hash, path=u.path, title=u.title,
                        session_id=u.session_id, seq=u.seq, timestamp=u.timestamp,
                        item_ids=[i.id for i in u.items], n_triples=triples_per_source.get(u.source_id, 0))
            for u, _ in units
        ])
        report.sources_written += len(units)

    def _store_items(self, units: list[SourceItems], report: IngestReport,
                     may_move: Sequence[str] | None = None) -> None:
        """Embed and upsert the units' items; ``may_move``: the IDs another embedding space may hold
        (None: any of them; SpacedVectorStore.upsert)."""
        items = [item for unit in units for item in unit.items]
        if not items:
            return
        stamp_expiry(items, self.services.settings.ttl_days)  # time to live per kind/source/tenant (upkeep.py)
        stamp_importance(items)  # the reranker's importance signal (index/importance.py)
        stamp_terms(items)  # the reranker's terms signal (items.py)
        texts = [text for unit in units for text in unit.embed_texts()]
        embedder = self.services.embedder
        spaces = embedder.spaces_for(texts)  # each text by the model that reads its language
        # Each turn read after the turn before it (agent_memory/index/context.py), and a long turn's single
        # sentences (agent_memory/index/sentences.py), stored inside its point: embedded with the items' own texts.
        contexts = {u.items[0].id: u.context_text for u in units if u.context_text and u.items}
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
        """Remove one source everywhere (agent_memory/ingest/ownership.py ``forget``)."""
        return forget(self.services, tenant, source_id, report)


def _other_file(recorded: str, where: str) -> bool:
    """The manifest names another file that still exists (an absolute path recorded at ingestion;
    older manifests hold a path relative to a working folder no one remembers: not compared)."""
    return os.path.isabs(recorded) and recorded != where and os.path.isfile(recorded)


def _progress(total: int, enabled: bool):
    if not enabled:
        return None
    return tqdm(total=total, unit="file", desc="ingest", disable=os.environ.get("AGENT_MEMORY_NO_PROGRESS") == "1")


__all__ = ["IngestionPipeline", "content_hash", "discover_files", "file_source_id"]
