"""Working memory wired to the rest: promotion to long-term memory and the retrieval routes.

Sessions are keyed ``<tenant>/<session id>`` so that one tenant never reads another's
working memory. Significant turns (the session's detector decides) are promoted: handed as
``TurnRecord``s (built from the session's ``SignificantTurn``) to the ``promote`` callback, which the caller wires to the ingestion pipeline
(``agent_memory.memory.Memory`` does), so they are embedded into the vector store and their
triples merged into the graph, with ``<session id>/m<seq>`` as source ID. The callback keeps
this core module from importing ``ingest``, a layer above it. Retrieval's "recent" and "summaries"
routes read the live session from here, so one budget covers both working memory and
recalled memory.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from typing import Any, Callable, Sequence

from .conversation import SessionManager
from .conversation.messages import text_of
from .errors import contained
from .records import MemoryItem, TurnRecord

# Stores promoted turns in long-term memory, e.g. IngestionPipeline(services, summaries=False).ingest_turns.
Promote = Callable[[Sequence[TurnRecord]], Any]

log = logging.getLogger(__name__)


def catalog_recent_turns(services, tenant: str, session_id: str, n: int) -> list[MemoryItem]:
    """The last ``n`` ingested turns of a transcript session, oldest first."""
    ids = [i for e in services.catalog.recent_turns(tenant, session_id, n) for i in e.item_ids]
    found = {i.id: i for i in services.vectors.get(ids)} if ids else {}
    return [found[i] for i in ids if i in found]


def iso_time(stamp: float) -> str:
    return datetime.fromtimestamp(stamp, timezone.utc).isoformat(timespec="seconds")


def session_key(tenant: str, session_id: str) -> str:
    return f"{tenant}/{session_id}"


def split_key(key: str, default_tenant: str) -> tuple[str, str]:
    tenant, sep, session_id = key.partition("/")
    return (tenant, session_id) if sep else (default_tenant, key)


class WorkingMemory:
    def __init__(self, services, promote: Promote | None = None) -> None:
        """``promote`` receives each significant turn; without it nothing is promoted."""
        self.services = services
        self.sessions = SessionManager.from_settings(services.settings, store=services.session_store)
        self._store_turns = promote
        self.promoted = 0
        # The HTTP API sets this: a large significant message must not hold its request while it
        # is embedded and its triples extracted (the Python API stays synchronous: read-your-writes).
        self.background = False
        self._queue: ThreadPoolExecutor | None = None
        self._queue_lock = threading.Lock()
        if promote is not None:
            self.sessions.on_significant = self.promote

    def session(self, tenant: str, session_id: str, agent_id: str | None = None):
        return self.sessions.session(session_key(tenant, session_id), agent_id)

    def exists(self, tenant: str, session_id: str, agent_id: str | None = None) -> bool:
        return bool(self.sessions.store.recent((session_key(tenant, session_id), agent_id or ""), 1))

    def promote(self, turn) -> None:
        """A significant turn becomes long-term memory; a failure is logged, never raised into append()."""
        if self._store_turns is None:
            return
        tenant, session_id = split_key(turn.session_id, self.services.settings.tenant)
        metadata = {"promoted": True, "reasons": list(turn.reasons), "retention": turn.retention}
        if turn.agent_id:
            metadata["agent_id"] = turn.agent_id
        if turn.previous:  # its context, as for an ingested transcript's turn (ingest/context.py)
            metadata["previous_turn"] = {"speaker": turn.previous["role"], "text": turn.previous["text"][-1500:],
                                         "seq": turn.previous["seq"]}
        # The session position (seq) and the time it was said travel with the turn: turn context,
        # neighbours and time windows treat it as an ingested transcript's turn.
        record = TurnRecord(session_id=session_id, turn_id=f"m{turn.seq}", speaker=turn.role, text=turn.text,
                            tenant=tenant, seq=turn.seq, timestamp=iso_time(turn.created_at), metadata=metadata)
        if self.background:
            # Off the request path: append() returns at once; one worker thread promotes in order.
            with self._queue_lock:
                if self._queue is None:
                    self._queue = ThreadPoolExecutor(max_workers=1, thread_name_prefix="promote")
                self._queue.submit(self._store, record)
        else:
            self._store(record)

    def _store(self, record: TurnRecord) -> None:
        try:
            contained(self._store_turns, [record])  # the callback serializes its writes (Memory: its write lock)
            self.promoted += 1
        except Exception as exc:  # noqa: BLE001 - promotion is best effort; history is already safe
            log.warning("promoting %s/%s to long-term memory failed: %s", record.session_id, record.turn_id, exc)

    def flush(self) -> None:
        """Wait until every queued promotion is stored (background mode)."""
        with self._queue_lock:
            queue = self._queue
        if queue is not None:
            queue.submit(lambda: None).result()

    def recent_turns(self, tenant: str, session_id: str, n: int) -> list[MemoryItem]:
        """The live session's last user/assistant messages; else ingested transcript turns of that session."""
        if self.exists(tenant, session_id):
            messages = self.session(tenant, session_id).messages()
            first = max(0, len(messages) - n)
            items = []
            for seq, message in enumerate(messages[first:], start=first):
                text = text_of(message)
                if message.get("role") in ("user", "assistant") and text.strip():
                    items.append(MemoryItem(
                        id=f"wm:{tenant}/{session_id}/{seq}", tenant=tenant, source_id=f"{session_id}/m{seq}",
                        kind="turn", text=text, metadata={"session_id": session_id, "speaker": message["role"],
                                                          "seq": seq}))
            return items
        return catalog_recent_turns(self.services, tenant, session_id, n)

    def summaries(self, tenant: str, session_id: str) -> list[MemoryItem]:
        """The session's compaction summaries, newest first, as summary items of the session."""
        if not self.exists(tenant, session_id):
            return []
        rows = self.session(tenant, session_id).summaries()
        return [MemoryItem(id=f"wms:{tenant}/{session_id}/{i}", tenant=tenant, source_id=f"{session_id}#compacted",
                           kind="summary", text=str(row.get("text", "")),
                           metadata={"session_id": session_id, "scope": "working-memory"})
                for i, row in reversed(list(enumerate(rows))) if row.get("text")]

    def close(self) -> None:
        with self._queue_lock:
            queue, self._queue = self._queue, None
        if queue is not None:
            queue.shutdown(wait=True)  # queued promotions are stored before the stores close
        self.sessions.close()
