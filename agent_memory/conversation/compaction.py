"""The in-memory shape of a session: entries grouped into atomic units, micro-compaction,
and the tier configuration.

A *unit* is what compaction and the view keep or remove as a whole: a plain message, or
an assistant message with tool calls together with every message answering them. That
is how no view ever holds a tool result without its call, or a call without its result.
A unit holds no other message: one appended between a call and its late result is a unit
of its own, and the view, ordering units by their first message, shows the result right
after its call.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable

from agent_memory.conversation import messages as msgs
from agent_memory.core.settings_defaults import (
    SESSION_EMERGENCY,
    SESSION_LIGHT,
    SESSION_LLM,
    SESSION_STRUCTURAL,
    SESSION_WINDOW_TOKENS,
)


class Retention(str, Enum):
    FORGETTABLE = "forgettable"  # may be dropped without trace
    FUZZY = "fuzzy"  # may be summarized (the default for unclassified messages)
    STRICT = "strict"  # kept verbatim until the emergency tier

    @classmethod
    def parse(cls, value: "Retention | str") -> "Retention":
        try:
            return cls(value)
        except ValueError:
            raise ValueError(f"retention must be one of {[r.value for r in cls]}, got {value!r}") from None


RANK = {Retention.FORGETTABLE: 0, Retention.FUZZY: 1, Retention.STRICT: 2}
ACTIVE, SUMMARIZED, DROPPED = "active", "summarized", "dropped"
CONDENSED = "condensed"  # stored status of a message the light level condensed; in memory it is active
MARKER = "marker"  # the method of a summary row that only records a drop (what went, where it is archived)


# The scheduler's levels, by the share of the window in use: see session.py LEVEL_STEPS.
LEVELS = {1: "light", 2: "structural", 3: "llm", 4: "emergency"}


@dataclass
class CompactionConfig:
    """Per-session knobs. Compaction runs on append, against ``window_tokens`` (``None``: never on its
    own; ``compact()`` still works); a view only reads. Thresholds are shares of the window."""

    # Defaults live in core/settings_defaults.py (shared with the settings ``AGENT_MEMORY_SESSION_*``).
    window_tokens: int | None = SESSION_WINDOW_TOKENS
    light: float = SESSION_LIGHT  # long old fuzzy/forgettable messages keep their key sentences behind a marker
    structural: float = SESSION_STRUCTURAL  # drop forgettable, summarize fuzzy with the offline structural digest
    llm: float = SESSION_LLM  # drop forgettable, then fuzzy; summarize strict with the LLM (structural without one)
    # drop strict too: only system messages, the last user message and the newest unit stay
    emergency: float = SESSION_EMERGENCY
    target: float = 0.50  # after compaction the kept total stays under this share of the window
    light_min_tokens: int = 80  # shorter messages are not worth condensing
    light_keep_share: float = 0.35  # share of a condensed message's sentences kept
    keep_recent_units: int = 2  # the light level spares the newest units
    # Validation acts: a summary keeping less than these shares is redone (LLM, then smaller spans) or its
    # messages are kept longer.
    min_numbers_kept: float = 0.5
    min_entities_kept: float = 0.4
    min_key_terms_kept: float = 0.6
    min_identifiers_kept: float = 0.5  # hex codes, paths, versions, error codes (see significance.identifiers)
    keep_tool_results: int = 3  # micro-compaction keeps this many newest tool results whole (and the newest step)
    summary_max_tokens: int = 400
    summary_share: float = 0.30  # at most this share of the budget goes to summaries in the view
    entity_share: float = 0.05  # ... and this share to the entity memory
    max_entities: int = 12
    message_overhead: int = 4  # tokens a provider adds around each message
    default_retention: Retention = Retention.FUZZY

    def __post_init__(self) -> None:
        if not (0 < self.target <= self.light <= self.structural <= self.llm <= self.emergency):
            raise ValueError(
                f"need 0 < target <= light <= structural <= llm <= emergency, got target={self.target}"
                f" light={self.light} structural={self.structural} llm={self.llm} emergency={self.emergency}")
        if self.window_tokens is not None and self.window_tokens < 64:
            raise ValueError(f"window_tokens must be >= 64 or None, got {self.window_tokens}")
        if self.keep_tool_results < 0:
            raise ValueError(f"keep_tool_results must be >= 0, got {self.keep_tool_results}")
        for name in ("light_keep_share", "min_numbers_kept", "min_entities_kept", "min_key_terms_kept",
                     "min_identifiers_kept"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"{name} must be within [0, 1], got {getattr(self, name)}")
        self.default_retention = Retention.parse(self.default_retention)

    def tier_for(self, utilization: float) -> int:
        for level, threshold in ((4, self.emergency), (3, self.llm), (2, self.structural), (1, self.light)):
            if utilization >= threshold:
                return level
        return 0

    def as_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["default_retention"] = self.default_retention.value
        return out


@dataclass(eq=False)
class Entry:
    seq: int
    message: dict[str, Any]  # as appended, never changed
    retention: Retention
    tokens: int  # of the shown form (``shown``), overhead included
    shown: dict[str, Any]  # after micro-compaction (tool results) or the light level (long old text)
    significant: bool = False
    condensed: bool = False
    unit: "Unit | None" = None

    @property
    def is_system(self) -> bool:
        """System and developer messages: instructions, never compacted, shown first."""
        return msgs.is_instruction(self.message)


_unit_ids = itertools.count()


@dataclass(eq=False)
class Unit:
    entries: list[Entry] = field(default_factory=list)
    open_ids: set[str] = field(default_factory=set)
    status: str = ACTIVE
    uid: int = field(default_factory=lambda: next(_unit_ids))

    @property
    def tokens(self) -> int:
        return sum(e.tokens for e in self.entries)

    @property
    def retention(self) -> Retention:
        return max((e.retention for e in self.entries), key=RANK.__getitem__)

    @property
    def pinned(self) -> bool:
        """System messages are never compacted, nor is a unit still waiting for tool results."""
        return bool(self.open_ids) or any(e.is_system for e in self.entries)


class UnitLog:
    """Entries in order, grouped into units, with incremental micro-compaction."""

    def __init__(self, count: Callable[[dict[str, Any]], int], keep_tool_results: int) -> None:
        self.count = count
        self.keep = keep_tool_results
        self.entries: list[Entry] = []
        self.active: dict[int, Unit] = {}  # uid -> unit, in order (dicts keep insertion order)
        self.by_call: dict[str, Unit] = {}
        self.names: dict[str, str] = {}
        self.results: list[tuple[Entry, str]] = []  # every tool result, oldest first
        self.truncated = 0  # how many of ``results`` micro-compaction has handled
        self.waiting: list[tuple[Entry, str]] = []  # handled, but in a protected unit: truncated later
        self.pending: Entry | None = None  # the last user turn
        self.active_tokens = 0  # tokens of active units, system ones included
        self.systems: list[Entry] = []  # never compacted, so kept apart for a cheap view

    def add(self, entry: Entry, status: str = ACTIVE) -> None:
        message = entry.message
        self.entries.append(entry)
        self.names.update(msgs.call_names(message))
        rids = msgs.result_ids(message)
        unit = self._owner(rids) if rids else None
        if unit is None:
            unit = Unit(status=status)
            if status == ACTIVE:
                self.active[unit.uid] = unit
        unit.entries.append(entry)
        entry.unit = unit
        unit.open_ids.difference_update(rids)
        for cid in msgs.call_ids(message):
            unit.open_ids.add(cid)
            self.by_call[cid] = unit
        if unit.status == ACTIVE:
            self.active_tokens += entry.tokens
        if msgs.is_user_turn(message):
            self.pending = entry
        if entry.is_system:
            self.systems.append(entry)
        self.results.extend((entry, rid) for rid in rids)
        self._micro()

    def _owner(self, rids: list[str]) -> Unit | None:
        """The unit holding these results' calls, and only it: messages appended between a call and a
        late result stay units of their own (compaction keeps or drops them apart), and the view shows
        the result right after its call's step, units being ordered by their first message (a chat API
        refuses a call followed by anything but its results). A message answering calls of several units
        (``tool_result`` blocks for two assistant messages) joins those units into one, nothing between."""
        owners = {u.uid: u for u in (self.by_call.get(r) for r in rids) if u is not None and u.status == ACTIVE}
        if not owners:
            return None  # an orphan result (bad input): it stays a unit of its own
        head, *others = sorted(owners.values(), key=lambda u: u.entries[0].seq)
        for other in others:
            for e in other.entries:
                e.unit = head
            head.entries.extend(other.entries)
            head.open_ids |= other.open_ids
            for cid in other.open_ids:
                self.by_call[cid] = head
            del self.active[other.uid]
        if others:
            head.entries.sort(key=lambda e: e.seq)
        return head

    def protected(self) -> list[Unit]:
        """The last user message's unit (kept verbatim) and the newest step (the unit of the newest message
        that is not a system one), oldest first: no level and no micro-compaction touches them, and every view
        shows them (a tool result bigger than the view is cut in the view's copy only: view.py)."""
        out: list[Unit] = []
        pending = self.pending
        if pending is not None and pending.unit is not None and pending.unit.status == ACTIVE:
            out.append(pending.unit)
        newest = self._newest_step()
        if newest is not None and not any(newest is u for u in out):
            out.append(newest)
        return sorted(out, key=lambda u: u.entries[0].seq)

    def _newest_step(self) -> Unit | None:
        """The unit of the newest message that is not a system one: a late tool result makes its call's
        step the newest (the agent acts on that result now), though older units follow it in the view."""
        # A system message appended after a step must not unprotect that step: skip system messages.
        entry = next((e for e in reversed(self.entries) if not e.is_system), None)
        if entry is not None and entry.unit is not None and entry.unit.status == ACTIVE:
            return entry.unit
        return next((u for u in reversed(self.active.values()) if not all(e.is_system for e in u.entries)), None)

    def _micro(self) -> None:
        """Truncate results that fell out of the ``keep`` most recent (each handled once: idempotent).
        Strict results are never truncated, nor is a result its marker would not shorten; a result in a
        protected unit waits until that unit is protected no longer (the model is acting on it now)."""
        old = len(self.results) - self.keep
        if self.truncated >= old and not self.waiting:
            return
        protected = self.protected()
        due = self.waiting + self.results[self.truncated:max(old, self.truncated)]
        self.truncated = max(old, self.truncated)
        self.waiting = []
        for entry, rid in due:
            if any(entry.unit is u for u in protected):
                self.waiting.append((entry, rid))
            elif entry.retention is not Retention.STRICT:  # strict is verbatim until a level acts on its unit
                self._truncate(entry, rid)

    def _truncate(self, entry: Entry, rid: str) -> None:
        shown = msgs.truncate_results(entry.shown, {rid}, self.names)  # unchanged when no longer than its marker
        if shown is entry.shown:
            return
        tokens = self.count(shown)
        if entry.unit is not None and entry.unit.status == ACTIVE:
            self.active_tokens += tokens - entry.tokens
        entry.shown, entry.tokens = shown, tokens

    def reshow(self, entry: Entry, shown: dict[str, Any]) -> None:
        """Show ``entry`` as ``shown`` from now on (the light level), keeping the token total right."""
        tokens = self.count(shown)
        if entry.unit is not None and entry.unit.status == ACTIVE:
            self.active_tokens += tokens - entry.tokens
        entry.shown, entry.tokens = shown, tokens

    def remove(self, unit: Unit, status: str) -> None:
        if unit.status == ACTIVE:
            self.active_tokens -= unit.tokens
            self.active.pop(unit.uid, None)
        unit.status = status
