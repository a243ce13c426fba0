"""The Python API: ``Memory``, one object over the services for an agent written in Python.

    from agent_memory import Memory

    with Memory(data_dir="data") as memory:
        memory.add("The X-300 replaced the X-200.", source_id="notes/sensors")
        memory.add_message("s1", {"role": "user", "content": "Order 40 X-300s."}, retention="strict")
        result = memory.prompt("Which sensor replaced the X-200?", budget=800, session_id="s1")
        print(result.prompt)                      # every passage tagged [S:<source id>]

This is a surface: it sits above ``retrieval`` and ``ingest`` and builds their pipelines
from the services that ``agent_memory.services.build_services`` makes (the only place that
builds services; ``ingest/upgrade.open_services`` brings an older data dir's keyword format up to date first). The CLI, the HTTP API, the MCP server and the LangChain adapters are thin
layers over it. ``agent_memory`` exposes ``Memory`` lazily, so importing the core never
imports this module (nor the pipelines) upward.

Tenants: every call runs for the tenant given to the constructor (default: the settings'
tenant); a ``tenant=`` keyword on a call selects another one for that call only. One tenant
never reads another's documents or sessions.

The document calls (``add`` ... ``forget``) are in ``documents.py``, the session calls (``session``,
``add_message`` ... ``delete_session``) in ``sessions.py``, the question calls (``prompt``, ``search``,
``ask``, ``reinforce``, ``tenants``) in ``questions.py`` and ``export`` / ``import_export`` in ``transfer.py``,
base classes of ``Memory``; the argument checks the calls share are in ``arguments.py``.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
import threading
from collections import OrderedDict
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Mapping, Sequence

from agent_memory.answer import Answerer
from agent_memory.conversation.archived_turns import session_key
from agent_memory.conversation.working_memory import CATCH_UP_WAIT_S, WorkingMemory
from agent_memory.core.config import Settings, load_settings
from agent_memory.core.diskspace import check_free
from agent_memory.core.errors import ClosedError, ConfigError
from agent_memory.core.owner import PYTHON_COMMAND, DataDirBusyError, held_here, own
from agent_memory.core.records import SearchFilter, TurnRecord
from agent_memory.ingest.archive import archiver
from agent_memory.ingest.backup import backup
from agent_memory.ingest.pipeline import IngestionPipeline
from agent_memory.ingest.upgrade import open_services
from agent_memory.memory.arguments import check_tenant
from agent_memory.memory.documents import Added, DocumentMethods, Progress
from agent_memory.memory.questions import AskResult, QuestionMethods
from agent_memory.memory.sessions import SessionMethods
from agent_memory.memory.transfer import TransferMethods
from agent_memory.retrieval.config import load_preset
from agent_memory.retrieval.pipeline import RetrievalPipeline
from agent_memory.services import Services

log = logging.getLogger(__name__)
__all__ = ["Added", "AskResult", "Memory", "Progress"]


class Memory(DocumentMethods, SessionMethods, QuestionMethods, TransferMethods):
    """Long memory inside a bounded prompt: documents, sessions, prompts, answers, forgetting.

    ``Memory()`` reads the settings from the environment (``AGENT_MEMORY_*``); ``data_dir``
    overrides where the embedded stores live; ``settings`` or ready ``services`` may be passed
    instead (services passed in are not closed by ``close()``). Heavy parts load on first use.
    Thread-safe: writes (ingestion, forgetting) are serialized, reads run concurrently.

    Read-your-writes across a restart: opening a ``Memory`` returns at once, while messages a previous
    process appended but never archived (a crash) are archived on a thread; a read of long-term memory
    (``prompt``, ``search``, ``ask``, ``tenants``, ``matching_sources``, ``similar_sources``, ``forget``)
    waits for that catch-up first (``settle``), at most ``catch_up_wait_s`` seconds, then answers with
    what is stored and a warning (and, for a prompt, a note in ``decisions``). Opening stays quick
    because most uses after a clean stop have nothing to catch up, and one that only appends or
    ingests need not wait at all. The same holds within a process: ``add_message`` returns once the
    message is stored in its session, and archives it on a worker thread (an agent's tool results are
    embedded there, while the agent goes on); the next read of that tenant's memory waits for what is
    still queued, so a question right after an append finds it.
    """

    catch_up_wait_s: float = CATCH_UP_WAIT_S  # the bound on a read's wait (working_memory.py)

    def __init__(self, data_dir: str | Path | None = None, *, tenant: str | None = None,
                 settings: Settings | None = None, services: Services | None = None, preset: str = "default",
                 promote: bool = True, name_other_tenants: bool = True, archive_in_background: bool = False,
                 check_queued_writes: bool = True) -> None:
        """``name_other_tenants``: a question to a tenant that holds nothing gets a note naming the tenants
        that hold data (the CLI and Python); the HTTP API turns it off where API keys bind each caller to
        its own tenant. ``archive_in_background``: reads do not wait for the archive passes appends queued,
        as under the HTTP API (the session's own recent turns answer meanwhile), where by default a read
        waits for its tenant's (read-your-writes).
        ``check_queued_writes`` (default): a forget first asks the jobs queued in PostgreSQL for workers
        (``Services.queued_writes``) and refuses a source one of them will store (SourceBusyError, nothing
        removed); the HTTP API, which asks its own queue when a delete comes, and its workers, whose forget jobs
        were accepted then, turn it off."""
        if services is not None and (settings is not None or data_dir is not None):
            raise ConfigError("pass either services, or settings/data_dir to build them from, not both")
        self._owns_services = services is None
        self._hold = ExitStack()  # the data dir's owner lock, when this object took it
        if services is None:
            settings = settings or load_settings()
            if data_dir is not None:
                settings = settings.model_copy(update={"data_dir": Path(data_dir)})
            self._own_data_dir(settings.data_dir)
            try:
                services = open_services(settings)
            except BaseException:
                self._hold.close()
                raise
        self._services = services
        self._closed = False
        self.settings = services.settings
        self.tenant = self._tenant(self.settings.tenant if tenant is None else tenant)
        self.preset = preset
        self._promote = promote
        self._archive_in_background = archive_in_background
        self.name_other_tenants = name_other_tenants
        self._check_queued_writes = check_queued_writes
        # One writer at a time: re-ingesting a source is not atomic (new items, then stale deleted). Reentrant:
        # the HTTP API takes it to decide that a small write runs inline and keeps it through that write
        # (api/ingestion.write_inline), so that no job takes it in between.
        self.write_lock = threading.RLock()
        self._build_lock = threading.RLock()  # pipeline builds working_memory under it
        # Importance raises read then write: serialized, but apart from the write lock, which a whole
        # ingestion job holds (an answer must not wait for it).
        self._importance_lock = threading.Lock()

    def _own_data_dir(self, data_dir: Path) -> None:
        """Hold ``data_dir`` as the CLI and ``serve`` do (agent_memory/core/owner.py): two processes, or two
        ``Memory`` objects in one, on one data dir break each other's session sequence numbers and the
        embedded stores' file locks. Inside a command that holds it already, share that hold."""
        here = held_here(data_dir)
        if here == PYTHON_COMMAND:
            raise DataDirBusyError(f"cannot open a Memory on {data_dir}: another Memory in this process has it "
                                   f"open; share that object (it is thread-safe) or close it first")
        if here is None:
            self._hold.enter_context(own(data_dir, PYTHON_COMMAND, doing="open it with Memory()"))

    # ---- the parts, built on first use ------------------------------------------------------------
    @property
    def services(self) -> Services:
        """The stores and clients every call uses; ClosedError once ``close()`` has run."""
        self._check_open()
        return self._services

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedError("this Memory is closed: open a new one (a closed Memory no longer holds its data "
                              "dir, which another may have opened since)")

    @property
    def ingestion(self) -> IngestionPipeline:
        with self._build_lock:
            self._check_open()
            if "_ingestion" not in self.__dict__:
                self._ingestion = IngestionPipeline(self.services)
            return self._ingestion

    @property
    def working_memory(self) -> WorkingMemory:
        with self._build_lock:
            self._check_open()
            if "_working_memory" not in self.__dict__:
                self._working_memory = WorkingMemory(self.services,
                                                     promote=self._promote_turns if self._promote else None)
                self._working_memory.background = self._archive_in_background
                # Ranked by meaning in the served settings: each summary's lines embedded by the archive pass.
                self._working_memory.embed_summary_lines = self._summaries_by_meaning()
            return self._working_memory

    def _summaries_by_meaning(self) -> bool:
        """Whether the served settings rank the live summaries by meaning (an unknown preset: said by the first
        question, not by an append)."""
        try:
            summaries = load_preset(self.preset).live_summaries
        except ConfigError:
            return False
        return summaries.by_question and summaries.dense > 0

    @property
    def pipeline(self) -> RetrievalPipeline:
        with self._build_lock:
            self._check_open()
            if "_pipeline" not in self.__dict__:
                memory = self.working_memory
                self._pipeline = RetrievalPipeline.from_services(
                    self.services, self.preset, recent_turns=memory.recent_turns,
                    session_summaries=memory.summaries, summary_line_vectors=memory.summary_line_vectors)
            return self._pipeline

    def pipeline_for(self, preset: str | None = None, overrides: Mapping[str, Any] | None = None) -> RetrievalPipeline:
        """The served pipeline, or one for a named preset and/or overrides of its settings (validated
        strictly, merged deeply; kept for reuse, the least recently used of more than 16 closed)."""
        if (preset is None or preset == self.preset) and not overrides:
            return self.pipeline
        preset = self.preset if preset is None else preset  # "" is no preset, refused by name (not the default)
        key = json.dumps([preset, overrides or {}], sort_keys=True, default=str)
        with self._build_lock:
            self._check_open()
            variants = self.__dict__.setdefault("_variants", OrderedDict())
            if key in variants:
                variants.move_to_end(key)
                return variants[key]
            memory = self.working_memory
            variant = RetrievalPipeline.from_services(self.services, preset, dict(overrides or {}),
                                                      recent_turns=memory.recent_turns,
                                                      session_summaries=memory.summaries,
                                                      summary_line_vectors=memory.summary_line_vectors)
            variants[key] = variant
            if len(variants) > 16:
                variants.popitem(last=False)[1].close()
            return variant

    @functools.cached_property
    def _answerer(self):
        return Answerer(self.services.llm)

    def check_space(self, what: str) -> None:
        # Before the write, never during it: the embedded vector engine dies of SIGBUS on a full disk.
        check_free(self.settings.data_dir, self.settings.min_free_mb, what)

    def _promote_turns(self, turns: Sequence[TurnRecord]) -> None:
        """Working-memory turns into long-term memory (agent_memory/ingest/archive.py: transcript ingestion's own
        ``ingest_turns``, under the write lock; a store failure raised so the watermark stays)."""
        # Private parts: close() flushes a queued pass through here after the Memory is marked closed.
        check_free(self.settings.data_dir, self.settings.min_free_mb, "archiving to long-term memory")
        archiver(self._services, self.write_lock)(turns)

    def _tenant(self, tenant: str | None) -> str:
        """``tenant`` checked (``arguments.check_tenant``), or this Memory's tenant for None."""
        return check_tenant(tenant, self._holds_tenant) if tenant is not None else self.tenant

    def _holds_tenant(self, tenant: str) -> bool:
        """Whether a source or a session is stored under ``tenant``: asked only of a name the tenant rule
        refuses, which a data dir written before the rule may hold (it stays readable and forgettable)."""
        services = self.services
        return (services.catalog.count(tenant) > 0
                or bool(services.sessions.store.session_rows(session_key(tenant, ""))))

    def holds_tenant(self, tenant: str) -> bool:
        """Whether any store holds data of ``tenant``: a session, a catalog record, an item, a graph entity (a
        tenant whose catalog was lost counts too). What an operator's removal of a tenant asks first, so that a
        misspelt name is said to be unknown rather than answered with counts of zero."""
        services = self.services
        return (self._holds_tenant(tenant) or services.vectors.count(SearchFilter(tenant=tenant)) > 0
                or any(services.graph.stats(tenant).values()))

    def settle(self, tenant: str | None = None) -> str | None:
        """Wait until long-term memory holds every archived message: the start's catch-up of what an
        earlier process left unarchived (it starts here if nothing started it yet) and, when archiving is
        not in the background (the default), the passes appends queued (``tenant``'s alone when named: a
        question of one tenant never waits for another's). At most ``catch_up_wait_s`` seconds; then a
        warning is logged and returned as a note (None when settled, or with ``promote=False``). Every read
        of long-term memory calls it first."""
        if not self._promote:
            return None
        if self.working_memory.settle(self.catch_up_wait_s, tenant):
            return None
        note = (f"archiving appended messages (or those an earlier run left unarchived) took more than "
                f"{self.catch_up_wait_s:g} s; answered without those not archived yet (they are found once it "
                f"finishes)")
        log.warning(note)
        return note

    def backup(self, destination: str | Path) -> dict[str, Any]:
        """Copy the data dir's stores into ``destination`` (a new or empty folder) while writes wait: the copy
        opens as a data dir as it is (agent_memory/ingest/backup.py). Returns what it holds."""
        return backup(self.services, destination, self.write_lock).to_dict()

    # ---- lifetime --------------------------------------------------------------------------------
    def close(self) -> None:
        """Close the pipeline, the sessions and (when built here) the services, and give the data dir back.
        From then on every call raises ClosedError (open a new Memory); closing again does nothing."""
        with self._build_lock:
            if self._closed:
                return
            self._closed = True
            self.__dict__.pop("_ingestion", None)
            pipeline = self.__dict__.pop("_pipeline", None)
            sessions = self.__dict__.pop("_working_memory", None)
            variants = self.__dict__.pop("_variants", {})
        for variant in variants.values():
            variant.close()
        if pipeline is not None:
            pipeline.close()
        if sessions is not None:
            sessions.close()
        try:
            if self._owns_services:
                self._services.close()
        finally:
            self._hold.close()

    def __enter__(self) -> Memory:
        self._check_open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _refused_when_closed(method):
    @functools.wraps(method)
    def checked(self, *args, **kwargs):
        self._check_open()
        return method(self, *args, **kwargs)
    return checked


# Every public call, those of DocumentMethods and SessionMethods included, raises ClosedError on a closed
# Memory before it touches anything: the parts it built are gone and it no longer holds the data dir, so a
# call must never build them again (it would write beside whichever Memory opened the data dir since).
for _name, _method in inspect.getmembers(Memory, inspect.isfunction):
    if not _name.startswith("_") and _name != "close":
        setattr(Memory, _name, _refused_when_closed(_method))
