"""One conversation's working memory: append, a token-bounded view, scheduled compaction.

Always in the view: every system/developer message (moved to the top, in order), the last
user message (verbatim) and the newest unit (the pending step; a tool call still waiting
for its result shows as a note), and, right after the system messages, one header message
holding the key entities, the ``[Context Compressed]`` summaries and the ``[Dropped ...]``
markers (what each drop removed; older ones folded into one line). The rest is the most
recent units that fit; units without room are named by one note. The view is a pure read:
compaction runs on append, against the configured window (``scheduler.py``), never against
a caller's budget.
"""

from __future__ import annotations

import copy
import heapq
import logging
import random
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from agent_memory.conversation import messages as msgs
from agent_memory.conversation.compaction import ACTIVE, MARKER, CompactionConfig, Entry, Retention, Unit, UnitLog
from agent_memory.conversation.light import condense_message
from agent_memory.conversation.scheduler import Scheduler, describe, earlier_note, loaded_status, span_name, tools_of
from agent_memory.conversation.significance import RuleDetector, SignificanceDetector, is_entity_word
from agent_memory.conversation.summarize import StructuralSummarizer, Summarizer
from agent_memory.core.errors import BudgetError
from agent_memory.stores.sqlite_sessions import SessionConflictError, SessionStore

log = logging.getLogger(__name__)
# Appends refused because another process took the sequence number first, retried after a reload
# and a short random pause (two replicas appending in a tight loop would otherwise keep colliding).
CONFLICT_RETRIES = 50
CONFLICT_PAUSE_S = 0.01

HEADER = "[Context Compressed]"
ENTITY_HEADER = "[Key entities]"


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


class Session(Scheduler):
    def __init__(self, store: SessionStore, session_id: str, agent_id: str | None, counter, *,
                 config: CompactionConfig | None = None, defaults: CompactionConfig | None = None,
                 summarizer: Summarizer | None = None,
                 detector: SignificanceDetector | None = None,
                 on_significant: Callable[[SignificantTurn], Any] | None = None,
                 on_appended: Callable[[Appended], Any] | None = None) -> None:
        self.session_id, self.agent_id = session_id, agent_id
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
        for row in self.store.load_messages(self.key):
            entry = Entry(row["seq"], row["message"], Retention.parse(row["retention"]), row["tokens"],
                          row["message"], row["significant"])
            self._log.add(entry, status=loaded_status(row["status"]))
            if row["status"] == "condensed":  # recomputed: the light level is deterministic
                shown = condense_message(entry.shown, self.config.light_keep_share)
                if shown is not None:
                    self._log.reshow(entry, shown)
                    entry.condensed = True
            self._by_retention[entry.retention.value] += 1
            self._unclassified += row["unclassified"]
            self._significant += row["significant"]
        self._next_seq = self._log.entries[-1].seq + 1 if self._log.entries else 0
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
        message = copy.deepcopy(msgs.validate(message))  # the caller may reuse its dict; history must not move
        # When it was said (``timestamp``, validated above; absent: now) is stored as the row's time, not in
        # the body: providers refuse unknown message keys, and the view hands bodies to them.
        stated = msgs.message_time(message)
        message.pop("timestamp", None)
        created_at = time.time() if stated is None else stated
        unclassified = retention is None
        klass = self.config.default_retention if unclassified else Retention.parse(retention)
        role, text = message["role"], msgs.text_of(message)
        judgement = self.detector.judge(role, text) if role in ("user", "assistant") and text.strip() else None
        tokens = self.message_tokens(message)
        with self._lock:
            orphans = [rid for rid in msgs.result_ids(message) if rid not in self._log.by_call]
            if orphans:  # docs/api.md: a result must answer a call this session issued
                raise ValueError(f"message answers tool call id(s) {orphans[:5]} that no earlier message of "
                                 "this session issued (an orphan tool result)")
            # Key entities come from user turns and significant assistant turns: assistants capitalize
            # list headings and filler, which would crowd out what the user actually talks about.
            found = judgement.entities if judgement and (role == "user" or judgement.significant) else []
            for attempt in range(CONFLICT_RETRIES + 1):
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

    # -- the view --------------------------------------------------------------------------
    def view(self, budget: int) -> list[dict[str, Any]]:
        """Messages for the next model call, within ``budget`` tokens (see :meth:`count_view`).

        Always there: the system/developer messages, the last user message (verbatim) and the newest
        unit (the pending step); then the most recent units that fit. A tool call still waiting for its
        result shows as a ``[pending tool call: ...]`` note (a provider rejects a call without a result);
        units left out for the budget are named by one ``[Not in this view: ...]`` note."""
        if budget <= 0:
            raise BudgetError(f"view budget must be positive, got {budget}")
        with self._lock:  # a pure read: nothing here changes the session (compaction runs on append)
            systems = self._log.systems
            protected = self._protected_units()
            shown = {u.uid: self._shown(u) for u in protected}
            rest = budget - sum(e.tokens for e in systems) - sum(shown[u.uid][1] for u in protected)
            if rest < 0:
                raise BudgetError(
                    f"system messages, the last user message and the newest step need {budget - rest} tokens,"
                    f" more than the view budget {budget}")  # no session name: internally it carries the tenant
            header, header_tokens = self._header(budget, rest)
            rest -= header_tokens
            chosen: list[Unit] = list(protected)
            left_out: list[Unit] = []
            for unit in reversed(self._log.active.values()):
                if unit.uid in shown:
                    continue
                messages, tokens = shown[unit.uid] = self._shown(unit)
                if not messages:
                    continue  # a unit of system messages only: they are on top already
                if left_out or tokens > rest:
                    left_out.append(unit)  # older units stay out too: the body is a contiguous tail
                    continue
                chosen.append(unit)
                rest -= tokens
            note = self._left_out_note(left_out)
            while note is not None and self.message_tokens(note) > rest:
                # Room for the note: the oldest chosen unit (never a protected one) joins those left out.
                movable = [u for u in chosen if not any(u is p for p in protected)]
                if not movable:
                    note = None
                    break
                oldest = min(movable, key=lambda u: u.entries[0].seq)
                chosen.remove(oldest)
                rest += shown[oldest.uid][1]
                left_out.append(oldest)
                note = self._left_out_note(left_out)
            chosen.sort(key=lambda u: u.entries[0].seq)
            body = [m for u in chosen for m in shown[u.uid][0]]
            return [e.shown for e in systems] + header + ([note] if note else []) + body

    def _shown(self, unit: Unit) -> tuple[list[dict[str, Any]], int]:
        """The unit's non-system messages as shown, and their tokens; open tool calls become visible notes."""
        entries = [e for e in unit.entries if not e.is_system]
        if not unit.open_ids:
            return [e.shown for e in entries], sum(e.tokens for e in entries)
        messages = [msgs.without_open_calls(e.shown, unit.open_ids) for e in entries]
        return messages, sum(self.message_tokens(m) for m in messages)

    def _left_out_note(self, units: list[Unit]) -> dict[str, Any] | None:
        """One line naming the active units this view has no room for (they stay in the session)."""
        entries = sorted((e for u in units for e in u.entries if not e.is_system), key=lambda e: e.seq)
        if not entries:
            return None
        counts = {"messages": len(entries), "tokens": sum(e.tokens for e in entries), "tools": tools_of(entries)}
        return {"role": "system", "content": f"[Not in this view (budget), {span_name(entries[0].seq, entries[-1].seq)}:"
                                             f" {describe(counts)}; still in the session, not compacted]"}

    def _protected_units(self) -> list[Unit]:
        """The last user message's unit (verbatim) and the newest unit (the pending step), oldest first."""
        out: list[Unit] = []
        pending = self._log.pending
        if pending is not None and pending.unit is not None and pending.unit.status == ACTIVE:
            out.append(pending.unit)
        newest = next(reversed(self._log.active.values()), None) if self._log.active else None
        if newest is not None and not any(newest is u for u in out) and not all(e.is_system for e in newest.entries):
            out.append(newest)
        return out

    def _pending_unit(self) -> Unit | None:
        """The newest unit: what the agent is doing now (kept whole in every view)."""
        protected = self._protected_units()
        return protected[-1] if protected else None

    def _top_entities(self) -> list[str]:
        if self._top_cache[0] != self._entity_version:  # cached: views far outnumber entity changes
            # Filtered here too: sessions stored before the filter still hold "Fix" or "March".
            names = ((k, v) for k, v in self._entities.items() if is_entity_word(k))
            top = heapq.nlargest(self.config.max_entities, names, key=lambda kv: (kv[1][0], kv[1][1]))
            self._top_cache = (self._entity_version, [name for name, _ in top])
        return list(self._top_cache[1])

    def _header(self, budget: int, room: int) -> tuple[list[dict[str, Any]], int]:
        """The one header message (entities + summaries) that fits, and its tokens."""
        # Keyed on the top entity *set* (rendered sorted), which changes far less often than counts do.
        key = (budget, len(self._summaries), tuple(sorted(self._top_entities())), id(self.config))
        cached = self._header_cache.get(key)
        if cached is not None and cached[1] <= room:
            return list(cached[0]), cached[1]
        result = self._build_header(budget, room)
        if room >= budget:  # only an unconstrained header is reusable
            self._header_cache = {key: result}
        return list(result[0]), result[1]

    def _build_header(self, budget: int, room: int) -> tuple[list[dict[str, Any]], int]:
        names = self._top_entities()
        entity_cap = int(budget * self.config.entity_share)
        entity_line = ""
        while names:
            entity_line = f"{ENTITY_HEADER} " + ", ".join(sorted(names, key=str.lower))
            if self.counter.count(entity_line) <= entity_cap:
                break
            names.pop()
            entity_line = ""
        summary_cap = int(budget * self.config.summary_share)
        shown: list[tuple[dict[str, Any], str]] = []  # (row, text), newest first
        older = list(reversed(self._summaries))  # rows without room, newest first
        used = 0
        while older:
            row = older[0]
            tokens = row["tokens"] + 2
            if used + tokens > summary_cap:
                if not shown and summary_cap > 16 and row.get("method") != MARKER:  # even the newest is too long
                    shown.append((older.pop(0), self._fit_lines(row["text"], summary_cap - 4)))
                break
            shown.append((older.pop(0), row["text"]))
            used += tokens
        while True:
            earlier = earlier_note(older)
            texts = [earlier] if earlier else []
            texts += [text for _, text in reversed(shown)]
            parts = ([HEADER] if texts else []) + ([entity_line] if entity_line else []) + texts
            if not parts:
                return [], 0
            message = {"role": "system", "content": "\n\n".join(parts)}
            tokens = self.message_tokens(message)
            if tokens <= room:
                return [message], tokens
            if entity_line:  # the entities go first, then the oldest summaries (counted in the note)
                entity_line = ""
            elif shown:
                older.append(shown.pop()[0])
            else:
                return [], 0

    def _fit_lines(self, text: str, max_tokens: int) -> str:
        """Whole lines (a digest's items) within ``max_tokens``; never a cut mid-sentence when a line fits."""
        if self.counter.count(text) <= max_tokens:
            return text
        lines = text.split("\n")
        while len(lines) > 1 and self.counter.count("\n".join(lines)) > max_tokens:
            lines.pop()
        text = "\n".join(lines)
        return text if self.counter.count(text) <= max_tokens else self._truncate(text, max_tokens)

    def _truncate(self, text: str, max_tokens: int) -> str:
        if self.counter.count(text) <= max_tokens:
            return text
        if hasattr(self.counter, "truncate"):
            return self.counter.truncate(text, max_tokens)
        while text and self.counter.count(text) > max_tokens:
            text = text[: int(len(text) * 0.8)]
        return text

    # -- settings --------------------------------------------------------------------------
    def configure(self, **changes: Any) -> CompactionConfig:
        """Change this session's compaction settings (stored with the session); the scheduler runs at once."""
        with self._lock:
            unknown = set(changes) - set(CompactionConfig.__dataclass_fields__)
            if unknown:
                raise ValueError(f"unknown compaction settings {sorted(unknown)}")
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
        """The full history as appended, compaction notwithstanding."""
        with self._lock:
            return [e.message for e in self._log.entries]

    def recent_turns(self, n: int) -> list[dict[str, Any]]:
        with self._lock:
            return [e.message for e in self._log.entries[-n:]] if n > 0 else []

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
