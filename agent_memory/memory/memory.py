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

The document calls (``add`` ... ``forget``) are in ``documents.py`` and the session calls (``session``,
``add_message`` ... ``delete_session``) in ``sessions.py``, base classes of ``Memory``; the argument
checks the calls share are in ``arguments.py``.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
import threading
from collections import OrderedDict
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from agent_memory.answer import Answer, Answerer
from agent_memory.conversation.working_memory import CATCH_UP_WAIT_S, WorkingMemory, session_key
from agent_memory.core.config import Settings, load_settings
from agent_memory.core.diskspace import check_free
from agent_memory.core.errors import ClosedError, ConfigError, StoreError
from agent_memory.core.limits import MAX_ANSWER_TOKENS, MAX_SEARCH_LIMIT, whole_number
from agent_memory.core.owner import PYTHON_COMMAND, DataDirBusyError, held_here, own
from agent_memory.core.records import TurnRecord
from agent_memory.core.tokens import MAX_PROMPT_BUDGET
from agent_memory.index.importance import raise_importance
from agent_memory.ingest.archive import archiver
from agent_memory.ingest.pipeline import IngestionPipeline
from agent_memory.ingest.upgrade import open_services
from agent_memory.ingest.upkeep import empty_tenant_note, tenants_with_data
from agent_memory.memory.arguments import (
    check_question,
    check_tenant,
    expect_type,
    filter_args,
)
from agent_memory.memory.documents import Added, DocumentMethods, Progress
from agent_memory.memory.sessions import SessionMethods
from agent_memory.retrieval.pipeline import RetrievalPipeline
from agent_memory.retrieval.types import Decision, Passage, PromptResult
from agent_memory.services import Services

log = logging.getLogger(__name__)
__all__ = ["Added", "AskResult", "Memory", "Progress"]


@dataclass
class AskResult:
    """An answer and the prompt it was drawn from. In ``retrieval-only`` mode (no LLM configured, or
    it failed) ``answer`` is the best passage's text (None when nothing was recalled) and
    ``citations`` names that passage's source."""

    answer: str | None
    mode: str  # "llm" or "retrieval-only"
    citations: list[dict[str, Any]]  # source IDs the answer cites, with the prompt text behind each
    result: PromptResult
    details: Answer = field(repr=False)  # usage, timings, invented citations, the LLM's error


# The decisions of a prompt that change what the caller gets and that the caller is told (the MCP recall's
# ``notes``): the tenant holds nothing, the session named does not exist, archiving was still catching up.
NOTE_ACTIONS = ("empty tenant", "no such session", "archive catching up")


def prompt_notes(result: PromptResult) -> list[str]:
    """The reasons of ``result``'s decisions in ``NOTE_ACTIONS``, in order."""
    return [d.reason for d in result.decisions if d.action in NOTE_ACTIONS]


class Memory(DocumentMethods, SessionMethods):
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
    ingests need not wait at all.
    """

    catch_up_wait_s: float = CATCH_UP_WAIT_S  # the bound on a read's wait (working_memory.py)

    def __init__(self, data_dir: str | Path | None = None, *, tenant: str | None = None,
                 settings: Settings | None = None, services: Services | None = None, preset: str = "default",
                 promote: bool = True, name_other_tenants: bool = True, archive_in_background: bool = False) -> None:
        """``name_other_tenants``: a question to a tenant that holds nothing gets a note naming the tenants
        that hold data (the CLI and Python); the HTTP API turns it off where API keys bind each caller to
        its own tenant. ``archive_in_background``: an appended message is archived to long-term memory on
        a worker thread, as under the HTTP API, instead of before ``add_message`` returns (read-your-writes,
        the default); then an append never waits for an ingestion another thread runs, which holds the
        write lock for its whole length. The session's own recent turns answer meanwhile."""
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
        # One writer at a time: re-ingesting a source is not atomic (new items, then stale deleted).
        self.write_lock = threading.Lock()
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
            return self._working_memory

    @property
    def pipeline(self) -> RetrievalPipeline:
        with self._build_lock:
            self._check_open()
            if "_pipeline" not in self.__dict__:
                memory = self.working_memory
                self._pipeline = RetrievalPipeline.from_services(
                    self.services, self.preset, recent_turns=memory.recent_turns,
                    session_summaries=memory.summaries)
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
                                                      session_summaries=memory.summaries)
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

    def settle(self) -> str | None:
        """Wait until long-term memory holds every archived message: the start's catch-up of what an
        earlier process left unarchived (it starts here if nothing started it yet) and, when archiving is
        inline (the default), any queued pass. At most ``catch_up_wait_s`` seconds; then a warning is
        logged and returned as a note (None when settled, or with ``promote=False``). Every read of
        long-term memory calls it first."""
        if not self._promote:
            return None
        if self.working_memory.settle(self.catch_up_wait_s):
            return None
        note = (f"archiving the messages an earlier run left unarchived took more than {self.catch_up_wait_s:g} s; "
                f"answered without those not archived yet (they are found once it finishes)")
        log.warning(note)
        return note

    # ---- questions -------------------------------------------------------------------------------
    def prompt(self, question: str, *, budget: int = 1800, session_id: str | None = None,
               filters: Mapping[str, Any] | Any | None = None, debug: bool = False,
               question_date: str | None = None, tenant: str | None = None, preset: str | None = None,
               overrides: Mapping[str, Any] | None = None) -> PromptResult:
        """The bounded prompt for ``question``: recalled passages tagged ``[S:<source id>]``, the
        session's recent turns, never more than ``budget`` tokens. ``filters`` takes ``source_ids``,
        ``kinds``, ``created_after``, ``created_before`` (Unix time). ``preset`` and ``overrides`` change
        the retrieval settings for this call (agent_memory/retrieval/config.py); unknown names raise ConfigError.
        On a tenant that holds nothing, ``decisions`` says so and names the tenants that hold data."""
        # The API's caps (core/limits.py): the same call works locally and through a server, or neither.
        check_question(question)
        whole_number(expect_type(budget, int, "budget", "an int (tokens)"), "budget", 1, MAX_PROMPT_BUDGET)
        tenant = self._tenant(tenant)
        if session_id is not None:
            self._session_id(session_id, tenant)
        pending = self.settle()
        result = self.pipeline_for(preset, overrides).run(question, tenant=tenant, session_id=session_id, budget=budget,
                                 debug=debug, question_date=question_date, **filter_args(filters))
        note = None if result.passages else empty_tenant_note(self.services, tenant,
                                                               name_others=self.name_other_tenants)
        if note:
            result.decisions.append(Decision("retrieve", tenant, "empty tenant", note))
        if pending:
            result.decisions.append(Decision("retrieve", tenant, "archive catching up", pending))
        if session_id is not None and not self.session_exists(session_id, tenant=tenant):
            # A misspelled session ID answers from long-term memory alone: said, so the caller can tell.
            result.decisions.append(Decision("recent", session_id, "no such session",
                                             f"no session {session_id!r} for this tenant: no recent turns "
                                             "shared the budget (answered from long-term memory alone)"))
        return result

    def tenants(self) -> list[str]:
        """The tenants that hold stored memory, by name."""
        self.settle()
        return tenants_with_data(self.services)

    def search(self, query: str, *, limit: int = 10, session_id: str | None = None,
               filters: Mapping[str, Any] | Any | None = None, tenant: str | None = None) -> list[Passage]:
        """Ranked passages with their scores (best first), as the prompt would place them: at most
        ``limit`` (1 to MAX_SEARCH_LIMIT; what the search budget holds may return fewer)."""
        check_question(query, "query")
        whole_number(limit, "limit", 1, MAX_SEARCH_LIMIT)  # -1 would slice off the last; the API's cap
        result = self.prompt(query, budget=self.pipeline.config.search_budget, session_id=session_id, filters=filters, tenant=tenant)
        ranked = [p for p in result.passages if p.section != "recent"]
        return sorted(ranked, key=lambda p: p.score, reverse=True)[:limit]

    def ask(self, question: str, *, budget: int = 1800, session_id: str | None = None,
            filters: Mapping[str, Any] | Any | None = None, max_answer_tokens: int = 512, debug: bool = False,
            question_date: str | None = None, tenant: str | None = None, preset: str | None = None,
            overrides: Mapping[str, Any] | None = None) -> AskResult:
        """An answer from the configured LLM with citations checked against the prompt's own tags;
        without an LLM (or when it fails) a retrieval-only answer (``mode == "retrieval-only"``): the
        best passage's text, citing its source (``answer`` is None only when nothing was recalled;
        ``details.llm_error`` says why an LLM answer failed)."""
        # Checked before the prompt is built: a refused call costs no retrieval, as through the API.
        whole_number(max_answer_tokens, "max_answer_tokens", 1, MAX_ANSWER_TOKENS)
        result = self.prompt(question, budget=budget, session_id=session_id, filters=filters, debug=debug,
                             question_date=question_date, tenant=tenant, preset=preset, overrides=overrides)
        details = self._answerer.answer(result, max_tokens=max_answer_tokens)
        if details.mode == "llm":
            self.reinforce(result, [c["source_id"] for c in details.citations], tenant=tenant)
            return AskResult(details.answer, details.mode, details.citations, result, details)
        # Recalled memory first: the session's own recent turns are what the caller just said.
        recalled = [p for p in result.passages if p.section != "recent"] or result.passages
        best = max(recalled, key=lambda p: p.score, default=None)
        if best is None:
            return AskResult(None, details.mode, [], result, details)
        return AskResult(best.text, details.mode, [{"source_id": best.source_id, "passages": [best.text]}], result,
                         details)

    def reinforce(self, result: PromptResult, cited: Sequence[str], *, tenant: str | None = None) -> dict[str, float]:
        """Raise the importance of what an answer cited by ``importance_citation_step`` (capped at 1.0): the
        passages placed under each cited source ID, or, for a source cited only through a fact, all its
        items. Best effort: a store failure is logged and the answer stands. Returns item ID -> importance."""
        step = self.settings.importance_citation_step
        if step <= 0 or not cited:
            return {}
        tenant = self._tenant(tenant)
        placed: dict[str, list[str]] = {}
        for passage in result.passages:
            if passage.section != "recent":  # the live session's turns are not long-term items yet
                placed.setdefault(passage.source_id, []).extend(passage.item_ids)
        try:
            self.check_space("raising importance")  # a payload write too: never on a nearly full disk
            with self._importance_lock:
                ids = [i for sid in dict.fromkeys(cited)
                       for i in (placed.get(sid) or self.services.vectors.ids_for_source(tenant, sid))]
                return raise_importance(self.services.vectors, ids, step)
        except StoreError as exc:
            log.warning("raising the importance of cited sources %s failed: %s", list(cited)[:5], exc)
            return {}

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
