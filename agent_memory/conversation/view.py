"""How a session's window is shown to a model: the token-bounded view and its header message.

Always in the view: every system/developer message (moved to the top, in order), the last
user message (verbatim) and the newest unit (the pending step; a tool call still waiting
for its result shows as a note), and, right after the system messages, one header message
holding the key entities, the ``[Context Compressed]`` summaries and the ``[Dropped ...]``
markers (what each drop removed; older ones folded into one line). The rest is the most
recent units that fit, in the order of their first messages (so a tool result that came after
other messages shows right after its call); units without room are named by one note. The view is a pure read:
compaction runs on append, against the configured window (``scheduler.py``), never against
a caller's budget.

Its own file because rendering within a budget is separate from keeping the session's state
(``session.py``): it only reads that state, apart from its two caches.
"""

from __future__ import annotations

import bisect
import copy
import heapq
from typing import Any

from agent_memory.conversation import messages as msgs
from agent_memory.conversation.compaction import MARKER, Unit
from agent_memory.conversation.entity_filter import (
    CANDIDATE_FACTOR,
    is_name_in,
    named_mid_sentence,
    names_among,
    read_openers,
    verdict_of,
    without_model,
)
from agent_memory.conversation.scheduler import describe, earlier_note, span_name, tools_of
from agent_memory.conversation.significance import is_entity_word
from agent_memory.core.errors import BudgetError

HEADER = "[Context Compressed]"
ENTITY_HEADER = "[Key entities]"


class ViewBuilder:
    """Mixed into ``Session``: it reads ``_log``, ``_summaries``, ``_entities``, ``config``, ``counter`` and
    ``message_tokens`` under ``_lock``, and keeps ``_top_cache``, ``_entity_verdicts`` and ``_header_cache``
    (reset by the session)."""

    def view(self, budget: int) -> list[dict[str, Any]]:
        """Messages for the next model call, within ``budget`` tokens (see :meth:`count_view`).

        Always there: the system/developer messages, the last user message (verbatim) and the newest
        unit (the pending step); then the most recent units that fit. A tool call still waiting for its
        result shows as a ``[pending tool call: ...]`` note (a provider rejects a call without a result);
        units left out for the budget are named by one ``[Not in this view: ...]`` note. When the messages
        always there exceed the budget on their own, their tool results show their heads and ``[... N of M characters cut to fit the
        view budget]`` (this view only: the session keeps them whole). The messages are copies."""
        if budget <= 0:
            raise BudgetError(f"view budget must be positive, got {budget}")
        with self._lock:  # a pure read: nothing here changes the session (compaction runs on append)
            systems = self._log.systems
            protected = self._protected_units()
            shown = {u.uid: self._shown(u) for u in protected}
            room = budget - sum(e.tokens for e in systems)
            rest = room - sum(shown[u.uid][1] for u in protected)
            if rest < 0:  # an agent loop must not stall on one huge tool result: cut it, in this view only
                rest = self._fit_protected(protected, shown, room, budget)
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
            # Copies: a caller editing its view must not edit the session (nor the cached header).
            return [copied(m) for m in [e.shown for e in systems] + header + ([note] if note else []) + body]

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
        """The last user message's unit (verbatim) and the newest step, oldest first (``UnitLog.protected``)."""
        return self._log.protected()

    def _fit_protected(self, protected: list[Unit], shown: dict[int, tuple[list[dict[str, Any]], int]],
                       room: int, budget: int) -> int:
        """Cut the protected units' tool results to one common length, the longest that lets the units fit
        ``room`` (in ``shown``, the view's copies; parallel results share the cut); returns the tokens left.
        The user turn, assistant text and every call/result pair stay: a result is shortened, never removed.
        Room is kept for the note naming the units left out when it can be. BudgetError when even results
        cut to their marker do not fit (e.g. a system prompt over the budget)."""
        others = [u for u in self._log.active.values() if not any(u is p for p in protected)]
        note = self._left_out_note(others)
        targets = [room - self.message_tokens(note), room] if note else [room]
        originals = {u.uid: shown[u.uid][0] for u in protected}
        longest = max((len(t) for ms in originals.values() for m in ms for t in result_texts(m)), default=0)

        def cut(cap: int) -> dict[int, tuple[list[dict[str, Any]], int]]:
            out = {}
            for uid, messages in originals.items():
                messages = [cut_results(m, cap) for m in messages]
                out[uid] = messages, sum(self.message_tokens(m) for m in messages)
            return out

        for target in targets:
            if sum(tokens for _, tokens in cut(0).values()) > target:
                continue
            low, high = 0, longest  # the longest head (characters per result) that fits: a binary search
            while low < high:
                mid = (low + high + 1) // 2
                if sum(tokens for _, tokens in cut(mid).values()) <= target:
                    low = mid
                else:
                    high = mid - 1
            shown.update(cut(low))
            return room - sum(shown[u.uid][1] for u in protected)
        need = budget - room + sum(tokens for _, tokens in cut(0).values())
        raise BudgetError(  # no session name: internally it carries the tenant
            f"system messages, the last user message and the newest step need {need} tokens (tool results"
            f" cut to their marker), more than the view budget {budget}")

    def _pending_unit(self) -> Unit | None:
        """The newest unit: what the agent is doing now (kept whole in every view)."""
        protected = self._protected_units()
        return protected[-1] if protected else None

    def _top_entities(self, judged: bool = True) -> list[str]:
        """The names the header shows, each judged by ``entity_filter`` (``judged``), or the same candidates
        unread: the scheduler sizes the header after every append, and the model's reading belongs to the
        view, not to an append (a name it judged filler before is left out either way)."""
        cached = self._top_cache.get(judged)
        if cached is None or cached[0] != self._entity_version:  # views far outnumber entity changes
            # Filtered here too: sessions stored before the filter still hold "Fix" or "March".
            names = ((k, v) for k, v in self._entities.items() if is_entity_word(k))
            limit = self.config.max_entities
            ranked = heapq.nlargest(CANDIDATE_FACTOR * limit, names, key=lambda kv: (kv[1][0], kv[1][1]))
            if judged:
                # The rules on each new candidate, once; the sentence starts they leave, in one batch of the model.
                ruled = {name: without_model(name, text) for name, (_, last) in ranked
                         if name not in self._entity_verdicts and (text := self._message_text(last)) is not None}
                read_openers([snippet for _, openers in ruled.values() for snippet in openers])
                top = names_among((name for name, _ in ranked), lambda name: self._is_key_entity(name, ruled), limit)
            else:
                top = [name for name, _ in ranked if self._entity_verdicts.get(name, (True,))[0]][:limit]
            cached = self._top_cache[judged] = (self._entity_version, top)
        return list(cached[1])

    def _is_key_entity(self, name: str, ruled: dict[str, tuple[bool | None, list[str]]]) -> bool:
        """``entity_filter``'s verdict on ``name``, judged against the newest message that named it, once (``ruled``:
        the rules' findings on the new candidates, made with the batch). A name stays a name; a word judged filler
        becomes one when a newer message capitalizes it mid-sentence (the model reads each name once at most)."""
        last = self._entities[name][1]
        kept = self._entity_verdicts.get(name)
        if kept is not None and (kept[0] or kept[1] == last):
            return kept[0]
        if kept is None:  # a candidate not ruled on: its message is no longer held
            verdict = verdict_of(ruled[name]) if name in ruled else True
        elif (text := self._message_text(last)) is None:
            verdict = True
        else:
            verdict = named_mid_sentence(name, text) and is_name_in(name, text)  # no sentence for the model
        self._entity_verdicts[name] = (verdict, last)
        return verdict

    def _message_text(self, seq: int) -> str | None:
        """The text of message ``seq`` of the log (None: no longer held)."""
        entries = self._log.entries
        i = bisect.bisect_left(entries, seq, key=lambda entry: entry.seq)
        return msgs.text_of(entries[i].message) if i < len(entries) and entries[i].seq == seq else None

    def _header(self, budget: int, room: int, judged: bool = True) -> tuple[list[dict[str, Any]], int]:
        """The one header message (entities + summaries) that fits, and its tokens (``judged``: see
        :meth:`_top_entities`)."""
        names = self._top_entities(judged)
        # Keyed on the top entity *set* (rendered sorted), which changes far less often than counts do.
        key = (budget, len(self._summaries), tuple(sorted(names)), id(self.config))
        cached = self._header_cache.get(key)
        if cached is not None and cached[1] <= room:
            return list(cached[0]), cached[1]
        result = self._build_header(budget, room, names)
        if room >= budget:  # only an unconstrained header is reusable: the view's and the scheduler's
            if len(self._header_cache) > 1:
                self._header_cache.clear()
            self._header_cache[key] = result
        return list(result[0]), result[1]

    def _build_header(self, budget: int, room: int, names: list[str]) -> tuple[list[dict[str, Any]], int]:
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


def copied(value: Any) -> Any:
    """A deep copy of a message: JSON-shaped, so dicts and lists are rebuilt and strings and numbers shared
    (immutable); anything else goes through ``copy.deepcopy``. Half the time of deepcopy on a view."""
    if isinstance(value, dict):
        return {k: copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copied(v) for v in value]
    if value is None or isinstance(value, (str, int, float)):
        return value
    return copy.deepcopy(value)


def result_texts(message: dict[str, Any]) -> list[str]:
    """The text of each tool result in ``message`` (a ``tool`` message, or ``tool_result`` blocks)."""
    if message.get("role") == "tool":
        return [msgs.text_of(message)]
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [msgs.content_text(b.get("content")) for b in content
            if isinstance(b, dict) and b.get("type") == "tool_result"]


def cut_results(message: dict[str, Any], cap: int) -> dict[str, Any]:
    """A copy of ``message`` whose tool results longer than ``cap`` characters keep their head and say how
    much went (``message`` itself when none is that long)."""
    if message.get("role") == "tool":
        text = msgs.text_of(message)
        return {**message, "content": cut_text(text, cap)} if len(text) > cap else message
    content = message.get("content")
    if not isinstance(content, list):
        return message
    blocks, changed = [], False
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            text = msgs.content_text(block.get("content"))
            if len(text) > cap:  # the content becomes text: a cut image or document block is named, not kept
                block, changed = {**block, "content": cut_text(text, cap)}, True
        blocks.append(block)
    return {**message, "content": blocks} if changed else message


def cut_text(text: str, cap: int) -> str:
    """The head of ``text`` (at most ``cap`` characters, whole lines when that keeps half of it) and a
    marker: ``[... 36000 of 37500 characters cut to fit the view budget]``."""
    head = text[:cap]
    line_end = head.rfind("\n")
    if line_end >= cap // 2:
        head = head[:line_end]
    head = head.rstrip()
    marker = f"[... {len(text) - len(head)} of {len(text)} characters cut to fit the view budget]"
    return f"{head}\n{marker}" if head else marker
