"""Working memory wired to the rest: the archive into long-term memory and the retrieval routes.

Sessions are keyed ``<tenant>/<session id>`` so that one tenant never reads another's working
memory. Every user and assistant message is archived: handed as a ``TurnRecord`` to the
``archive`` callback, which the caller wires to the ingestion pipeline's ``ingest_turns``
(``agent_memory.memory.Memory`` does), the one code path transcript ingestion takes too, so an
appended turn is stored exactly as an ingested one (speaker from the message's ``name``, else
its role; the session and position; turn-context and sentence vectors; triples), under the
source ID ``<session id>/m<seq>``; a tool turn names its tools (``metadata["tools"]``) and gets neither
context nor sentence vectors (``index/context.py``). The detector's significance is an importance signal and a
recorded reason (``agent_memory/index/importance.py``), never a gate. A tool call and its results
become one turn, a late result a turn of its own (``tool_turns.py``). Not archived: forgettable
messages (a forgettable result of a call, unless the pair holds a strict message), system messages and
sub-agents' messages (the agent's own steps; what they find reaches the main session).

The session store is the archive's log: each session has a watermark (``archived_through``);
a pass archives what lies past it, then raises it. A pass is queued after each append, on one worker
thread (an append returns once its message is stored: embedding an agent's tool payloads took most of
an append's time, and a pass that starts behind others archives all they left in one batch), and runs
once at start for every session left behind (a crash, a restart), so nothing appended is lost, and
``ingest_turns`` skipping unchanged content makes a repeated pass write nothing. A read of a tenant's
long-term memory waits for that tenant's queued passes (``settle``: read-your-writes), unless
``background`` is set, as the HTTP API does, where the session's own recent turns answer meanwhile.
The start's catch-up runs on a daemon thread (opening a ``Memory`` never waits for it), and a read
of long-term memory waits for it (``settle``; ``Memory`` calls it before every recall): a question
asked right after a restart finds the turns the last process left unarchived, as it would have
before the crash. The wait is bounded by ``CATCH_UP_WAIT_S``; past it the read answers without the
rest, with a logged warning and a note, rather than hang behind a huge backlog or a stuck store.
The callback keeps this core module from importing ``ingest``, a layer above it. Retrieval's
"recent" and "summaries" routes read the live session from here, so one budget covers both
working memory and recalled memory.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Callable, Sequence

from agent_memory.conversation.archived_turns import (
    catalog_recent_turns,
    numbered_turns,
    session_key,
    split_key,
    turn_source_id,
)
from agent_memory.conversation.expiry import is_removal
from agent_memory.conversation.messages import text_of
from agent_memory.conversation.pass_records import TURN_ROLES, PassNotes, iso_time, pass_records, speaker_of
from agent_memory.conversation.session import Appended
from agent_memory.conversation.summary_vectors import LineVectors, embed_new_summaries, stored_line_vectors
from agent_memory.conversation.tool_turns import LATE_RESULT_LOOKBACK
from agent_memory.core.errors import contained
from agent_memory.core.records import MemoryItem, TurnRecord

# Stores archived turns in long-term memory, e.g. IngestionPipeline(services, summaries=False).ingest_turns.
Promote = Callable[[Sequence[TurnRecord]], Any]

log = logging.getLogger(__name__)
# Messages before the watermark read again with a pass: the turn before its first one (context).
CONTEXT_LOOKBACK = 20
# How long a read waits for the start's catch-up (and, for a synchronous Memory, queued passes) before
# it answers without them. Generous: a catch-up embeds every turn a crash left and extracts its triples,
# and a store retrying a lost connection takes tens of seconds; a wait longer than this is a fault.
CATCH_UP_WAIT_S = 120.0
# How far (in messages) a session's archive may fall behind its appends before an append waits for it: past the
# messages a tool call waits for its results (CALL_WAIT_MESSAGES), during which its pass cannot raise the mark.
ARCHIVE_BACKLOG_MESSAGES = 48


class WorkingMemory:
    def __init__(self, services, promote: Promote | None = None) -> None:
        """``promote`` receives the archived turns; without it nothing is archived."""
        self.services = services
        self.sessions = services.sessions  # the process's one manager; the services close it
        self._store_turns = promote
        self.promoted = 0  # turns archived by this process
        # The HTTP API sets this: reads do not wait for queued passes (a question is not held behind another
        # request's large message while it is embedded); else a read waits for its tenant's (read-your-writes).
        self.background = False
        # Set by the owner whose retrieval ranks the live summaries by meaning: each pass embeds the lines of the
        # summaries written since and stores them with the summary (summary_vectors.py).
        self.embed_summary_lines = False
        self._queue: ThreadPoolExecutor | None = None
        self._queue_lock = threading.Lock()
        self._archive_lock = threading.Lock()  # one pass at a time: passes read and raise one watermark
        # The per-turn notes below (reasons, inferred times, turns to archive again) are written by appends on
        # the request thread and cleared by passes on the archive thread: one lock, so a pass that ends after
        # an append redated one of its turns cannot clear the note the next pass needs.
        self._notes_lock = threading.Lock()
        self._queued: set[tuple[str, str]] = set()
        self._last_pass: dict[str, Future] = {}  # per tenant: the pass queued last (what its reads wait for)
        self._reasons: dict[tuple[str, str, int], list[str]] = {}  # the detector's reasons, until archived
        self._inferred: set[tuple[str, str, int]] = set()  # undated turns dated by a later one, until archived
        self._redo: dict[tuple[str, str], int] = {}  # per session: the first archived turn to archive again
        self._appended_at: dict[tuple[str, str, int], float] = {}
        # Per session: its watermark as this process last read or raised it, so an append measures the archive's
        # backlog without a round trip to the store. Each pass reads the stored mark again; ``delete`` drops it.
        self._marks: dict[tuple[str, str], int] = {}
        self.archive_lags: deque[float] = deque(maxlen=100_000)  # seconds from append to searchable
        self._catch_up: threading.Thread | None = None
        self._caught_up = threading.Event()  # set once the start's catch-up has ended (done or failed)
        self.sessions.first_seq = self._first_seq
        if promote is None:
            self._caught_up.set()
        else:
            self.sessions.on_appended = self._appended
            # Sessions left behind by a crash or restart: archived off the caller's path, before
            # (or interleaved with, under the same lock) the passes new appends start.
            self._catch_up = threading.Thread(target=self._start_catch_up, name="archive-catch-up", daemon=True)
            self._catch_up.start()

    def session(self, tenant: str, session_id: str, agent_id: str | None = None):
        return self.sessions.session(session_key(tenant, session_id), agent_id)

    def exists(self, tenant: str, session_id: str, agent_id: str | None = None) -> bool:
        """Whether the session holds a message, or held some that a time to live removed (its marker stays:
        the session keeps its settings, its view says what went and its numbering goes on)."""
        key = (session_key(tenant, session_id), agent_id or "")
        return self._holds_messages(key) or any(is_removal(row) for row in self.sessions.store.summaries(key))

    def _holds_messages(self, key: tuple[str, str]) -> bool:
        return bool(self.sessions.store.recent(key, 1))

    def _first_seq(self, session: str, agent_id: str) -> int:
        """Where an empty session's numbering starts: after the last turn long-term memory holds under its
        ID (a session deleted without forgetting its archive, its ID used again), else 0. A sub-agent's
        steps are never archived, so its numbering starts at 0."""
        if agent_id:
            return 0
        tenant, session_id = split_key(session, self.services.settings.tenant)
        after, numbered = numbered_turns(self.services.catalog, tenant, session_id)
        # Past any ``<session id>/m<n>`` already stored too (turns of Memory.add_turns carry their own IDs and
        # no position): a live turn never lands on an ID another write holds.
        return max([after, *(n + 1 for n in numbered.values())])

    # -- the archive -----------------------------------------------------------------------
    def _appended(self, record: Appended) -> None:
        key = (record.session_id, record.agent_id or "")
        with self._notes_lock:
            if record.reasons:
                self._reasons[(*key, record.seq)] = record.reasons
            if record.inferred:
                self._inferred.add((*key, record.seq))
            if record.redated:  # archived already, with the time they were appended: archived again, dated
                for seq, reasons in record.redated.items():
                    self._inferred.add((*key, seq))
                    if reasons:
                        self._reasons[(*key, seq)] = reasons
                self._redo[key] = min(self._redo.get(key, record.seq), *record.redated)
            self._appended_at[(*key, record.seq)] = time.monotonic()
        if record.more:
            return  # a batch: the pass after its last message archives it whole, every reason known by then
        tenant = split_key(key[0], self.services.settings.tenant)[0]
        with self._queue_lock:
            if key not in self._queued:  # else a queued pass will read this message too
                self._queued.add(key)
                if self._queue is None:
                    self._queue = ThreadPoolExecutor(max_workers=1, thread_name_prefix="archive")
                # One worker, first in first out: once the tenant's last pass is done, so are its earlier ones.
                self._last_pass[tenant] = self._queue.submit(self._queued_pass, key)
        mark = self._marks.get(key)
        if mark is None:  # the first append to this session in this process: the store's mark, once
            mark = self._marks[key] = self.sessions.store.archived_through(key)
        if not self.background and record.seq - mark > ARCHIVE_BACKLOG_MESSAGES:
            # Far behind (appends with no pause between them on a busy machine): this append waits for the pass, so
            # what a question waits for stays bounded, where a backlog of minutes would run past its bound.
            self.queued(CATCH_UP_WAIT_S, tenant)

    def _queued_pass(self, key: tuple[str, str]) -> None:
        with self._queue_lock:
            self._queued.discard(key)
        self.archive(*key)

    def _start_catch_up(self) -> None:
        try:
            self.catch_up()
        finally:
            self._caught_up.set()

    @property
    def caught_up(self) -> bool:
        """Whether the start's catch-up has ended."""
        return self._caught_up.is_set()

    def settle(self, timeout: float = CATCH_UP_WAIT_S, tenant: str | None = None) -> bool:
        """Wait, at most ``timeout`` seconds, until what long-term memory should hold is in it: the start's
        catch-up, and, unless archiving runs in the background (where the session's own recent turns answer
        meanwhile, by design), the queued passes (``queued``). False when the time ran out first."""
        deadline = time.monotonic() + timeout
        if not self._caught_up.wait(timeout):
            return False
        return self.background or self.queued(max(0.0, deadline - time.monotonic()), tenant)

    def queued(self, timeout: float = CATCH_UP_WAIT_S, tenant: str | None = None) -> bool:
        """Wait, at most ``timeout`` seconds, for the passes appends queued: those of ``tenant``'s sessions (a
        question reads its own tenant's memory: another tenant's backlog is no wait of its), every one for None.
        False when the time ran out first."""
        with self._queue_lock:
            queue = self._queue
            last = self._last_pass.get(tenant) if tenant is not None else None
        if queue is None or (tenant is not None and last is None):
            return True
        try:
            if last is None:
                last = queue.submit(lambda: None)
            last.result(timeout=timeout)
        except FutureTimeout:
            return False
        except RuntimeError:  # shut down: closing drained it
            pass
        return True

    def catch_up(self) -> int:
        """Archive every session holding messages past its watermark; returns the turns written."""
        written = 0
        try:
            for key in self.sessions.store.unarchived():
                written += self.archive(*key)
        except Exception as exc:  # noqa: BLE001 - the next append or start tries again
            log.warning("archive catch-up stopped: %s", exc)
        return written

    def archive(self, session: str, agent_id: str = "") -> int:
        """One pass over a session's messages past its watermark: the turns among them into long-term
        memory, then the mark raised. A failure leaves the mark (logged; the next pass retries).
        Returns the turns written."""
        if self._store_turns is None:
            return 0
        key = (session, agent_id)
        store = self.sessions.store
        redo = None
        try:
            with self._archive_lock:
                with self._notes_lock:
                    redo = self._redo.pop(key, None)
                mark = store.archived_through(key)
                self._marks[key] = mark
                # Turns redated since they were archived are read again: unchanged ones are skipped by
                # ingestion (same content hash), the redated ones rewritten with their inferred time.
                start = mark if redo is None else min(mark, redo - 1)
                rows = store.messages_after(key, max(-1, start - CONTEXT_LOOKBACK))
                tenant, session_id = split_key(session, self.services.settings.tenant)
                records, through = pass_records(rows, start, tenant=tenant, session_id=session_id,
                                                notes=self._notes(key), sub_agent=bool(agent_id))
                if records:
                    # contained: a native panic fails this pass only (the mark stays; the next pass retries)
                    contained(self._store_turns, records)  # the callback serializes its writes (Memory's write lock)
                if through > mark:
                    store.mark_archived(key, through)
                    self._marks[key] = through
        except Exception as exc:  # noqa: BLE001 - the history is safe in the store; the next pass retries
            if redo is not None:
                with self._notes_lock:
                    self._redo[key] = min(self._redo.get(key, redo), redo)
            log.warning("archiving session %s (agent %r) failed: %s", session, agent_id, exc)
            return 0
        self.promoted += len(records)
        if self.embed_summary_lines and not agent_id:
            self._embed_summaries(key)
        now = time.monotonic()
        with self._notes_lock:
            again = self._redo.get(key)  # redated while this pass ran: the next pass needs their notes
            for seq in range(start + 1, through + 1):
                if again is not None and seq >= again:
                    continue
                self._reasons.pop((*key, seq), None)
                self._inferred.discard((*key, seq))
                appended = self._appended_at.pop((*key, seq), None)
                if appended is not None:
                    self.archive_lags.append(now - appended)
        return len(records)

    def _notes(self, key: tuple[str, str]) -> PassNotes:
        """What the appends noted of session ``key``'s messages, for a pass over them."""
        def rows_before(seq: int) -> list[dict[str, Any]]:
            return [row for row in self.sessions.store.messages_after(key, max(-1, seq - LATE_RESULT_LOOKBACK))
                    if row["seq"] < seq]
        return PassNotes(reasons=lambda seq: self._reasons.get((*key, seq)),
                         inferred=lambda seq: (*key, seq) in self._inferred, rows_before=rows_before)

    def _embed_summaries(self, key: tuple[str, str]) -> None:
        try:
            embed_new_summaries(self.sessions.store, key, self.services.embedder)
        except Exception as exc:  # noqa: BLE001 - a question embeds the lines itself; the next pass tries again
            log.warning("embedding the summaries of session %s failed: %s", key[0], exc)

    def summary_line_vectors(self, tenant: str, session_id: str) -> dict[str, LineVectors]:
        """The live session's summaries' stored line vectors of the embedder in use, by summary text."""
        return stored_line_vectors(self.sessions.store, (session_key(tenant, session_id), ""),
                                   self.services.embedder.name)

    def flush(self) -> None:
        """Wait until the start's catch-up and every queued pass are done (background mode)."""
        if self._catch_up is not None:
            self._catch_up.join()
        with self._queue_lock:
            queue = self._queue
        if queue is not None:
            queue.submit(lambda: None).result()

    def delete(self, key: str) -> int:
        """Remove the session ``key`` (every agent's) from the store; returns the messages removed. What this
        process holds about it goes too, so a session started anew under the name reads its mark from the store.
        Callers flush first: a queued pass must not write the session back."""
        removed = self.sessions.delete(key)
        for held in (self._marks, self._redo):
            for session in [k for k in held if k[0] == key]:
                held.pop(session, None)
        return removed

    def recent_turns(self, tenant: str, session_id: str, n: int) -> list[MemoryItem]:
        """The live session's last user/assistant messages; else (none held: never said, or every one expired)
        ingested transcript turns of that session.
        Each carries its speaker and time (``timestamp``): the prompt heads them with their date."""
        key = session_key(tenant, session_id)
        if self._holds_messages((key, "")):
            # Sequence numbers are consecutive but need not start at 0 (Session._load): the last n.
            first = self.session(tenant, session_id).next_seq - n
            items = []
            for row in self.sessions.store.messages_after((key, ""), first - 1):
                message, seq = row["message"], row["seq"]
                text = text_of(message)
                if message.get("role") in TURN_ROLES and text.strip():
                    items.append(MemoryItem(
                        id=f"wm:{tenant}/{session_id}/{seq}", tenant=tenant, source_id=turn_source_id(session_id, seq),
                        kind="turn", text=text, created_at=row["created_at"],
                        metadata={"session_id": session_id, "speaker": speaker_of(message), "seq": seq,
                                  "timestamp": iso_time(row["created_at"])}))
            return items
        return catalog_recent_turns(self.services, tenant, session_id, n)

    def summaries(self, tenant: str, session_id: str) -> list[MemoryItem]:
        """The session's compaction summaries, newest first, as summary items of the session."""
        if not self.exists(tenant, session_id):
            return []
        rows = self.session(tenant, session_id).summaries()
        return [MemoryItem(id=f"wms:{tenant}/{session_id}/{i}", tenant=tenant, source_id=f"{session_id}#compacted",
                           kind="summary", text=str(row.get("text", "")),
                           metadata={"session_id": session_id, "scope": "working-memory"})
                for i, row in reversed(list(enumerate(rows))) if row.get("text")]

    def close(self) -> None:
        if self._catch_up is not None:
            self._catch_up.join()
        with self._queue_lock:
            queue, self._queue = self._queue, None
        if queue is not None:
            queue.shutdown(wait=True)  # queued promotions are stored before the stores close
