"""One conversation's working memory: append, a token-bounded view, tiered compaction.

Always in the view: every system message (moved to the top, in order), the pending
(last) user turn with its tool unit, and, right after the system messages, one header
message holding the key entities and the ``[Context Compressed]`` summaries. The rest
is the most recent units that fit. Tiers run on append when the session has a window,
else on ``view(budget)`` with the budget as the window.
"""

from __future__ import annotations

import copy
import heapq
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import BudgetError
from . import messages as msgs
from .compaction import ACTIVE, DROPPED, SUMMARIZED, CompactionConfig, Entry, Retention, Unit, UnitLog
from .significance import RuleDetector, SignificanceDetector
from .store import SessionStore
from .summarize import StructuralSummarizer, Summarizer, summarize_span
from .summarize import validate as validate_summary

log = logging.getLogger(__name__)

HEADER = "[Context Compressed]"
ENTITY_HEADER = "[Key entities]"
_LOSSY = {Retention.FORGETTABLE, Retention.FUZZY}
# Per tier, actions applied oldest-first while the kept total is over the target. A tier runs the
# steps of the tiers below it first, so a jump straight to 95% still summarizes before it drops.
TIER_STEPS = {
    1: [("summarize", _LOSSY)],
    2: [("drop", _LOSSY), ("summarize", {Retention.STRICT})],
    3: [("drop", _LOSSY), ("drop", {Retention.STRICT})],
}


@dataclass
class TurnRecord:
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


class Session:
    def __init__(self, store: SessionStore, session_id: str, agent_id: str | None, counter, *,
                 config: CompactionConfig | None = None, summarizer: Summarizer | None = None,
                 detector: SignificanceDetector | None = None,
                 on_significant: Callable[[TurnRecord], Any] | None = None) -> None:
        self.session_id, self.agent_id = session_id, agent_id
        self.key = (session_id, agent_id or "")
        self.store, self.counter = store, counter
        self.config = config or CompactionConfig()
        self.summarizer = summarizer
        self.fallback = StructuralSummarizer()
        self.detector = detector or RuleDetector()
        self.on_significant = on_significant
        self._lock = threading.RLock()
        self._load()

    # -- loading ---------------------------------------------------------------------------
    def _load(self) -> None:
        self._log = UnitLog(self.message_tokens, self.config.keep_tool_results)
        self._by_retention = {r.value: 0 for r in Retention}
        self._unclassified = self._significant = 0
        for row in self.store.load_messages(self.key):
            entry = Entry(row["seq"], row["message"], Retention.parse(row["retention"]), row["tokens"],
                          row["message"], row["significant"])
            self._log.add(entry, status=row["status"])
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
                       "hook_failures": 0, **self.store.load_state(self.key)}

    def message_tokens(self, message: dict[str, Any]) -> int:
        return self.counter.count(msgs.serialize(message)) + self.config.message_overhead

    def count_view(self, view: list[dict[str, Any]]) -> int:
        return sum(self.message_tokens(m) for m in view)

    # -- append ----------------------------------------------------------------------------
    def append(self, message: dict[str, Any], retention: Retention | str | None = None) -> int:
        """Store one message (committed before returning); returns its sequence number."""
        message = copy.deepcopy(msgs.validate(message))  # the caller may reuse its dict; history must not move
        unclassified = retention is None
        klass = self.config.default_retention if unclassified else Retention.parse(retention)
        role, text = message["role"], msgs.text_of(message)
        judgement = self.detector.judge(role, text) if role in ("user", "assistant") and text.strip() else None
        tokens = self.message_tokens(message)
        with self._lock:
            seq = self._next_seq
            # Key entities come from user turns and significant assistant turns: assistants capitalize
            # list headings and filler, which would crowd out what the user actually talks about.
            found = judgement.entities if judgement and (role == "user" or judgement.significant) else []
            self.store.append(self.key, seq, message, retention=klass.value, unclassified=unclassified,
                              tokens=tokens, significant=bool(judgement and judgement.significant), entities=found)
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
            self._promote(TurnRecord(self.session_id, self.agent_id, seq, role, text, klass.value,
                                     judgement.reasons, judgement.entities, message))
        return seq

    def _promote(self, record: TurnRecord) -> None:
        if self.on_significant is None:
            return
        try:
            self.on_significant(record)
        except Exception as exc:  # noqa: BLE001 - the message is stored; a hook must not fail the append
            self._state["hook_failures"] += 1
            log.warning("on_significant hook failed for session %s seq %d: %s", self.session_id, record.seq, exc)

    # -- the view --------------------------------------------------------------------------
    def view(self, budget: int) -> list[dict[str, Any]]:
        """Messages for the next model call, within ``budget`` tokens (see :meth:`count_view`)."""
        if budget <= 0:
            raise BudgetError(f"view budget must be positive, got {budget}")
        with self._lock:
            self._maybe_compact(self.config.window_tokens or budget)
            systems = self._log.systems
            pending = self._pending_unit()
            pending_entries = [e for e in pending.entries if not e.is_system] if pending else []
            rest = budget - sum(e.tokens for e in systems) - sum(e.tokens for e in pending_entries)
            if rest < 0:
                raise BudgetError(
                    f"system messages and the pending user turn need {budget - rest} tokens,"
                    f" more than the view budget {budget} (session {self.session_id!r})")
            header, header_tokens = self._header(budget, rest)
            rest -= header_tokens
            chosen: list[Unit] = [pending] if pending else []
            for unit in reversed(self._log.active.values()):
                if unit is pending or unit.open_ids:
                    continue  # a call still waiting for its results would be an orphan: it joins later
                tokens = sum(e.tokens for e in unit.entries if not e.is_system)
                if tokens > rest:
                    break
                if tokens:
                    chosen.append(unit)
                    rest -= tokens
            chosen.sort(key=lambda u: u.entries[0].seq)
            body = [e.shown for u in chosen for e in u.entries if not e.is_system]
            return [e.shown for e in systems] + header + body

    def _pending_unit(self) -> Unit | None:
        pending = self._log.pending
        if pending is None or pending.unit is None or pending.unit.status != ACTIVE:
            return None
        return pending.unit

    def _top_entities(self) -> list[str]:
        if self._top_cache[0] != self._entity_version:  # cached: views far outnumber entity changes
            top = heapq.nlargest(self.config.max_entities, self._entities.items(),
                                 key=lambda kv: (kv[1][0], kv[1][1]))
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
        texts: list[str] = []
        used = 0
        for summary in reversed(self._summaries):
            tokens = summary["tokens"] + 2
            if used + tokens > summary_cap:
                if not texts and summary_cap > 16:  # even the newest is too long: cut it
                    texts.append(self._truncate(summary["text"], summary_cap - 4))
                break
            texts.append(summary["text"])
            used += tokens
        parts = ([HEADER] if texts else []) + ([entity_line] if entity_line else []) + texts[::-1]
        while parts:
            message = {"role": "system", "content": "\n\n".join(parts)}
            tokens = self.message_tokens(message)
            if tokens <= room:
                return [message], tokens
            parts.pop(1 if len(parts) > 1 and parts[0] == HEADER else 0)  # oldest summary / entities first
            if parts == [HEADER]:
                break
        return [], 0

    def _truncate(self, text: str, max_tokens: int) -> str:
        if self.counter.count(text) <= max_tokens:
            return text
        if hasattr(self.counter, "truncate"):
            return self.counter.truncate(text, max_tokens)
        while text and self.counter.count(text) > max_tokens:
            text = text[: int(len(text) * 0.8)]
        return text

    # -- tiered compaction -----------------------------------------------------------------
    def _used(self, window: int) -> int:
        return self._log.active_tokens + self._header(window, window)[1]

    def _maybe_compact(self, window: int) -> int:
        used = self._used(window)
        tier = self.config.tier_for(used / window)
        if tier:
            self._run_tier(tier, window, used)
        return tier

    def _candidates(self, tier: int) -> list[Unit]:
        pending = self._pending_unit()
        units = [u for u in self._log.active.values() if not u.pinned]
        if tier >= 3:  # the emergency tier spares only the pending turn and the newest unit
            last = units[-1] if units else None
            return [u for u in units if u is not pending and u is not last]
        cut = pending.entries[0].seq if pending else None
        return [u for u in units if cut is None or u.entries[0].seq < cut]

    def _run_tier(self, tier: int, window: int, used: int) -> None:
        target = int(self.config.target * window)
        max_summary = self._summary_limit(window)
        steps = [step for t in range(1, tier + 1) for step in TIER_STEPS[t]]
        for action, classes in steps:
            if used <= target:
                break
            need = used - target + (max_summary if action == "summarize" else 0)
            picked, freed = [], 0
            for unit in self._candidates(tier):
                if freed >= need:
                    break
                if unit.retention in classes:
                    picked.append(unit)
                    freed += unit.tokens
            if picked:
                self._apply(action, picked, tier, max_summary)
                used = self._used(window)

    def _summary_limit(self, window: int) -> int:
        return max(32, min(self.config.summary_max_tokens, int(window * self.config.summary_share)))

    def _apply(self, action: str, units: list[Unit], tier: int, max_summary: int) -> None:
        seqs = [e.seq for u in units for e in u.entries]
        summary = None
        if action == "summarize":
            span = [e.message for u in units for e in u.entries]
            span_tokens = sum(self.message_tokens(m) for m in span)
            # A summary must compress: at most a third of its span (but room for a few facts).
            max_summary = min(max_summary, max(48, span_tokens // 3))
            text, check = summarize_span(span, self.summarizer, self.fallback, self.counter,
                                         span_tokens=span_tokens, max_tokens=max_summary)
            if self.counter.count(text) > max_summary:
                text = self._truncate(text, max_summary)
                check = validate_summary(msgs.readable(span), text, span_tokens, self.counter.count(text),
                                         check.method)
            if self.summarizer is not None and check.method != self.summarizer.name:
                self._state["summary_fallbacks"] += 1
            if text.strip():
                summary = dict(first_seq=min(seqs), last_seq=max(seqs), tier=tier, text=text,
                               tokens=self.counter.count(text), method=check.method, validation=check.as_dict())
                self._state["validations"] = (self._state["validations"] + [check.as_dict()])[-50:]
            else:
                action = "drop"  # nothing to say about the span (e.g. empty tool payloads)
        self._state["compactions"] += 1
        self._state["tiers"][str(tier)] = self._state["tiers"].get(str(tier), 0) + 1
        status = SUMMARIZED if summary else DROPPED
        self.store.compact(self.key, seqs, status, summary, self._state)  # persist first, then forget
        for unit in units:
            self._log.remove(unit, status)
        if summary:
            self._summaries.append({**summary, "created_at": time.time()})

    def compact(self, force: bool = False, window: int | None = None) -> int:
        """Run the tiers now (returns the tier applied); ``force`` summarizes everything that can go:
        afterwards the view is the system messages, one ``[Context Compressed]`` message, the pending turn."""
        with self._lock:
            if not force:
                window = window or self.config.window_tokens
                if not window:
                    raise BudgetError("compact() without force needs a window (config.window_tokens or window=)")
                return self._maybe_compact(window)
            pending = self._pending_unit()
            units = [u for u in self._log.active.values() if not u.pinned and u is not pending]
            if units:
                self._state["forced"] += 1
                window = window or self.config.window_tokens or 8192
                self._apply("summarize", units, 0, self._summary_limit(window))
            return 0

    # -- accessors -------------------------------------------------------------------------
    def messages(self) -> list[dict[str, Any]]:
        """The full history as appended, compaction notwithstanding."""
        with self._lock:
            return [e.message for e in self._log.entries]

    def recent_turns(self, n: int) -> list[dict[str, Any]]:
        with self._lock:
            return [e.message for e in self._log.entries[-n:]] if n > 0 else []

    def summaries(self) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(s) for s in self._summaries]

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
                "summaries": len(self._summaries),
                "compactions": self._state["compactions"], "tiers": dict(self._state["tiers"]),
                "forced_compactions": self._state["forced"],
                "summary_fallbacks": self._state["summary_fallbacks"],
                "hook_failures": self._state["hook_failures"],
                "last_validation": validations[-1] if validations else None,
                "mean_numbers_kept": mean("numbers_kept"), "mean_entities_kept": mean("entities_kept"),
                "mean_compression_ratio": mean("compression_ratio"),
            }
