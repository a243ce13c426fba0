"""Sessions by (session_id, agent_id) over one SQLite file, plus the retrieval accessors."""

from __future__ import annotations

import threading
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Callable

from agent_memory.conversation.compaction import MARKER, CompactionConfig
from agent_memory.conversation.expiry import KEPT_ROLES, removable_through, removal_marker
from agent_memory.conversation.message_validation import check_session_id
from agent_memory.conversation.session import Appended, Session, SignificantTurn
from agent_memory.conversation.significance import RuleDetector, SignificanceDetector
from agent_memory.conversation.summarize import Summarizer
from agent_memory.core.tokens import TokenCounter
from agent_memory.stores.session_storage import SessionStorage
from agent_memory.stores.sqlite_sessions import SessionStore


def compaction_config(settings) -> CompactionConfig:
    """Every session's defaults from settings (``AGENT_MEMORY_SESSION_*``); a session may override them."""
    return CompactionConfig(window_tokens=settings.session_window_tokens, light=settings.session_light,
                            structural=settings.session_structural, llm=settings.session_llm)


class SessionManager:
    """``SessionManager(db_path, counter)``: ``db_path`` is a file, or a directory that gets
    ``sessions.sqlite3``. Each (session_id, agent_id) pair has its own history and compaction state."""

    def __init__(self, db_path: str | Path, counter: TokenCounter, summarizer: Summarizer | None = None,
                 *, config: CompactionConfig | None = None,
                 detector: SignificanceDetector | None = None,
                 on_significant: Callable[[SignificantTurn], Any] | None = None,
                 synchronous: str = "FULL", store: SessionStorage | None = None) -> None:
        # ``store``: another backend (PostgreSQL); ``db_path`` is then unused. The served one is built by
        # ``Services.sessions`` (services.py) from the process's LLM client and token counter.
        self.store = store if store is not None else SessionStore(db_path, synchronous=synchronous)
        self.counter = counter
        self.config = config or CompactionConfig()
        self.summarizer = summarizer
        self.detector = detector or RuleDetector()
        self.on_significant = on_significant
        # Every stored message (working_memory.py archives them); set after construction like on_significant.
        self.on_appended: Callable[[Appended], Any] | None = None
        # The first sequence number of a session that holds no message: past the turns long-term memory
        # archived under its ID before it was deleted (working_memory.py sets it; see Session._load).
        self.first_seq: Callable[[str, str], int] | None = None
        self._sessions: dict[tuple[str, str], Session] = {}
        self._lock = threading.Lock()

    def session(self, session_id: str, agent_id: str | None = None, *,
                config: CompactionConfig | None = None) -> Session:
        check_session_id(session_id)  # refused as every surface words it (core/names.py), before any lookup
        key = (session_id, agent_id or "")
        with self._lock:
            found = self._sessions.get(key)
            created = found is None
            if found is None:
                found = Session(self.store, session_id, agent_id, self.counter, config=config, defaults=self.config,
                                summarizer=self.summarizer, detector=self.detector,
                                on_significant=self._hook, on_appended=self._appended, first_seq=self._first_seq)
                self._sessions[key] = found
        if not created:  # outside the manager's lock: either may read the whole session again
            if config is not None:
                found.use_config(config)
            found.refresh()  # a shared store: another replica may have written since
        return found

    def _hook(self, record: SignificantTurn) -> None:
        # Read at call time, so the ingestion pipeline can plug in after sessions exist.
        if self.on_significant is not None:
            self.on_significant(record)

    def _first_seq(self, session_id: str, agent_id: str) -> int:
        return self.first_seq(session_id, agent_id) if self.first_seq is not None else 0

    def _appended(self, record: Appended) -> None:
        if self.on_appended is not None:
            self.on_appended(record)

    def recent_turns(self, session_id: str, n: int, agent_id: str | None = None) -> list[dict[str, Any]]:
        """The last ``n`` messages as appended (retrieval's "recent" route)."""
        key = (session_id, agent_id or "")
        with self._lock:
            live = self._sessions.get(key)
        if live is not None:
            live.refresh()
        return live.recent_turns(n) if live else self.store.recent(key, n)

    def summaries(self, session_id: str, agent_id: str | None = None) -> list[dict[str, Any]]:
        """Every summary of the session, oldest first (retrieval's "summaries" route)."""
        return [row for row in self.store.summaries((session_id, agent_id or "")) if row["method"] != MARKER]

    def sessions(self) -> list[tuple[str, str | None]]:
        return [(s, a or None) for s, a in self.store.sessions()]

    def delete(self, session_id: str) -> int:
        """Remove the session (every agent's history, summaries, entities, settings); returns the messages
        removed. A live ``Session`` object for it is dropped: the next ``session()`` starts empty."""
        with self._lock:
            for key in [k for k in self._sessions if k[0] == session_id]:
                del self._sessions[key]
            return self.store.delete(session_id)

    def expire(self, before: float, days: float, prefix: str = "") -> int:
        """Remove from every session whose key starts with ``prefix`` its messages said before ``before``, within
        the limits of ``conversation/expiry.py`` (``days``: the time to live, named in the marker the view
        shows). A live session is read again, so its view serves what the store holds. Returns the messages
        removed."""
        removed = 0
        for row in self.store.session_rows(prefix):
            if row["messages"] and row["created_at"] < before:
                removed += self._expire((row["session_id"], row["agent_id"]), before, days)
        return removed

    def _expire(self, key: tuple[str, str], before: float, days: float) -> int:
        with self._lock:
            live = self._sessions.get(key)
        with live._lock if live is not None else nullcontext():  # no append lands while the span is chosen
            rows, summaries = self.store.load_messages(key), self.store.summaries(key)
            through = removable_through(rows, summaries, self.store.archived_through(key), before)
            if through < 0:
                return 0
            removed = [r for r in rows if r["seq"] <= through and r["message"].get("role") not in KEPT_ROLES]
            marker = removal_marker(removed, summaries, days, self.counter.count)
            count = self.store.remove_through(key, through, marker, keep_roles=KEPT_ROLES)
            if live is not None:
                live._load()
        return count

    def close(self) -> None:
        self.store.close()
