"""``Memory``'s working-memory calls: a session, its messages, its compacted view, the list of
sessions and their deletion. Its own module because sessions are a surface of their own (the
conversation buffer, ``agent_memory/conversation``) beside documents and questions; ``Memory``
inherits them, so they are ``Memory``'s methods as before.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from agent_memory.conversation import Retention, Session
from agent_memory.conversation import messages as msgs
from agent_memory.conversation.archived_turns import numbered_turns, session_key, turn_source_id
from agent_memory.conversation.message_validation import validate
from agent_memory.core.errors import NotFoundError
from agent_memory.core.names import SESSION_ID_RULE, refusal, session_id_problem
from agent_memory.ingest.ownership import SESSION_OWNER, uncatalogued_turns
from agent_memory.memory.arguments import expect_type, message_mapping

# A batch's retention: one class for every message, or a list of one per message (None: the default).
Classes = Retention | str | None | list[Retention | str | None] | tuple[Retention | str | None, ...]


class SessionMethods:
    """The session calls of ``Memory`` (its base class). They use what ``Memory`` builds and holds:
    ``working_memory``, ``ingestion``, ``services``, ``write_lock``, ``check_space`` and ``_tenant``."""

    def _session_id(self, session_id: Any, tenant: str | None) -> str:
        """``session_id`` if the HTTP API and MCP take it too (``core/names.py``: TypeError for a non-str,
        ValueError naming the problem), or a session stored under it before Python checked that rule (it
        stays viewable and deletable)."""
        expect_type(session_id, str, "session_id", "a str such as 'chat-1'")
        problem = session_id_problem(session_id)
        if problem is None or (session_id.strip() and self.working_memory.exists(self._tenant(tenant), session_id)):
            return session_id
        raise ValueError(refusal(SESSION_ID_RULE, session_id, problem))

    def session(self, session_id: str, *, agent_id: str | None = None, tenant: str | None = None) -> Session:
        """The live working-memory session (created on first use)."""
        return self.working_memory.session(self._tenant(tenant), self._session_id(session_id, tenant), agent_id)

    def session_exists(self, session_id: str, *, tenant: str | None = None) -> bool:
        return self.working_memory.exists(self._tenant(tenant), self._session_id(session_id, tenant))

    def session_configured(self, session_id: str, *, agent_id: str | None = None,
                           tenant: str | None = None) -> bool:
        """Whether the session (this agent of it) has settings of its own, stored by ``Session.configure``
        (``PUT /v1/sessions/{id}/config``), messages or not: setting the window before the first message
        is the natural order, and what was set must be readable back."""
        key = (session_key(self._tenant(tenant), self._session_id(session_id, tenant)), agent_id or "")
        return "config" in self.working_memory.sessions.store.load_state(key)

    def add_message(self, session_id: str, message: Mapping[str, Any], *,
                    retention: Retention | str | None = None, agent_id: str | None = None,
                    tenant: str | None = None) -> int:
        """Append an OpenAI/Anthropic style message with a retention class (``forgettable``, ``fuzzy``,
        ``strict``; unclassified counts as fuzzy). Returns its sequence number. ``name`` (the speaker) and
        ``timestamp`` (ISO 8601 or Unix seconds; a bad one is a ValueError) are optional. Every user and
        assistant turn and tool call (not forgettable ones) is archived to long-term memory as
        ``<session_id>/m<seq>`` on a worker thread, which the next read of the tenant's memory waits for
        (agent_memory/conversation/working_memory.py)."""
        self.check_space("a session append")
        message = message_mapping(message)
        return self.session(session_id, agent_id=agent_id, tenant=tenant).append(message, retention=retention)

    def add_messages(self, session_id: str, messages: Iterable[Mapping[str, Any]], *,
                     retention: Classes = None, agent_id: str | None = None,
                     tenant: str | None = None) -> list[int]:
        """Append several messages (one retention class for all, or a list of one per message); returns
        their sequence numbers. The
        batch is all or nothing: checked whole first (:meth:`check_messages`: a refused one stores
        nothing), then stored in one transaction under the session's lock (``Session.append_batch``), so
        a concurrent append never lands inside it and a storage failure stores none of it."""
        self.check_space("a session append")
        checked = self.check_messages(session_id, messages, retention=retention, agent_id=agent_id, tenant=tenant)
        return self.session(session_id, agent_id=agent_id, tenant=tenant).append_batch(checked, retention=retention)

    def check_messages(self, session_id: str, messages: Iterable[Mapping[str, Any]], *,
                       retention: Classes = None, agent_id: str | None = None,
                       tenant: str | None = None) -> list[dict[str, Any]]:
        """The messages as plain dicts if ``Session.append`` would take every one of them, in order, after
        what the session holds now; else the error append would raise (TypeError for a non-mapping,
        ValueError otherwise), prefixed with the refused message's index (``messages[1]: ...``). Nothing
        is stored: callers check a batch whole before appending any of it. Checked: the retention class,
        each message's shape (``message_validation.validate``), and that each tool result answers a call
        the session, or an earlier message of the batch, issued and that still awaits its result (the
        pairing ``Session.append`` checks, by ``Session.check_batch``). A concurrent append to
        the same session after this check is covered by :meth:`add_messages`, which checks again under
        the session's lock."""
        self._session_id(session_id, tenant)
        if isinstance(messages, (str, bytes, Mapping)):
            expect_type(messages, list, "messages", "a list of messages (for one message: add_message)")
        per_message = isinstance(retention, (list, tuple))
        if not per_message and retention is not None:
            Retention.parse(retention)
        batch: list[dict[str, Any]] = []
        for n, message in enumerate(messages):
            try:
                batch.append(validate(message_mapping(message)))
                if per_message and n < len(retention) and retention[n] is not None:
                    Retention.parse(retention[n])
            except (TypeError, ValueError) as exc:
                raise type(exc)(f"messages[{n}]: {exc}") from None
        if per_message and len(retention) != len(batch):
            raise ValueError(f"retention lists {len(retention)} classes for {len(batch)} messages")
        if any(msgs.result_ids(m) for m in batch):  # only then is the session worth opening
            self.session(session_id, agent_id=agent_id, tenant=tenant).check_batch(batch)
        return batch

    def view(self, session_id: str, budget: int = 4000, *, tenant: str | None = None) -> list[dict[str, Any]]:
        """The session's messages for the next model call, compacted to fit ``budget`` tokens."""
        if not self.session_exists(session_id, tenant=tenant):
            raise NotFoundError(f"no session {session_id!r} for this tenant")
        return self.session(session_id, tenant=tenant).view(budget)

    def messages(self, session_id: str, *, agent_id: str | None = None,
                 tenant: str | None = None) -> list[dict[str, Any]]:
        """The session's messages as appended, compaction notwithstanding (``view`` gives the compacted window):
        per message ``seq``, ``message`` (its role, content, name, tool calls ...), ``timestamp`` (Unix seconds:
        the one given, else when it was appended), ``retention`` (None: unclassified, the session's default
        applied) and ``status`` (``active``, or what compaction did to it in the view). NotFoundError for a
        session (of this agent) that holds no message."""
        name = self._tenant(tenant)
        if not self.working_memory.exists(name, self._session_id(session_id, tenant), agent_id):
            who = f" (agent {agent_id!r})" if agent_id else ""
            raise NotFoundError(f"no session {session_id!r}{who} for this tenant")
        rows = self.working_memory.sessions.store.load_messages((session_key(name, session_id), agent_id or ""))
        return [{"seq": row["seq"], "message": row["message"], "timestamp": row["created_at"],
                 "retention": None if row["unclassified"] else row["retention"], "status": row["status"]}
                for row in rows]

    def sessions(self, *, tenant: str | None = None) -> list[dict[str, Any]]:
        """The tenant's working-memory sessions, by ID: ``session_id``, ``agents`` (sub-agents' IDs; the
        main agent is ``None``), ``messages``, ``created_at`` / ``updated_at`` (Unix seconds; None for a
        session configured before its first message)."""
        prefix = session_key(self._tenant(tenant), "")
        out: dict[str, dict[str, Any]] = {}
        for row in self.working_memory.sessions.store.session_rows(prefix):
            sid = row["session_id"][len(prefix):]
            entry = out.setdefault(sid, {"session_id": sid, "agents": [], "messages": 0,
                                         "created_at": row["created_at"], "updated_at": row["updated_at"]})
            entry["agents"].append(row["agent_id"] or None)
            entry["messages"] += row["messages"]
            # A sub-agent with settings only has no times yet (None): the others' times stand.
            entry["created_at"] = min((t for t in (entry["created_at"], row["created_at"]) if t is not None),
                                      default=None)
            entry["updated_at"] = max((t for t in (entry["updated_at"], row["updated_at"]) if t is not None),
                                      default=None)
        return list(out.values())

    def delete_session(self, session_id: str, *, forget_archived: bool = False,
                       tenant: str | None = None) -> dict[str, Any]:
        """Remove a session (every agent's messages, summaries, entities, settings). With
        ``forget_archived`` its turns in long-term memory go too (sources ``<session_id>/m<seq>``, from
        every store): a user can remove everything they said; never a document or record that holds one of
        those IDs (ingest/ownership.py). NotFoundError when there is neither."""
        name = self._tenant(tenant)
        key = session_key(name, self._session_id(session_id, tenant))
        rows = self.working_memory.sessions.store.session_rows(key)
        last = max((r["last_seq"] for r in rows if r["session_id"] == key), default=-1)
        self.working_memory.flush()  # a queued promotion must not land after the delete
        removed: dict[str, Any] = {"session_id": session_id,
                                   "messages": self.working_memory.delete(key),
                                   "sources": 0, "items": 0, "triples": 0}
        if forget_archived:
            ids = {turn_source_id(session_id, seq) for seq in range(last + 1)}
            ids |= set(numbered_turns(self.services.catalog, name, session_id)[1])
            with self.write_lock:
                found = self.services.catalog.get_many(name, sorted(ids))
                owners = self.services.catalog.owners(name, sorted(found))
                # Only the session's own: a document or a file's record that took one of these IDs first (its
                # turn was then never archived over it: ingest/archive.py) is not the session's to forget.
                mine = [sid for sid, entry in found.items()
                        if owners.get(sid) == SESSION_OWNER + session_id
                        or (sid not in owners and entry.kind == "turn" and entry.session_id == session_id)]
                # Its turns the catalog lost (a lost or restored file) are the session's all the same.
                mine += uncatalogued_turns(self.services, name, session_id)
                removed.update(self.ingestion.forget_ids(name, sorted(mine)))
        if not any(r["session_id"] == key for r in rows) and not removed["sources"]:  # settings only count
            raise NotFoundError(f"no session {session_id!r} for this tenant")
        return removed

