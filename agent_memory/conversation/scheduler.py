"""The utilization scheduler: which compression level runs, on what, and what validation does.

Every level works on all units but two: the last user message's (kept verbatim) and the newest
(the pending step), so in an agent's tool loop, where one instruction is followed by hundreds of
steps, the levels act on the agent's own earlier steps. A drop always leaves a marker row (a
summary row with method ``marker``) naming the count, tool names and tokens that went.

Levels by the share of the window in use (``CompactionConfig``): light (60%) condenses long
old fuzzy/forgettable messages to their key sentences; structural (75%) drops forgettable
units and summarizes fuzzy ones with the offline digest; llm (88%) drops forgettable, then
fuzzy units, and summarizes strict ones with the LLM (the digest without one); emergency
(97%) drops strict units too. Each step works oldest first and stops once the kept total is
under ``target``. Only appends (and ``compact()``) run the scheduler: a view never does.

A summary is validated before it replaces its span. One that keeps too few numbers, names
or key terms is redone by the next level's summarizer, then over smaller spans; a unit
whose summary still fails is kept verbatim for now ("kept longer") and goes only when a
higher level drops it.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from agent_memory.conversation import messages as msgs
from agent_memory.conversation.compaction import ACTIVE, CONDENSED, DROPPED, MARKER, SUMMARIZED, Retention, Unit
from agent_memory.conversation.light import condense_message
from agent_memory.conversation.summarize import summarize_span
from agent_memory.conversation.summarize import validate as validate_summary
from agent_memory.core.errors import BudgetError, StoreError

log = logging.getLogger(__name__)

F, Z, S = Retention.FORGETTABLE, Retention.FUZZY, Retention.STRICT
LOSSY = {F, Z}
LEVEL_STEPS: dict[int, list[tuple[str, set[Retention]]]] = {
    1: [("condense", LOSSY)],
    2: [("condense", LOSSY), ("drop", {F}), ("summarize", {Z})],
    3: [("drop", {F}), ("drop", {Z}), ("summarize", {S})],
    4: [("drop", {F}), ("drop", {Z}), ("summarize", {S}), ("drop", {S})],
}


class Scheduler:
    """Mixed into ``Session``: it owns ``_log``, ``_state``, ``_summaries``, ``store``, ``config``."""

    # -- utilization ------------------------------------------------------------------------
    def _used(self, window: int) -> int:
        # The header as sized without the entity filter's reading (view.py): close enough to schedule by.
        return self._log.active_tokens + self._header(window, window, judged=False)[1]

    def utilization(self) -> float | None:
        """Share of the configured window in use (None without a window)."""
        window = self.config.window_tokens
        with self._lock:
            return round(self._used(window) / window, 4) if window else None

    def _maybe_compact(self, window: int) -> int:
        used = self._used(window)
        level = self.config.tier_for(used / window)
        if level:
            self._run_level(level, window, used)
        return level

    def _compact_after_append(self) -> None:
        """The scheduler, once the messages are stored. A store failure here must not fail the append: the
        caller would take its stored messages for lost and send them again (a batch twice), and the hooks
        would never run for them. Each compaction is one transaction adopted only once stored, so the
        session stays as the store has it; the next append runs the scheduler again (a view fits its
        budget uncompacted too)."""
        if not self.config.window_tokens:
            return
        try:
            self._maybe_compact(self.config.window_tokens)
        except StoreError as exc:
            self._state["compaction_failures"] = self._state.get("compaction_failures", 0) + 1
            log.warning("session %s: compaction after an append failed (the messages are stored): %s",
                        self.session_id, exc)

    def _candidates(self, level: int) -> list[Unit]:
        """Oldest first, every unit but the protected ones (the last user message, kept verbatim, and the
        newest unit, the pending one): in an agent's tool loop the levels act on its own earlier steps."""
        protected = self._protected_units()
        return [u for u in self._log.active.values() if not u.pinned and not any(u is p for p in protected)]

    def _run_level(self, level: int, window: int, used: int) -> None:
        target = int(self.config.target * window)
        max_summary = self._summary_limit(window)
        for action, classes in LEVEL_STEPS[level]:
            if used <= target:
                break
            if action == "condense":
                self._condense(classes, level, used - target)
            else:
                need = used - target + (max_summary if action == "summarize" else 0)
                picked, freed = [], 0
                kept = self._state.setdefault("kept_longer", {})
                for unit in self._candidates(level):
                    if freed >= need:
                        break
                    if unit.retention in classes and not (action == "summarize"
                                                           and kept.get(str(unit.entries[0].seq), 0) >= level):
                        picked.append(unit)
                        freed += unit.tokens
                if not picked:
                    continue
                if action == "drop":
                    self._commit(picked, level, None)
                else:
                    self._summarize(picked, level, max_summary)
            used = self._used(window)

    def _summary_limit(self, window: int) -> int:
        return max(32, min(self.config.summary_max_tokens, int(window * self.config.summary_share)))

    # -- the light level --------------------------------------------------------------------
    def _condense(self, classes: set[Retention], level: int, need: int) -> None:
        candidates = self._candidates(level)
        keep = self.config.keep_recent_units
        candidates = candidates[: max(0, len(candidates) - keep)] if keep else candidates
        freed, picked = 0, []
        for unit in candidates:
            if freed >= need:
                break
            if unit.retention not in classes:
                continue
            for entry in unit.entries:
                if entry.condensed or entry.tokens < self.config.light_min_tokens:
                    continue
                shown = condense_message(entry.shown, self.config.light_keep_share)
                if shown is None:
                    continue
                freed += entry.tokens - self.message_tokens(shown)
                picked.append((entry, shown))
        if picked:
            state = self._counted(level)
            state["condensed"] = state.get("condensed", 0) + len(picked)
            # Stored first: a failed write leaves the session as the store has it (shown whole, uncounted).
            self.store.compact(self.key, [entry.seq for entry, _ in picked], CONDENSED, None, state)
            self._state = state
            for entry, shown in picked:
                self._log.reshow(entry, shown)
                entry.condensed = True

    # -- summaries with validation ----------------------------------------------------------
    def _summarizers(self, level: int) -> list:
        """Who summarizes at this level, then who redoes a summary validation rejected."""
        order = [self.fallback, self.summarizer] if level <= 2 else [self.summarizer, self.fallback]
        return [s for s in dict.fromkeys(order) if s is not None]

    def _summary(self, units: list[Unit], summarizer, max_summary: int, tier: int) -> dict[str, Any] | None:
        span = [e.message for u in units for e in u.entries]
        seqs = [e.seq for u in units for e in u.entries]
        span_tokens = sum(self.message_tokens(m) for m in span)
        # A summary must compress: at most a third of its span (but room for a few facts).
        max_summary = min(max_summary, max(48, span_tokens // 3))
        primary = summarizer if summarizer is not self.fallback else None
        text, check = summarize_span(span, primary, self.fallback, self.counter,
                                     span_tokens=span_tokens, max_tokens=max_summary)
        if self.counter.count(text) > max_summary:
            text = self._fit_lines(text, max_summary)
            check = validate_summary(msgs.readable(span, salient=True), text, span_tokens, self.counter.count(text),
                                     check.method)
        if self.summarizer is not None and primary is not None and check.method != self.summarizer.name:
            self._state["summary_fallbacks"] += 1
        if not text.strip():
            return None
        self._state["validations"] = (self._state["validations"] + [check.as_dict()])[-50:]
        return {"first_seq": min(seqs), "last_seq": max(seqs), "tier": tier, "text": text,
                "tokens": self.counter.count(text), "method": check.method, "validation": check.as_dict(),
                "check": check}

    def _acceptable(self, summary: dict[str, Any]) -> bool:
        c = self.config
        check = summary["check"]
        # A summary no smaller than its span saves nothing: the span is better kept verbatim.
        return check.compression_ratio > 1 and check.acceptable(
            c.min_numbers_kept, c.min_entities_kept, c.min_key_terms_kept, c.min_identifiers_kept)

    def _summarize(self, units: list[Unit], level: int, max_summary: int) -> None:
        for summarizer in self._summarizers(level):
            summary = self._summary(units, summarizer, max_summary, level)
            if summary is None:  # nothing to say about the span (e.g. empty tool payloads)
                self._commit(units, level, None)
                return
            if self._acceptable(summary):
                self._commit(units, level, summary)
                return
            self._state["redone"] = self._state.get("redone", 0) + 1
        if len(units) > 1:  # smaller spans keep more of their numbers
            half = len(units) // 2
            self._summarize(units[:half], level, max_summary)
            self._summarize(units[half:], level, max_summary)
            return
        kept = self._state.setdefault("kept_longer", {})
        kept[str(units[0].entries[0].seq)] = level
        if len(kept) > 500:  # bounded: the oldest marks matter least
            for key in list(kept)[: len(kept) - 500]:
                del kept[key]
        self.store.save_state(self.key, self._state)

    def _commit(self, units: list[Unit], tier: int, summary: dict[str, Any] | None) -> None:
        seqs = [e.seq for u in units for e in u.entries]
        if summary is not None:
            summary = {k: v for k, v in summary.items() if k != "check"}
        elif seqs:  # a drop is never silent: a marker in the view names what went
            summary = self._marker(units, tier)
        state = self._counted(tier)
        status = SUMMARIZED if summary and summary["method"] != MARKER else DROPPED
        self.store.compact(self.key, seqs, status, summary, state)  # persist first, then forget
        self._state = state
        for unit in units:
            self._log.remove(unit, status)
        if summary:
            self._summaries.append({**summary, "created_at": time.time()})

    def _marker(self, units: list[Unit], tier: int) -> dict[str, Any]:
        """What a drop leaves in the view: how many messages, which tools, how many tokens, and where the
        text still is (the session's full history; the long-term archive under the same ``m<seq>`` IDs)."""
        entries = [e for u in units for e in u.entries]
        tools = tools_of(entries)
        tokens = sum(self.message_tokens(e.message) for e in entries)
        first, last = entries[0].seq, entries[-1].seq
        counts = {"messages": len(entries), "tokens": tokens, "tools": tools}
        text = marker_text(first, last, counts)
        return {"first_seq": first, "last_seq": last, "tier": tier, "text": text,
                "tokens": self.counter.count(text), "method": MARKER, "validation": counts}

    def _counted(self, tier: int) -> dict[str, Any]:
        """The session state with one more compaction at ``tier``: a copy, stored with the compaction and
        adopted only once that write succeeded, so a failed one is not counted as done."""
        tiers = dict(self._state["tiers"])
        tiers[str(tier)] = tiers.get(str(tier), 0) + 1
        return {**self._state, "compactions": self._state["compactions"] + 1, "tiers": tiers}

    def compact(self, force: bool = False, window: int | None = None) -> int:
        """Run the scheduler now (returns the level applied); ``force`` summarizes everything that can go:
        afterwards the view is the system messages, one ``[Context Compressed]`` message, the pending turn."""
        with self._lock:
            if not force:
                window = window or self.config.window_tokens
                if not window:
                    raise BudgetError("compact() without force needs a window (config.window_tokens or window=)")
                return self._maybe_compact(window)
            protected = self._protected_units()
            units = [u for u in self._log.active.values()
                     if not u.pinned and not any(u is p for p in protected)]
            if units:
                self._state["forced"] += 1
                window = window or self.config.window_tokens or 8192
                summarizer = self.summarizer or self.fallback
                summary = self._summary(units, summarizer, self._summary_limit(window), 0)
                self._commit(units, 0, summary)
            return 0


def describe(counts: dict[str, Any]) -> str:
    """``28 messages (14 tool calls: read_file x8, grep x6), 5,412 tokens``."""
    tools = counts.get("tools") or {}
    calls = sum(tools.values())
    named = ", ".join(f"{name} x{n}" for name, n in sorted(tools.items(), key=lambda kv: (-kv[1], kv[0]))[:6])
    more = ", ..." if len(tools) > 6 else ""
    what = f" ({calls} tool calls: {named}{more})" if calls else ""
    return f"{counts['messages']} messages{what}, {counts['tokens']:,} tokens"


def span_name(first: int, last: int) -> str:
    return f"m{first}" if first == last else f"m{first}-m{last}"


ARCHIVED = "archived: the full text stays in the session history and long-term memory"


def marker_text(first: int, last: int, counts: dict[str, Any]) -> str:
    """``[Dropped m3-m40: 28 messages (14 tool calls: read_file x8, grep x6), 5,412 tokens; archived ...]``."""
    return f"[Dropped {span_name(first, last)}: {describe(counts)}; {ARCHIVED}]"


def loaded_status(status: str) -> str:
    """A condensed message is an active one whose shown text the light level recomputes."""
    return ACTIVE if status == CONDENSED else status


def tools_of(entries) -> dict[str, int]:
    tools: dict[str, int] = {}
    for entry in entries:
        for name in msgs.call_names(entry.message).values():
            tools[name] = tools.get(name, 0) + 1
    return tools


def earlier_note(rows: list[dict[str, Any]]) -> str:
    """One line for the summaries and drop markers the header has no room for (never a silent loss)."""
    if not rows:
        return ""
    markers = [r for r in rows if r.get("method") == MARKER]
    summaries = len(rows) - len(markers)
    first, last = min(r["first_seq"] for r in rows), max(r["last_seq"] for r in rows)
    parts = [f"{summaries} older summaries"] if summaries else []
    # A time to live's marker (expiry.py): those messages are no longer in the session history.
    removed = [r for r in markers if r["validation"].get("removed")]
    dropped = [r for r in markers if not r["validation"].get("removed")]
    if dropped:
        parts.append(f"dropped {describe(marker_counts(dropped))}")
    if parts:
        parts.append(ARCHIVED)
    if removed:
        parts.append(f"removed by the time to live: {describe(marker_counts(removed))}")
    return f"[Earlier, {span_name(first, last)}, not shown here: {'; '.join(parts)}]"


def marker_counts(markers: list[dict[str, Any]]) -> dict[str, Any]:
    """The messages, tokens and tool calls that ``markers`` (drop or removal marker rows) name, added up."""
    tools: dict[str, int] = {}
    for row in markers:
        for name, n in (row["validation"].get("tools") or {}).items():
            tools[name] = tools.get(name, 0) + n
    return {"messages": sum(r["validation"].get("messages", 0) for r in markers),
            "tokens": sum(r["validation"].get("tokens", 0) for r in markers), "tools": tools}
