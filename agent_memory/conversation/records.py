"""What a session stores and hands its hooks: a message ready to store, a significant turn to promote,
and every stored message to archive.

Their own module so that the hooks' receivers (``working_memory.py``, ``manager.py``) need not
reach into the session's internals; ``session.py`` re-exports both.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from agent_memory.conversation.compaction import Retention


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
    more: bool = False  # more messages of the same batch follow (their records come next)
    inferred: bool = False  # undated, ``created_at`` taken from a later dated message (timeline.py)
    # Messages stored before, undated, that this one redated: {seq: the detector's reasons}; their
    # turns are archived again with the inferred time.
    redated: dict[int, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class PendingMessage:
    """A message checked and classified, ready to store (``Session._prepare``)."""

    message: dict[str, Any]
    klass: Retention
    unclassified: bool
    created_at: float
    tokens: int
    judgement: Any
    entities: tuple[str, ...]
    stated: bool = False  # ``created_at`` is the message's own timestamp (else: when it was appended)
    inferred: bool = False  # ``created_at`` was taken from a later dated message (timeline.py)

    @property
    def significant(self) -> bool:
        return bool(self.judgement and self.judgement.significant)

    @property
    def reasons(self) -> tuple[str, ...]:
        return tuple(self.judgement.reasons) if self.significant else ()
