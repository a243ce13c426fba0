"""The one place that builds every service from settings.

Heavy parts (the embedding model, the stores) are built on first use, so a command
that needs only the catalog does not load a model.
"""

from __future__ import annotations

import functools
import json
import logging
from pathlib import Path
from typing import Any, Callable

from agent_memory.conversation.manager import SessionManager, compaction_config
from agent_memory.conversation.significance import LLMDetector
from agent_memory.conversation.summarize import LLMSummarizer
from agent_memory.core.config import Settings, load_settings, setting_variable
from agent_memory.core.embedding import CachedEmbedder, check_model_installed, collection_name, make_embedder
from agent_memory.core.embedding_spaces import SCRIPT_SHARES, EmbeddingSpaces, SpaceLayout
from agent_memory.core.errors import IndexFormatError
from agent_memory.core.llm import llm_from_settings
from agent_memory.core.sparse import SPARSE_FORMAT, SparseEncoder
from agent_memory.core.tokens import TokenCounter, make_counter
from agent_memory.stores.catalog import SourceCatalog, SQLiteCatalog
from agent_memory.stores.embedding_cache import EmbeddingCache
from agent_memory.stores.graph_factory import open_graph_store
from agent_memory.stores.index_format import (
    INDEX_FORMAT_FILE,
    STORED_FACTS,
    UNREADABLE,
    outdated_facts,
    read_index_format,
    sparse_format_version,
    write_index_format,
)
from agent_memory.stores.job_spool import SpooledJobs
from agent_memory.stores.jobs import DurableJobQueue, Job, JobQueue, JobRegistry, JobSpec
from agent_memory.stores.pending_writes import PendingWriters
from agent_memory.stores.source_locks import SourceLocks
from agent_memory.stores.spaced import SpacedVectorStore
from agent_memory.stores.staging import STAGED_UPLOADS, StagingArea
from agent_memory.stores.vector_factory import open_vector_store

log = logging.getLogger(__name__)
# The embedded catalog's, sessions' and embedding cache's SQLite files under the data dir.
CATALOG_FILE = "catalog.sqlite"
SESSIONS_FILE = "sessions.sqlite3"
EMBEDDING_CACHE_FILE = "embedding-cache.sqlite"
PENDING_JOBS = "pending-jobs"  # the in-process job queue's spool (stores/job_spool.py)


class Services:
    def __init__(self, settings: Settings, *, check_layout: bool = True) -> None:
        """``check_layout=False`` only for ``reindex``, which moves a data dir to new embedding models."""
        self.settings = settings
        self.check_layout = check_layout
        self.data_dir = Path(settings.data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)

    @functools.cached_property
    def counter(self) -> TokenCounter:
        return make_counter(self.settings.tokenizer)

    @functools.cached_property
    def postgres(self):
        """The one PostgreSQL pool of this process (catalog, sessions, jobs); None when not configured."""
        if not self.settings.postgres_url:
            return None
        # The PostgreSQL modules need the 'servers' extra (psycopg): imported only when configured.
        from agent_memory.stores.postgres import PostgresDB

        return PostgresDB(self.settings.postgres_url, pool_size=self.settings.postgres_pool_size)

    @functools.cached_property
    def catalog(self) -> SourceCatalog:
        if self.postgres is not None:
            from agent_memory.stores.postgres_catalog import PostgresCatalog

            return PostgresCatalog(self.postgres)
        return SQLiteCatalog(self.data_dir / CATALOG_FILE)

    @functools.cached_property
    def session_store(self):
        """Working-memory sessions on PostgreSQL when configured; None: the session manager keeps
        its embedded SQLite file under data_dir."""
        if self.postgres is None:
            return None
        from agent_memory.stores.postgres_sessions import PostgresSessionStore

        return PostgresSessionStore(self.postgres)

    @functools.cached_property
    def sessions(self) -> SessionManager:
        """The process's working-memory sessions, over ``session_store`` (else ``sessions.sqlite3`` under
        data_dir), counted with ``counter``; the LLM summarizer and significance detector when a model is
        configured, the offline ones otherwise."""
        parts = {} if self.llm is None else {"summarizer": LLMSummarizer(self.llm), "detector": LLMDetector(self.llm)}
        return SessionManager(self.data_dir / SESSIONS_FILE, self.counter, store=self.session_store,
                              config=compaction_config(self.settings), **parts)

    @functools.cached_property
    def job_store(self):
        """Durable ingestion jobs and per-source locks on PostgreSQL when configured; None:
        jobs run in the API process (``stores/jobs.py``)."""
        if self.postgres is None:
            return None
        from agent_memory.stores.postgres_jobs import PostgresJobStore

        return PostgresJobStore(self.postgres)

    @functools.cached_property
    def queued_writes(self) -> PendingWriters | None:
        """The jobs queued in PostgreSQL for ``agent-memory worker`` processes, which a forget in this process asks
        first whether one will store what it removes (``ingest/queued_writes.py``); None without PostgreSQL: a
        server's in-process queue is its own, and a CLI beside that server forgets through it, which asks it."""
        if self.job_store is None:
            return None
        return DurableJobQueue(self.job_store)

    @functools.cached_property
    def source_locks(self) -> SourceLocks:
        """One writer per source: in this process, and across processes through PostgreSQL when configured."""
        return SourceLocks(self.job_store)

    def job_queue(self, run: Callable[[JobSpec, Job], dict[str, Any]],
                  describe_error: Callable[[Exception, str], dict[str, str]]) -> JobQueue:
        """Where background ingestion jobs go: PostgreSQL, run by ``agent-memory worker`` processes, when
        ``Settings.jobs_go_to_workers``; else one thread of this process running ``run(spec, job)``, each job
        kept under the data dir until it ends, so that a stop loses none (``stores/job_spool.py``). With
        PostgreSQL beside an embedded vector store or graph, no worker could write where this process reads: its
        jobs sat queued for ever (``job_runner`` says otherwise). Called once, by the API."""
        if not self.settings.jobs_go_to_workers:
            return SpooledJobs(JobRegistry(run, describe_error=describe_error), self.data_dir / PENDING_JOBS)
        return DurableJobQueue(self.job_store)

    @functools.cached_property
    def staging(self) -> StagingArea:
        """Where an upload's body is held while it is read (``<data dir>/staged-uploads``, stores/staging.py):
        with the data, keeping the data dir's free-space reserve."""
        return StagingArea(self.data_dir / STAGED_UPLOADS, reserve_mb=self.settings.min_free_mb)

    @functools.cached_property
    def embedder(self) -> EmbeddingSpaces:
        """Each text embedded by the model that reads it (see embedding_spaces.py)."""
        layout = self.space_layout
        cache = EmbeddingCache(self.data_dir / EMBEDDING_CACHE_FILE)
        models = list(dict.fromkeys(m for m in (layout.default_model, layout.multilingual_model) if m))
        batch, graphs = self.settings.embedding_batch_size, self.settings.model_cache_dir
        embedders = {m: CachedEmbedder(make_embedder(m, batch, graphs), cache) for m in models}
        return EmbeddingSpaces(embedders, layout, self.settings.similarity_calibration)

    @functools.cached_property
    def cross_encoder(self):
        """The cross-encoder the retrieval pipeline re-orders its first candidates with (``cross_encoder_model``);
        None: not configured, and its runtime is never imported. Its session is built at the first question."""
        if self.settings.cross_encoder_model is None:
            return None
        from agent_memory.core.onnx_cross_encoder import OnnxCrossEncoder

        return OnnxCrossEncoder(self.settings.cross_encoder_model, graph_cache=self.settings.model_cache_dir)

    @property
    def space_layout(self) -> SpaceLayout:
        return space_layout(self.settings)

    @functools.cached_property
    def sparse_encoder(self):
        return SparseEncoder()

    @functools.cached_property
    def vectors(self) -> SpacedVectorStore:
        """One collection per embedding space, behind one VectorStore."""
        found = read_index_format(self.data_dir) if self.check_layout else None
        if found is not None:
            self._refuse_other_format(found)
        spaces = self.embedder
        stores = {name: open_vector_store(self.settings, e.dimension, collection_name(e))
                  for name, e in spaces.embedders.items()}
        vectors = SpacedVectorStore(stores, spaces.default, spaces.calibrate, spaces.lang_of_space)
        if found is not None:
            try:
                self._refuse_unmarked_vectors(found, vectors)
            except IndexFormatError:
                vectors.close()
                raise
            self._record_index_format(found)
        return vectors

    def check_index_format(self) -> None:
        """Refuse, before a job reads or embeds anything, a data dir that ``vectors`` would refuse to open
        (another sparse format or other embedding models): a write job then fails once, at its start,
        instead of once per file after each file's embeddings were computed. Records nothing. Once
        ``vectors`` is open the data dir passed this check, and no other process can re-index it while this
        one owns it (core/owner.py): the file is not read again on every write."""
        if self.check_layout and "vectors" not in self.__dict__:
            found = read_index_format(self.data_dir)
            self._refuse_other_format(found)
            if not found and not self.settings.qdrant_url:
                self.vectors  # noqa: B018 - no marker: only the stores can say whether the data dir is new

    def _refuse_other_format(self, found: dict) -> None:
        # The models first: when they differ too, they are the cause (the keyword format alone is upgraded in
        # place by whoever opens the data dir, ingest/upgrade.py). Each refusal says how to run `reindex`, which
        # must own the data dir: through a running server, "run reindex" alone sent the user in a loop.
        wanted = self.space_layout.as_dict()
        if UNREADABLE in found:
            raise IndexFormatError(f"data dir {self.data_dir}: its {INDEX_FORMAT_FILE} does not read "
                                   f"({found[UNREADABLE]}): {RUN_REINDEX} to encode the stored text again and write it afresh")
        recorded = recorded_layout(found.get("embedding"))
        if recorded not in (None, wanted):
            raise IndexFormatError(
                f"data dir {self.data_dir} was embedded with {describe_layout(recorded)}, but the "
                f"settings ask for {describe_layout(wanted)}: {RUN_REINDEX} to re-embed the stored text with the "
                f"new models (no source file is read again), or set those settings back ({READS_STORED} read it "
                "meanwhile)")
        if found.get("sparse") not in (None, SPARSE_FORMAT):
            version = sparse_format_version(found["sparse"])
            current = sparse_format_version(SPARSE_FORMAT)
            # The advice once: a newer version's data dir is upgraded to, or re-encoded down to this version's.
            newer = version is not None and current is not None and version > current
            fix = (f"a newer version of agent-memory wrote it: upgrade this one, or {RUN_REINDEX} to re-encode it as "
                   "this version does" if newer else f"{RUN_REINDEX} to encode the stored text again")
            raise IndexFormatError(f"data dir {self.data_dir} holds sparse vectors of format {found['sparse']!r}, this "
                                   f"version writes {SPARSE_FORMAT!r}: {fix} (no source file is read again)")

    def _refuse_unmarked_vectors(self, found: dict, vectors: SpacedVectorStore) -> None:
        """An embedded data dir with no marker is new only when its stores are empty. One that holds vectors
        lost its marker (removed by hand, copied without it, written before markers existed): how its
        vectors were written is unknown, and recording this version's format over them would mix two
        formats silently. With a Qdrant server the collections are shared and each process keeps its own
        data dir, so a fresh data dir beside a full server is the normal case (a new replica)."""
        if found or self.settings.qdrant_url:
            return
        held = vectors.count()
        if held:
            raise IndexFormatError(
                f"data dir {self.data_dir} holds {held} stored vectors but no {INDEX_FORMAT_FILE} (removed, or "
                f"copied without it): how they were encoded is unknown: {RUN_REINDEX} to encode the stored text "
                "again and write it afresh")

    def _record_index_format(self, found: dict) -> None:
        """Record the format this version writes (a data dir passed ``_refuse_other_format``): vectors of two
        spaces must never mix silently."""
        marker = {"sparse": SPARSE_FORMAT, "embedding": self.space_layout.as_dict()}
        for key, (version, lacking, meanwhile) in STORED_EXTRAS.items():
            if not found or found.get(key) == version:
                marker[key] = version  # a new data dir: everything is stored with it
            else:  # still served, the slower way, until `reindex` stores what is missing
                log.warning("data dir %s holds %s: run `agent-memory reindex` to store them (until then %s)",
                            self.data_dir, lacking, meanwhile)
        outdated = outdated_facts(found)
        for key, (version, _) in STORED_FACTS.items():
            if key in outdated:
                log.warning("data dir %s: %s", self.data_dir, outdated[key])
            else:
                marker[key] = version
        if found != marker:
            write_index_format(self.data_dir, marker)

    @functools.cached_property
    def graph(self):
        return open_graph_store(self.settings)

    @functools.cached_property
    def llm(self):
        if not self.settings.llm_configured:
            return None
        return llm_from_settings(self.settings)

    def close(self) -> None:
        """Close what was opened; untouched lazy services stay unbuilt."""
        for name in ("sessions", "vectors", "graph", "catalog", "postgres"):
            service = self.__dict__.get(name)
            if service is not None:
                try:
                    service.close()
                except Exception as exc:  # noqa: BLE001 - closing must not mask the real outcome
                    log.warning("closing %s failed: %s", name, exc)
        for name in ("embedder", "cross_encoder"):
            model = self.__dict__.get(name)
            if model is not None:
                model.close()

    def __enter__(self) -> "Services":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# Recorded as "turn_context" in the index format when every turn point carries its ``context``
# vector (agent_memory/index/context.py); a data dir without it was written before, and `reindex` stores them.
TURN_CONTEXT_FORMAT = 1
# Items carry their keyword terms (MemoryItem.terms), tokenized as SPARSE_FORMAT says.
ITEM_TERMS_FORMAT = 1
# Long turns carry the vectors of their sentences (agent_memory/index/sentences.py).
SENTENCE_VECTORS_FORMAT = 1
# How a refusal says to move a data dir: `reindex` owns its data dir, so a server on it stops first.
RUN_REINDEX = ("run `agent-memory reindex` on it (stop an `agent-memory serve` that owns it first, and start it "
               "again after)")
# What a data dir written before it existed lacks and `agent-memory reindex` stores (agent_memory/ingest/reindex.py):
# index-format key -> (version, what such a data dir holds, how it is served meanwhile).
STORED_EXTRAS = {
    "turn_context": (TURN_CONTEXT_FORMAT, "turns stored without their turn-context vector",
                     "each question embeds theirs"),  # agent_memory/retrieval/stored_vectors.py
    "item_terms": (ITEM_TERMS_FORMAT, "items stored without their keyword terms",
                   "the reranker reads them from each text"),  # agent_memory/core/text.py
    "sentence_vectors": (SENTENCE_VECTORS_FORMAT, "long turns stored without their sentence vectors",
                         "those turns are found by their whole-turn vector alone"),  # agent_memory/index/sentences.py
}


def space_layout(settings: Settings) -> SpaceLayout:
    """The embedding spaces ``settings`` ask for (what the index format records as ``embedding``)."""
    multilingual = settings.multilingual_embedding_model or None
    if multilingual == settings.embedding_model:
        multilingual = None
    return SpaceLayout(settings.embedding_model, multilingual, settings.multilingual_share if multilingual else 0.0,
                       settings.multilingual_scripts)


# The commands that never encode text: on a data dir embedded with other models than the settings ask for,
# they read (and remove) what is stored in the models it records (``settings_for_stored_layout``).
READS_STORED = "`agent-memory stats`, `list`, `inspect`, `forget`, `gc` and `export`"
LAYOUT_SETTINGS = {"default_model": "embedding_model", "multilingual_model": "multilingual_embedding_model",
                   "multilingual_share": "multilingual_share", "multilingual_scripts": "multilingual_scripts"}
# A layout recorded before ``multilingual_scripts`` existed routed by Chinese characters alone.
RECORDED_BEFORE_SCRIPTS = {"multilingual_scripts": "cjk"}


def recorded_layout(layout: object) -> object:
    """A recorded layout (``SpaceLayout.as_dict``) as this version writes it: one recorded before
    ``multilingual_scripts`` routed by Chinese characters. Anything else as it is (refused where it is read)."""
    if isinstance(layout, dict) and set(layout) == set(LAYOUT_SETTINGS) - set(RECORDED_BEFORE_SCRIPTS):
        return {**layout, **RECORDED_BEFORE_SCRIPTS}
    return layout


def with_recorded_routing(settings: Settings) -> Settings:
    """``settings`` routing texts between the embedding models as the data dir records (a data dir written before
    the non-Latin rule keeps routing by Chinese characters, so its stored vectors stay in the space each text is
    looked for in), unless ``multilingual_scripts`` was set: then a data dir that records another rule is refused
    until `agent-memory reindex` moves it. Applied where every owner opens its data dir
    (``ingest/upgrade.open_services``), before the keyword format's upgrade compares the layouts."""
    if "multilingual_scripts" in settings.model_fields_set:
        return settings
    recorded = recorded_layout(read_index_format(settings.data_dir).get("embedding"))
    scripts = recorded.get("multilingual_scripts") if isinstance(recorded, dict) else None
    if scripts in SCRIPT_SHARES and scripts != settings.multilingual_scripts:
        return settings.model_copy(update={"multilingual_scripts": scripts})
    return settings


def describe_layout(layout: object) -> str:
    """A recorded or wanted layout (``SpaceLayout.as_dict``) as the settings that give it, by their variable
    names: what a person sets to get it back. A marker written by hand that is no such layout, as JSON."""
    if not isinstance(layout, dict) or set(layout) != set(LAYOUT_SETTINGS) or not layout["default_model"]:
        return json.dumps(layout, ensure_ascii=False)
    default = f"{setting_variable('embedding_model')}={layout['default_model']}"
    if not layout["multilingual_model"]:
        return f"{default} alone (no other {setting_variable('multilingual_embedding_model')})"
    return ", ".join(f"{setting_variable(name)}={layout[key]}" for key, name in LAYOUT_SETTINGS.items())


def settings_for_stored_layout(settings: Settings) -> Settings:
    """``settings`` with the embedding models the data dir records (unchanged where it records none, or the
    same): for a command that encodes nothing (``READS_STORED``), which then reads the vectors where they are
    instead of being refused for settings it would not use."""
    recorded = recorded_layout(read_index_format(settings.data_dir).get("embedding"))
    if (not isinstance(recorded, dict) or set(recorded) != set(LAYOUT_SETTINGS)
            or recorded == space_layout(settings).as_dict()):
        return settings
    return settings_with_layout(settings, recorded)


def settings_with_layout(settings: Settings, layout: dict) -> Settings:
    """``settings`` asking for the embedding ``layout`` (``SpaceLayout.as_dict``)."""
    return settings.model_copy(update={"embedding_model": layout["default_model"],
                                       "multilingual_embedding_model": layout["multilingual_model"],
                                       "multilingual_share": layout["multilingual_share"] or settings.multilingual_share,
                                       "multilingual_scripts": recorded_layout(layout).get(
                                           "multilingual_scripts", settings.multilingual_scripts)})


def check_models_installed(settings: Settings) -> None:
    """Raise the ``ConfigError`` loading would raise for an embedding model ``settings`` name that is not
    installed, without loading any (core/embedding.py ``check_model_installed``), or for a cross-encoder
    folder that is missing or holds another model (its files' headers read, no weight)."""
    layout = space_layout(settings)
    for model in dict.fromkeys(m for m in (layout.default_model, layout.multilingual_model) if m):
        check_model_installed(model)
    if settings.cross_encoder_model is not None:
        from agent_memory.core.onnx_cross_encoder import CrossEncoderDir

        CrossEncoderDir(settings.cross_encoder_model)


def build_services(settings: Settings | None = None) -> Services:
    return Services(settings or load_settings())
