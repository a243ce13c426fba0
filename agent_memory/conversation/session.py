"""One conversation's working memory: append, a token-bounded view, scheduled compaction.

The session holds the state (the unit log, summaries, key entities, settings) and keeps the store in
step with it; how that state is shown to a model within a budget is ``view.py``, when and how it is
compacted is ``scheduler.py``, and when an undated message was said is ``timeline.py``, all three
mixed into ``Session``. Compaction runs on append, against the configured window, never against a
caller's budget.
"""

from __future__ import annotations

import copy
import logging
import random
import threading
import time
from dataclasses import replace
from typing import Any, Callable, Sequence

from agent_memory.conversation import messages as msgs
from agent_memory.conversation.compaction import MARKER, CompactionConfig, Entry, Retention, UnitLog
from agent_memory.conversation.light import condense_message
from agent_memory.conversation.message_validation import (
    ToolPairing,
    check_batch_pairing,
    check_session_id,
    message_time,
    validate,
)
from agent_memory.conversation.records import Appended, PendingMessage, SignificantTurn
from agent_memory.conversation.scheduler import Scheduler, loaded_status
from agent_memory.conversation.significance import RuleDetector, SignificanceDetector, identifier_list
from agent_memory.conversation.summarize import StructuralSummarizer, Summarizer
from agent_memory.conversation.timeline import Timeline, TimelineKeeper
from agent_memory.conversation.view import ViewBuilder, copied
from agent_memory.core.errors import StoreError
from agent_memory.stores.session_storage import NewMessage, SessionConflictError
from agent_memory.stores.sqlite_sessions import SessionStore

log = logging.getLogger(__name__)
# Appends refused because another process took the sequence number first, retried after a reload
# and a short random pause (two replicas appending in a tight loop would otherwise keep colliding).
CONFLICT_RETRIES = 50
CONFLICT_PAUSE_S = 0.01


class Session(Scheduler, ViewBuilder, TimelineKeeper):
    def __init__(self, store: SessionStore, session_id: str, agent_id: str | None, counter, *,
                 config: CompactionConfig | None = None, defaults: CompactionConfig | None = None,
                 summarizer: Summarizer | None = None,
                 detector: SignificanceDetector | None = None,
                 on_significant: Callable[[SignificantTurn], Any] | None = None,
                 on_appended: Callable[[Appended], Any] | None = None,
                 first_seq: Callable[[str, str], int] | None = None) -> None:
        self.session_id, self.agent_id = check_session_id(session_id), agent_id
        self.key = (session_id, agent_id or "")
        self.store, self.counter = store, counter
        # Settings made for this session (``configure``) are stored with it and win over the defaults
        # (read by ``_load``, with the rest of the session's state).
        self._given_config, self._defaults = config, defaults or CompactionConfig()
        self.config = config or self._defaults
        self.summarizer = summarizer
        self.fallback = StructuralSummarizer()
        self.detector = detector or RuleDetector()
        self.on_significant = on_significant
        self.on_appended = on_appended
        self._first_seq = first_seq
        self._lock = threading.RLock()
        self._load()

    # -- loading ---------------------------------------------------------------------------
    def _load(self) -> None:
        """Everything from the store, the session's own settings included (another replica's ``configure``
        is stored in the session state): at start, and again when another writer changed the session."""
        # A store shared by several processes: what it looked like before this load (read first, so a
        # write landing during the load only makes the next ``refresh`` load again).
        self._synced = self.store.fingerprint(self.key) if getattr(self.store, "shared", False) else None
        stored = self.store.load_state(self.key)
        if self._given_config is None:  # first: the counts below are made under the session's own settings
            self.config = replace(self._defaults, **(stored.get("config") or {}))
        self._log = UnitLog(self.message_tokens, self.config.keep_tool_results)
        self._by_retention = {r.value: 0 for r in Retention}
        self._unclassified = self._significant = 0
        # Results each call id still awaits: rebuilt from every stored message (compacted ones are kept
        # in the store too), so a second result for a call is refused after a restart as well.
        self._pairing = ToolPairing()
        recounted: list[tuple[int, int]] = []
        rows = self.store.load_messages(self.key)
        for row in rows:
            tokens = row["tokens"]
            if row.get("tokenizer") != self._tokenizer:  # counted under another tokenizer (or unrecorded)
                tokens = self.message_tokens(row["message"])
                recounted.append((row["seq"], tokens))
            entry = Entry(row["seq"], row["message"], Retention.parse(row["retention"]), tokens,
                          row["message"], row["significant"])
            self._log.add(entry, status=loaded_status(row["status"]))
            self._pairing.note(row["message"])
            if row["status"] == "condensed":  # recomputed: the light level is deterministic
                shown = condense_message(entry.shown, self.config.light_keep_share)
                if shown is not None:
                    self._log.reshow(entry, shown)
                    entry.condensed = True
            self._by_retention[entry.retention.value] += 1
            self._unclassified += row["unclassified"]
            self._significant += row["significant"]
        # An empty session may reuse the ID of a deleted one whose turns long-term memory kept (as
        # ``<session id>/m<seq>``): numbering goes on after them, so a new turn never replaces an old one.
        self._next_seq = (self._log.entries[-1].seq + 1 if self._log.entries else
                          self._first_seq(*self.key) if self._first_seq is not None else 0)
        self._keep_counts(recounted)
        # Summaries are few and short: always counted again, so they are in this tokenizer's units too.
        self._summaries = [{**row, "tokens": self.counter.count(row["text"])} for row in self.store.summaries(self.key)]
        # And after the messages a time to live removed (their marker's span, expiry.py): it may have left only the
        # instructions before them, or nothing.
        self._next_seq = max([self._next_seq, *(row["last_seq"] + 1 for row in self._summaries)])
        self._entities = {name: [count, last] for name, count, last in self.store.entities(self.key)}
        self._entity_version = 0
        self._timeline = Timeline.of_stored(rows, self._stored_reasons)  # undated messages of a replayed history
        self._top_cache: dict[bool, tuple[int, list[str]]] = {}  # judged? -> (entity version, names)
        self._entity_verdicts: dict[str, tuple[bool, int]] = {}  # name -> (a name?, the seq it was judged on)
        self._header_cache: dict[tuple, tuple[list[dict[str, Any]], int]] = {}
        self._state = {"compactions": 0, "tiers": {}, "summary_fallbacks": 0, "validations": [], "forced": 0,
                       "hook_failures": 0, "condensed": 0, "redone": 0, "kept_longer": {}, **stored}

    @property
    def _tokenizer(self) -> str:
        """What a stored token count was made under (the store's ``tokenizer`` column): the counter's name and
        the tokens added around each message, e.g. ``cl100k_base+4``. A count made under another counter or
        another ``message_overhead`` is made again."""
        name = str(getattr(self.counter, "name", None) or type(self.counter).__name__)
        return f"{name}+{self.config.message_overhead}"

    def _keep_counts(self, recounted: list[tuple[int, int]]) -> None:
        """Store the counts made again at load, so the next load reuses them; on a store error they are
        only made again next time (a read must not fail for it)."""
        if not recounted:
            return
        try:
            self.store.recount(self.key, recounted, self._tokenizer)
        except StoreError as exc:
            log.warning("session %s: %d token counts made again under %s not stored: %s", self.session_id,
                        len(recounted), self._tokenizer, exc)

    def use_config(self, config: CompactionConfig) -> None:
        """Serve the live session under ``config`` from now on (``SessionManager.session(config=...)``). A
        different one is loaded again: every stored count holds the old ``message_overhead`` (kept, a view
        counted with the new one could run over its budget) and the unit log was built with its settings."""
        with self._lock:
            changed = config != self.config
            self.config = self._given_config = config
            if changed:
                self._load()

    def refresh(self) -> bool:
        """Reload from a shared store when another process wrote to this session since this one last
        read or wrote it (PostgreSQL: any replica answers any request). Returns whether it reloaded."""
        if not getattr(self.store, "shared", False):
            return False
        with self._lock:
            now = self.store.fingerprint(self.key)
            if now in (self._synced, self.store.own_fingerprint(self.key)):
                return False
            self._load()
            return True

    def message_tokens(self, message: dict[str, Any]) -> int:
        return self.counter.count(msgs.serialize(message)) + self.config.message_overhead

    def count_view(self, view: list[dict[str, Any]]) -> int:
        return sum(self.message_tokens(m) for m in view)

    # -- append ----------------------------------------------------------------------------
    def append(self, message: dict[str, Any], retention: Retention | str | None = None) -> int:
        """Store one message (committed before returning); returns its sequence number."""
        return self._store([self._prepare(message, retention)], batch=False)[0]

    def append_batch(self, messages: Sequence[dict[str, Any]],
                     retention: Retention | str | None | Sequence[Retention | str | None] = None) -> list[int]:
        """Store ``messages`` in order as one batch, all or nothing: one store transaction, under the
        session's lock, so no other append lands between them and a failure stores none of them. A
        message ``append`` would refuse (its shape, retention, or a tool result no call of the session or
        of the batch before it awaits) refuses the batch, named by index (``messages[1]: ...``).
        ``retention``: one class for all, or a list of one per message. Returns the sequence numbers."""
        classes = list(retention) if isinstance(retention, (list, tuple)) else [retention] * len(messages)
        if len(classes) != len(messages):
            raise ValueError(f"retention lists {len(classes)} classes for {len(messages)} messages")
        prepared = []
        for n, (message, klass) in enumerate(zip(messages, classes)):
            try:
                prepared.append(self._prepare(message, klass))
            except (TypeError, ValueError) as exc:
                raise type(exc)(f"messages[{n}]: {exc}") from None
        return self._store(prepared, batch=True) if prepared else []

    def _prepare(self, message: dict[str, Any], retention: Retention | str | None) -> PendingMessage:
        """What storing ``message`` needs, made before the lock: its checked copy, class, time, tokens, judgement."""
        message = copy.deepcopy(validate(message))  # the caller may reuse its dict; history must not move
        # When it was said (``timestamp``, validated above; absent: now) is stored as the row's time, not in
        # the body: providers refuse unknown message keys, and the view hands bodies to them.
        stated = message_time(message)
        message.pop("timestamp", None)
        klass = self.config.default_retention if retention is None else Retention.parse(retention)
        role, text = message["role"], msgs.text_of(message)
        judgement = self.detector.judge(role, text) if role in ("user", "assistant") and text.strip() else None
        # Key entities come from user turns and significant assistant turns: assistants capitalize
        # list headings and filler, which would crowd out what the user actually talks about.
        found = judgement.entities if judgement and (role == "user" or judgement.significant) else []
        if found or (judgement and role == "user"):
            # What a coding agent's task is about: the files, paths, versions and error codes its user names
            # ("fix config.py and tests/test_api.py"), beside the capitalized names.
            idents = identifier_list(text)  # "v2" found in "v2.7.1" is only a piece of it
            found = list(dict.fromkeys([*(n for n in found if not any(n in i and n != i for i in idents)), *idents]))
        return PendingMessage(message, klass, retention is None, time.time() if stated is None else stated,
                        self.message_tokens(message), judgement, tuple(found), stated=stated is not None)

    def _store(self, items: list[PendingMessage], *, batch: bool) -> list[int]:
        """Store ``items`` in one transaction at the next seqs, then take them into the session's state."""
        with self._lock:  # held across the batch: another append to this session waits for all of it
            for attempt in range(CONFLICT_RETRIES + 1):
                # Checked again after a reload: another replica may have answered a call meanwhile.
                if batch:
                    check_batch_pairing(self._pairing.copy(), [item.message for item in items])
                else:
                    self._pairing.check(items[0].message)
                first = self._next_seq
                items, redated, timeline = self._dated(first, items)
                rows = [NewMessage(first + n, item.message, item.klass.value, item.unclassified, item.tokens,
                                   item.significant, item.entities, item.created_at, self._tokenizer, item.stated)
                        for n, item in enumerate(items)]
                try:
                    self.store.append_many(self.key, rows)
                    break
                except SessionConflictError:
                    if attempt == CONFLICT_RETRIES:
                        raise
                    time.sleep(random.uniform(0, CONFLICT_PAUSE_S))
                    self._load()  # another replica appended since: its messages, then these after them
            self._timeline = timeline
            self._redate(redated)
            for row, item in zip(rows, items):  # stored: now the session's state, which cannot fail midway
                self._admit(row.seq, item)
            self._compact_after_append()
        for n, (row, item) in enumerate(zip(rows, items)):
            last = n == len(items) - 1
            self._announce(row.seq, item, more=not last, redated=redated if last else {})
        return [row.seq for row in rows]

    def _admit(self, seq: int, item: PendingMessage) -> None:
        self._next_seq = seq + 1
        self._pairing.note(item.message)
        self._log.add(Entry(seq, item.message, item.klass, item.tokens, item.message, item.significant))
        self._by_retention[item.klass.value] += 1
        self._unclassified += item.unclassified
        for name in item.entities:
            slot = self._entities.setdefault(name, [0, seq])
            slot[0] += 1
            slot[1] = seq
        self._entity_version += bool(item.entities)

    def _announce(self, seq: int, item: PendingMessage, *, more: bool, redated: dict) -> None:
        """The hooks, outside the lock: the promotion of a significant turn, then the archive (``more``:
        messages of the same batch follow, so the archive pass waits for the last of them; ``redated``:
        messages stored before, whose inferred times the archive takes in again)."""
        judgement = item.judgement
        if item.significant:
            self._significant += 1
            self._promote(SignificantTurn(self.session_id, self.agent_id, seq, item.message["role"],
                                          msgs.text_of(item.message), item.klass.value, judgement.reasons,
                                          judgement.entities, item.message, created_at=item.created_at,
                                          previous=self._previous_turn(seq)))
        if self.on_appended is not None:
            try:  # the archive: every message, significance only a signal (working_memory.py)
                self.on_appended(Appended(self.session_id, self.agent_id, seq, item.significant,
                                          list(item.reasons), item.created_at, more=more, inferred=item.inferred,
                                          redated={s: list(reasons) for s, (_, reasons) in redated.items()}))
            except Exception as exc:  # noqa: BLE001 - stored already; the archive catches up on its next pass
                self._state["hook_failures"] += 1
                log.warning("archive hook failed for session %s seq %d: %s", self.session_id, seq, exc)

    def check_batch(self, messages: list[dict[str, Any]]) -> None:
        """ValueError naming the first of ``messages`` (by index) whose tool results ``append`` would refuse
        after what the session holds and the batch's earlier messages; nothing is stored."""
        with self._lock:
            pairing = self._pairing.copy()
        check_batch_pairing(pairing, messages)

    def _previous_turn(self, seq: int) -> dict[str, Any] | None:
        with self._lock:
            for entry in reversed(self._log.entries):
                role = entry.message.get("role")
                if entry.seq < seq and role in ("user", "assistant") and msgs.text_of(entry.message).strip():
                    return {"role": role, "text": msgs.text_of(entry.message), "seq": entry.seq}
                if seq - entry.seq > 50:
                    break
        return None

    def _promote(self, record: SignificantTurn) -> None:
        if self.on_significant is None:
            return
        try:
            self.on_significant(record)
        except Exception as exc:  # noqa: BLE001 - the message is stored; a hook must not fail the append
            self._state["hook_failures"] += 1
            log.warning("on_significant hook failed for session %s seq %d: %s", self.session_id, record.seq, exc)

    # -- settings --------------------------------------------------------------------------
    def configure(self, **changes: Any) -> CompactionConfig:
        """Change this session's compaction settings (stored with the session); the scheduler runs at once."""
        with self._lock:
            unknown = set(changes) - set(CompactionConfig.__dataclass_fields__)
            if unknown:
                raise ValueError(f"unknown compaction settings {sorted(unknown)}")
            # None means "never compact on its own" for the window alone; elsewhere it is no number.
            nulls = sorted(k for k, v in changes.items() if v is None and k != "window_tokens")
            if nulls:
                raise ValueError(f"compaction settings {nulls} cannot be None; leave them out to keep their values")
            config = replace(self.config, **changes)  # validates: a bad value raises, nothing is stored
            self._state["config"] = {**(self._state.get("config") or {}), **changes}
            self.store.save_state(self.key, self._state)
            recount = config.message_overhead != self.config.message_overhead
            self.config = config
            self._header_cache = {}
            if recount:  # every count holds the old overhead: loaded again, each is made again and stored
                self._load()
            if config.window_tokens:
                self._maybe_compact(config.window_tokens)
            return config

    # -- accessors -------------------------------------------------------------------------
    def messages(self) -> list[dict[str, Any]]:
        """The full history as appended, compaction notwithstanding (copies: a caller editing one, say to
        add a cache marker, must not edit the history)."""
        with self._lock:
            return [copied(e.message) for e in self._log.entries]

    @property
    def next_seq(self) -> int:
        """The sequence number the next message gets (consecutive; an empty session's first is
        ``first_seq``'s, 0 unless the ID was used before)."""
        with self._lock:
            return self._next_seq

    def recent_turns(self, n: int) -> list[dict[str, Any]]:
        with self._lock:
            return [copied(e.message) for e in self._log.entries[-n:]] if n > 0 else []

    def summaries(self) -> list[dict[str, Any]]:
        """Compaction summaries, oldest first (drop markers apart: :meth:`markers`)."""
        with self._lock:
            return [dict(s) for s in self._summaries if s.get("method") != MARKER]

    def markers(self) -> list[dict[str, Any]]:
        """What each drop left in the view: its span, message and token counts, tool names."""
        with self._lock:
            return [dict(s) for s in self._summaries if s.get("method") == MARKER]

    def entities(self) -> list[str]:
        with self._lock:
            return self._top_entities()

    def stats(self) -> dict[str, Any]:
        with self._lock:
            validations = self._state["validations"]

            def mean(key: str) -> float | None:
                return round(sum(v[key] for v in validations) / len(validations), 4) if validations else None

            return {
                "session_id": self.session_id, "agent_id": self.agent_id,
                "messages": len(self._log.entries),
                "active_messages": sum(len(u.entries) for u in self._log.active.values()),
                "active_tokens": self._log.active_tokens,
                "unclassified_appends": self._unclassified,
                "by_retention": dict(self._by_retention),
                "micro_truncated": sum(1 for e, _ in self._log.results[: self._log.truncated]),
                "significant_turns": self._significant,
                "summaries": sum(1 for s in self._summaries if s.get("method") != MARKER),
                "drop_markers": sum(1 for s in self._summaries if s.get("method") == MARKER),
                "dropped_messages": sum(s["validation"].get("messages", 0) for s in self._summaries
                                        if s.get("method") == MARKER),
                "compactions": self._state["compactions"], "tiers": dict(self._state["tiers"]),
                "forced_compactions": self._state["forced"],
                "summary_fallbacks": self._state["summary_fallbacks"],
                "hook_failures": self._state["hook_failures"],
                "compaction_failures": self._state.get("compaction_failures", 0),
                "last_validation": validations[-1] if validations else None,
                "mean_numbers_kept": mean("numbers_kept"), "mean_entities_kept": mean("entities_kept"),
                "mean_compression_ratio": mean("compression_ratio"),
                "condensed_messages": self._state.get("condensed", 0),
                "summaries_redone": self._state.get("redone", 0),
                "kept_longer": len(self._state.get("kept_longer") or {}),
                "utilization": (round(self._used(self.config.window_tokens) / self.config.window_tokens, 4)
                                if self.config.window_tokens else None),
                "config": self.config.as_dict(),
            }
