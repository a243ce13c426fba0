"""One conversation's working memory: append, a token-bounded view, scheduled compaction.

The session holds the state (the unit log, summaries, key entities, settings) and keeps the store in
step with it; how that state is shown to a model within a budget is ``view.py``, and when and how it is
compacted is ``scheduler.py``, both mixed into ``Session``. Compaction runs on append, against the
configured window, never against a caller's budget.
"""

from __future__ import annotations

import copy
import logging
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from agent_memory.conversation import messages as msgs
from agent_memory.conversation.compaction import MARKER, CompactionConfig, Entry, Retention, UnitLog
from agent_memory.conversation.light import condense_message
from agent_memory.conversation.message_validation import message_time, validate
from agent_memory.conversation.scheduler import Scheduler, loaded_status
from agent_memory.conversation.significance import RuleDetector, SignificanceDetector
from agent_memory.conversation.summarize import StructuralSummarizer, Summarizer
from agent_memory.conversation.view import ViewBuilder, copied
from agent_memory.stores.sqlite_sessions import SessionConflictError, SessionStore

log = logging.getLogger(__name__)
# Appends refused because another process took the sequence number first, retried after a reload
# and a short random pause (two replicas appending in a tight loop would otherwise keep colliding).
CONFLICT_RETRIES = 50
CONFLICT_PAUSE_S = 0.01


@dataclass
class SignificantTurn:
    """What the promotion hook receives for a significant turn."""

    session_id: str
    agent_id: str | None
    seq: int
    role: str
    text: str
    retention: str
    reasons: list[str]
    entities: list[str]
    message: dict[str, Any]
    created_at: float = field(default_factory=time.time)
    # The user/assistant turn before it in the session (role, text, seq): its context when promoted.
    previous: dict[str, Any] | None = None


@dataclass
class Appended:
    """What the archive hook receives for every stored message (working_memory.py archives from the
    store, past its watermark: this only says where to look, and what the detector judged)."""

    session_id: str
    agent_id: str | None
    seq: int
    significant: bool
    reasons: list[str]
    created_at: float


def check_session_id(session_id: str) -> str:
    """``session_id`` unless it, or the caller's part of it, is blank: the working memory names a session
    ``<tenant>/<session id>`` (working_memory.session_key) and archives its turns as ``<session id>/m<seq>``,
    so a blank ID would give sources like ``/m0`` that no caller can name."""
    if not isinstance(session_id, str):
        raise TypeError(f"session ID must be a string, got {type(session_id).__name__} {session_id!r}")
    _, sep, name = session_id.partition("/")
    if not (name if sep else session_id).strip():
        raise ValueError(f"session ID must be a non-blank string, got {(name if sep else session_id)!r}")
    return session_id


class ToolPairing:
    """The tool calls a history issued and the results each still awaits: a provider refuses a view with
    an orphan result or a second result for one call."""

    def __init__(self) -> None:
        self.issued: set[str] = set()
        self.awaited: Counter[str] = Counter()

    def copy(self) -> ToolPairing:
        twin = ToolPairing()
        twin.issued, twin.awaited = set(self.issued), Counter(self.awaited)
        return twin

    def check(self, message: dict[str, Any], where: str = "this session") -> None:
        """ValueError unless each tool result in ``message`` answers a call issued and awaiting a result."""
        answers = Counter(msgs.result_ids(message))
        orphans = [rid for rid in answers if rid not in self.issued]
        if orphans:  # docs/api.md: a result must answer a call this session issued
            raise ValueError(f"message answers tool call id(s) {orphans[:5]} that no earlier message of "
                             f"{where} issued (an orphan tool result)")
        repeated = [rid for rid, n in answers.items() if n > self.awaited[rid]]
        if repeated:
            raise ValueError(f"message answers tool call id(s) {repeated[:5]} that already have their result "
                             f"in {where}, or answers one twice (a repeated tool result)")

    def note(self, message: dict[str, Any]) -> None:
        # A call id may be issued again later (some models number their calls per turn): each issue
        # awaits one result. Never below zero: a repeat stored before this check must not make a later
        # issue of that id look answered already.
        for rid in msgs.result_ids(message):
            self.awaited[rid] = max(0, self.awaited[rid] - 1)
        calls = msgs.call_ids(message)
        self.issued.update(calls)
        self.awaited.update(calls)


class Session(Scheduler, ViewBuilder):
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
        # Settings made for this session (``configure``) are stored with it and win over the defaults.
        overrides = store.load_state(self.key).get("config") or {}
        self._given_config, self._defaults = config, defaults or CompactionConfig()
        self.config = config or replace(self._defaults, **overrides)
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
        # A store shared by several processes: what it looked like before this load (read first, so a
        # write landing during the load only makes the next ``refresh`` load again).
        self._synced = self.store.fingerprint(self.key) if getattr(self.store, "shared", False) else None
        self._log = UnitLog(self.message_tokens, self.config.keep_tool_results)
        self._by_retention = {r.value: 0 for r in Retention}
        self._unclassified = self._significant = 0
        # Results each call id still awaits: rebuilt from every stored message (compacted ones are kept
        # in the store too), so a second result for a call is refused after a restart as well.
        self._pairing = ToolPairing()
        for row in self.store.load_messages(self.key):
            entry = Entry(row["seq"], row["message"], Retention.parse(row["retention"]), row["tokens"],
                          row["message"], row["significant"])
            self._log.add(entry, status=loaded_status(row["status"]))
            self._note_calls(row["message"])
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
        self._summaries = self.store.summaries(self.key)
        self._entities = {name: [count, last] for name, count, last in self.store.entities(self.key)}
        self._entity_version = 0
        self._top_cache: tuple[int, list[str]] = (-1, [])
        self._header_cache: dict[tuple, tuple[list[dict[str, Any]], int]] = {}
        self._state = {"compactions": 0, "tiers": {}, "summary_fallbacks": 0, "validations": [], "forced": 0,
                       "hook_failures": 0, "condensed": 0, "redone": 0, "kept_longer": {},
                       **self.store.load_state(self.key)}

    def refresh(self) -> bool:
        """Reload from a shared store when another process wrote to this session since this one last
        read or wrote it (PostgreSQL: any replica answers any request). Returns whether it reloaded."""
        if not getattr(self.store, "shared", False):
            return False
        with self._lock:
            now = self.store.fingerprint(self.key)
            if now in (self._synced, self.store.own_fingerprint(self.key)):
                return False
            self._reload()
            return True

    def _reload(self) -> None:
        """Everything again from the store, the session's own settings included (another replica's
        ``configure`` is stored in the session state)."""
        self._load()
        if self._given_config is None:
            self.config = replace(self._defaults, **(self._state.get("config") or {}))
            self._header_cache = {}

    def message_tokens(self, message: dict[str, Any]) -> int:
        return self.counter.count(msgs.serialize(message)) + self.config.message_overhead

    def count_view(self, view: list[dict[str, Any]]) -> int:
        return sum(self.message_tokens(m) for m in view)

    # -- append ----------------------------------------------------------------------------
    def append(self, message: dict[str, Any], retention: Retention | str | None = None) -> int:
        """Store one message (committed before returning); returns its sequence number."""
        message = copy.deepcopy(validate(message))  # the caller may reuse its dict; history must not move
        # When it was said (``timestamp``, validated above; absent: now) is stored as the row's time, not in
        # the body: providers refuse unknown message keys, and the view hands bodies to them.
        stated = message_time(message)
        message.pop("timestamp", None)
        created_at = time.time() if stated is None else stated
        unclassified = retention is None
        klass = self.config.default_retention if unclassified else Retention.parse(retention)
        role, text = message["role"], msgs.text_of(message)
        judgement = self.detector.judge(role, text) if role in ("user", "assistant") and text.strip() else None
        tokens = self.message_tokens(message)
        with self._lock:
            # Key entities come from user turns and significant assistant turns: assistants capitalize
            # list headings and filler, which would crowd out what the user actually talks about.
            found = judgement.entities if judgement and (role == "user" or judgement.significant) else []
            for attempt in range(CONFLICT_RETRIES + 1):
                self._check_results(message)  # again after a reload: another replica may have answered
                seq = self._next_seq
                try:
                    self.store.append(self.key, seq, message, retention=klass.value, unclassified=unclassified,
                                      tokens=tokens, significant=bool(judgement and judgement.significant),
                                      entities=found, created_at=created_at)
                    break
                except SessionConflictError:
                    if attempt == CONFLICT_RETRIES:
                        raise
                    time.sleep(random.uniform(0, CONFLICT_PAUSE_S))
                    self._reload()  # another replica appended since: its messages, then this one after them
            self._next_seq += 1
            self._note_calls(message)
            entry = Entry(seq, message, klass, tokens, message,
                          bool(judgement and judgement.significant))
            self._log.add(entry)
            self._by_retention[klass.value] += 1
            self._unclassified += unclassified
            for name in found:
                slot = self._entities.setdefault(name, [0, seq])
                slot[0] += 1
                slot[1] = seq
            self._entity_version += bool(found)
            if self.config.window_tokens:
                self._maybe_compact(self.config.window_tokens)
        if judgement and judgement.significant:
            self._significant += 1
            self._promote(SignificantTurn(self.session_id, self.agent_id, seq, role, text, klass.value,
                                     judgement.reasons, judgement.entities, message, created_at=created_at,
                                     previous=self._previous_turn(seq)))
        if self.on_appended is not None:
            significant = bool(judgement and judgement.significant)
            try:  # the archive: every message, significance only a signal (working_memory.py)
                self.on_appended(Appended(self.session_id, self.agent_id, seq, significant,
                                          list(judgement.reasons) if significant else [], created_at))
            except Exception as exc:  # noqa: BLE001 - stored already; the archive catches up on its next pass
                self._state["hook_failures"] += 1
                log.warning("archive hook failed for session %s seq %d: %s", self.session_id, seq, exc)
        return seq

    def _check_results(self, message: dict[str, Any]) -> None:
        self._pairing.check(message)

    def _note_calls(self, message: dict[str, Any]) -> None:
        self._pairing.note(message)

    def check_batch(self, messages: list[dict[str, Any]]) -> None:
        """ValueError naming the first of ``messages`` (by index) whose tool results ``append`` would refuse
        after what the session holds and the batch's earlier messages; nothing is stored."""
        with self._lock:
            pairing = self._pairing.copy()
        for n, message in enumerate(messages):
            try:
                pairing.check(message, where="this session or batch")
            except ValueError as exc:
                raise ValueError(f"messages[{n}]: {exc}") from None
            pairing.note(message)

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
            self.config = config
            self._header_cache = {}
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
