"""When an undated message was said, in a session that replays its history.

A message's time is its ``timestamp``; without one, when it was appended. A session fed from history
(a conversation of 2023 imported message by message) may get a message without a timestamp: appended
today, it would read as said today, under a heading of its own among the 2023 turns. Messages run
forward in time, so when the next message with a timestamp states a time earlier than the undated
message's, and not earlier than the dated message before it, the undated message belongs to that
history: it takes the next message's time (it was said before it), recorded as inferred. A live
conversation continued after an import never meets the condition (its messages are later than the
history), nor does history appended after live messages (it goes back before the dated message that
came before them), so neither is ever redated.

Kept per session in the process (``Session._timeline``) and rebuilt from the stored messages whenever the
session is loaded (:meth:`Timeline.of_stored`: each row says whether its time was stated), so a restart, or
another replica's write, between an undated message and the next dated one dates it as one process would.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

from agent_memory.conversation import messages as msgs
from agent_memory.conversation.significance import RuleDetector
from agent_memory.core.errors import StoreError

log = logging.getLogger(__name__)

# Undated messages awaiting the next dated one; past this many in a row, the session is live again
# (a history missing that many timestamps has none to infer them from).
MAX_UNDATED = 1000


@dataclass(frozen=True)
class Undated:
    """An undated message appended after a dated one: ``appended_at`` is its time until a dated one
    follows; ``reasons``, the detector's, travel with it to the archive when it is redated."""

    seq: int
    appended_at: float
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True)
class Timeline:
    """``anchor``: the time the last dated message stated (None: none in this process); ``undated``: the
    undated messages appended since, oldest first."""

    anchor: float | None = None
    undated: tuple[Undated, ...] = ()

    def after(self, seq: int, created_at: float, stated: bool,
              reasons: tuple[str, ...] = ()) -> tuple["Timeline", list[Undated]]:
        """The timeline once message ``seq`` (time ``created_at``, ``stated`` by its timestamp) is stored,
        and the undated messages that now take ``created_at`` as their inferred time."""
        if not stated:
            if self.anchor is None or len(self.undated) >= MAX_UNDATED:
                return Timeline(), []  # live: nothing before a later dated message is redated
            return Timeline(self.anchor, (*self.undated, Undated(seq, created_at, reasons))), []
        replayed = self.anchor is not None and created_at >= self.anchor
        return Timeline(created_at), [u for u in self.undated if replayed and u.appended_at > created_at]

    @staticmethod
    def of_stored(rows: Sequence[dict[str, Any]], reasons: Callable[[dict[str, Any]], tuple[str, ...]]) -> "Timeline":
        """The timeline the appends that stored ``rows`` (a session's messages by seq, ``load_messages``) left:
        the time of the last dated message and the undated ones after it, each with its ``reasons``. A row
        stored before rows said whether their time was stated (``stated`` None) counts as live: nothing
        before it is redated, as before a restart it was not."""
        start = len(rows)
        while start and rows[start - 1].get("stated") is False:
            start -= 1
        if not start or rows[start - 1].get("stated") is not True:
            return Timeline()
        timeline = Timeline(rows[start - 1]["created_at"])
        for row in rows[start:]:
            timeline, _ = timeline.after(row["seq"], row["created_at"], False, reasons(row))
        return timeline

    def replay(self, first: int, messages: Sequence[tuple[float, bool, tuple[str, ...]]]
               ) -> tuple["Timeline", dict[int, tuple[float, tuple[str, ...]]]]:
        """The timeline once ``messages`` ((time, stated, reasons) each) are stored from seq ``first``, and
        {seq: (inferred time, reasons)} of the undated messages, stored before or among them, that a dated
        one among them redates."""
        timeline, inferred = self, {}
        for n, (created_at, stated, reasons) in enumerate(messages):
            timeline, replayed = timeline.after(first + n, created_at, stated, reasons)
            inferred.update((u.seq, (created_at, u.reasons)) for u in replayed)
        return timeline, inferred


class TimelineKeeper:
    """Mixed into ``Session``: it reads and keeps ``_timeline`` (rebuilt by ``_load``) under ``_lock``, and
    writes inferred times through ``store``."""

    def _stored_reasons(self, row: dict[str, Any]) -> tuple[str, ...]:
        """A stored undated message's reasons, as its append judged them (``PendingMessage.reasons``): by the
        rules, which a model's judge falls back on too, so that opening a session asks no model."""
        if not row["significant"]:
            return ()
        return tuple(RuleDetector().judge(row["message"]["role"], msgs.text_of(row["message"])).reasons)

    def _dated(self, first: int, items: list[Any]) -> tuple[list[Any], dict, Timeline]:
        """``items`` (``records.PendingMessage``, to be stored from seq ``first``) with the times inferred for
        their undated ones, the messages stored before them that a dated one among them redates
        ({seq: (time, reasons)}), and the session's timeline after them."""
        timeline, inferred = self._timeline.replay(first, [(i.created_at, i.stated, i.reasons) for i in items])
        dated = [replace(item, created_at=inferred[first + n][0], inferred=True) if first + n in inferred else item
                 for n, item in enumerate(items)]
        return dated, {seq: when for seq, when in inferred.items() if seq < first}, timeline

    def _redate(self, redated: dict[int, tuple[float, tuple[str, ...]]]) -> None:
        """Store the times inferred for messages stored before; a failure leaves them at their append time
        (and empties ``redated``: the archive keeps their turns as they are)."""
        if not redated:
            return
        try:
            self.store.redate(self.key, [(seq, when) for seq, (when, _) in sorted(redated.items())])
        except StoreError as exc:
            log.warning("session %s: inferred times of %d undated messages not stored: %s", self.session_id,
                        len(redated), exc)
            redated.clear()
