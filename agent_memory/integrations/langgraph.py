"""LangGraph over ``agent_memory.Memory``: a long-term ``BaseStore`` and a checkpointer-free message history.

- ``AgentMemoryStore``: ``langgraph.store.base.BaseStore``. A namespace's first label is the tenant
  (or every label is metadata when the store is given a fixed ``tenant``); the other labels and
  the key make the source ID (``users/u1/prefs``), so ``put`` is ``Memory.add`` (the same key again
  replaces it), ``search`` with a query is recall (``Memory.search``, scores included), ``get`` and
  ``delete`` (``Memory.forget``) act on that source, ``list_namespaces`` lists what ``put`` wrote.
  Filters are equality on the value's top-level scalar fields. TTLs are not supported.
  Indexing follows LangGraph's ``put(..., index=)``: ``False`` keeps the item out of the store's
  searches with a query (``get``, listing and filter-only search still find it), a list of JSON
  paths (``"title"``, ``"notes[*].text"``, ``"$"``) indexes only their text (none found: not
  indexed), ``None`` the store's ``index={"fields": [...]}`` paths, else the value's ``text`` or
  ``content``, else the whole value. The memory embeds with its own models: ``dims`` and ``embed``
  are refused. An item not indexed is still a memory source (its value as JSON): the tenant's
  ``Memory.prompt`` can cite it.
  Labels and keys are refused (ValueError) when empty, ``.``/``..`` or holding ``/`` (a key could
  otherwise name another namespace's item: ``(users,) "u1/prefs"`` is ``(users, u1) "prefs"``);
  labels also follow LangGraph's rules (no ``.``, no NUL). The store only reads, replaces or deletes
  its own items (sources whose metadata ``put`` wrote: ``lg_key``, ``lg_depth``, ``lg_value`` and
  the ``lg_ns_*`` labels, matching the namespace and key asked for): ``put`` on a source ID held by
  anything else (a document, an archived turn, a file, another namespace's item) raises
  ``ValueError``; ``delete`` of it does nothing.
- ``SessionMessages``: one graph node, ``sync``, that appends to the thread's working-memory
  session every message the graph produced since the last sync and replaces the state's messages
  with the session's compacted view; with ``sync`` before each model call the model sees working
  memory (summaries, drop markers, the pending step) without a checkpointer.
"""

from __future__ import annotations

import asyncio
import json
import re
from datetime import datetime, timezone
from typing import Any, Iterable

from langchain_core.messages import BaseMessage, RemoveMessage, convert_to_messages, convert_to_openai_messages
from langchain_core.runnables import RunnableConfig
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)
from langgraph.store.base.embed import get_text_at_path

from agent_memory.core.errors import ConfigError, NotFoundError
from agent_memory.core.limits import MAX_SEARCH_LIMIT
from agent_memory.core.records import SearchFilter
from agent_memory.ingest.ownership import FILE_KEY, writing
from agent_memory.ingest.removal import forget_sources
from agent_memory.memory import Memory
from agent_memory.retrieval.types import relevance

_MARKER = ("lg_key", "lg_depth", "lg_value")  # the metadata every item ``put`` writes carries
VIEW_ID = "am-view-"  # ids of the view's messages in a graph's state: ``sync`` never appends them again


def _when(stamp: float | None) -> datetime:
    return datetime.fromtimestamp(float(stamp or 0.0), timezone.utc)


class AgentMemoryStore(BaseStore):
    """A LangGraph store whose items are this memory's sources (recall, citations, forgetting apply)."""

    def __init__(self, memory: Memory, *, tenant: str | None = None, search_limit_scan: int = 5000,
                 index: dict[str, Any] | None = None) -> None:
        self.memory = memory
        self.tenant = None if tenant is None else self._tenant_name(tenant, "tenant")
        self.index_fields = _index_fields(index)  # the default paths ``put`` indexes (None: text/content/all)
        self.search_limit_scan = search_limit_scan  # the most items a query-less search or a listing reads

    # -- mapping ---------------------------------------------------------------------------------
    def _split(self, namespace: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
        if isinstance(namespace, str) or not isinstance(namespace, (tuple, list)):
            raise ValueError(f"a namespace is a tuple of strings, got {namespace!r}")
        namespace = tuple(namespace)
        for label in namespace:
            _check_part(label, "namespace label", f" in {namespace!r}")
            if "." in label or "\x00" in label:  # LangGraph's own rule (BaseStore's methods check it too)
                raise ValueError(f"invalid namespace label {label!r} in {namespace!r}: namespace labels cannot "
                                 f"contain periods ('.') or NUL bytes")
        if self.tenant is not None:
            return self.tenant, tuple(namespace)
        if not namespace:
            return self.memory.tenant, ()
        return self._tenant_name(namespace[0], f"namespace[0] (the tenant) of {namespace!r}"), tuple(namespace[1:])

    def _tenant_name(self, tenant: Any, what: str) -> str:
        """``tenant`` as every surface takes a tenant name (``core/names.py``; one a data dir written before
        the rule holds too), else a ValueError naming it, as for a bad label."""
        try:
            return self.memory._tenant(tenant)
        except ConfigError as exc:
            raise ValueError(f"invalid {what}: {exc}") from None

    def _namespace(self, tenant: str, rest: tuple[str, ...]) -> tuple[str, ...]:
        return rest if self.tenant is not None else (tenant, *rest)

    @staticmethod
    def _source_id(rest: tuple[str, ...], key: str) -> str:
        _check_part(key, "key", "")
        return "/".join((*rest, key))

    @staticmethod
    def _prefix_filter(rest: tuple[str, ...], value_filter: dict[str, Any] | None) -> dict[str, Any]:
        spec: dict[str, Any] = {"lg_depth": {"gte": len(rest)}}
        spec.update({f"lg_ns_{i}": label for i, label in enumerate(rest)})
        for field, wanted in (value_filter or {}).items():
            if isinstance(wanted, dict) and set(wanted) == {"$eq"}:
                wanted = wanted["$eq"]
            if not isinstance(wanted, (str, int, bool)):
                raise ValueError(f"filters match a value's top-level field by equality (a string, integer or "
                                 f"boolean), got {field!r}: {wanted!r}")
            spec[f"lgv_{field}"] = wanted
        return spec

    def _items(self, tenant: str, spec: dict[str, Any]) -> list[Any]:
        items = []
        for item in self.memory.services.vectors.scroll(SearchFilter(tenant=tenant, metadata=spec)):
            items.append(item)
            if len(items) >= self.search_limit_scan:
                break
        return items

    def _item(self, tenant: str, source_id: str, rest: tuple[str, ...] | None = None,
              key: str | None = None) -> Any | None:
        """The store's item under ``source_id`` (with ``rest``/``key``: only if it is that namespace's key)."""
        for item in self.memory.services.vectors.scroll(SearchFilter(tenant=tenant, source_ids=[source_id])):
            if _is_own(item.metadata) and (key is None or _names(item.metadata) == (rest, key)):
                return item
        return None

    def _held_by_other(self, tenant: str, source_id: str, rest: tuple[str, ...], key: str) -> str | None:
        """Why ``put`` may not write ``source_id`` for ``rest``/``key`` (None: it is that item's, or unused)."""
        other = "a source this store did not write (a document or an archived turn)"
        items = list(self.memory.services.vectors.scroll(SearchFilter(tenant=tenant, source_ids=[source_id])))
        for item in items:
            if not _is_own(item.metadata):
                return other
            if _names(item.metadata) != (rest, key):
                other_rest, other_key = _names(item.metadata)
                return f"the store's item {other_key!r} in namespace {self._namespace(tenant, other_rest)!r}"
        if items:
            return None  # the item itself: replaced in place
        catalog = self.memory.services.catalog
        if catalog.get(tenant, FILE_KEY + source_id) is not None:
            return "an ingested file (the ID names the file)"
        if catalog.get(tenant, source_id) is not None:
            return other
        return None

    def _as_item(self, tenant: str, found: Any, score: float | None = None, searched: bool = False) -> Item:
        md = found.metadata
        rest = tuple(md[f"lg_ns_{i}"] for i in range(int(md["lg_depth"])))
        fields = dict(value=json.loads(md["lg_value"]), key=md["lg_key"], namespace=self._namespace(tenant, rest),
                      created_at=_when(md.get("lg_created")), updated_at=_when(md.get("lg_updated")))
        return SearchItem(**fields, score=score) if searched else Item(**fields)

    # -- operations --------------------------------------------------------------------------------
    def batch(self, ops: Iterable[Any]) -> list[Result]:
        return [self._one(op) for op in ops]

    async def abatch(self, ops: Iterable[Any]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    def _one(self, op: Any) -> Result:
        if isinstance(op, GetOp):
            tenant, rest = self._split(op.namespace)
            found = self._item(tenant, self._source_id(rest, op.key), rest, op.key)
            return None if found is None else self._as_item(tenant, found)
        if isinstance(op, PutOp):
            return self._put(op)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise ValueError(f"unknown store operation {type(op).__name__}: {op!r}")

    def _put(self, op: PutOp) -> None:
        tenant, rest = self._split(op.namespace)
        source_id = self._source_id(rest, op.key)
        if op.value is None:
            self._delete(tenant, source_id, rest, op.key)
            return None
        if not isinstance(op.value, dict):
            raise ValueError(f"a store value is a dict, got {type(op.value).__name__}: {op.value!r}")
        held = self._held_by_other(tenant, source_id, rest, op.key)
        if held is not None:
            raise ValueError(f"cannot put {op.key!r} in namespace {tuple(op.namespace)!r}: its source ID "
                             f"{source_id!r} (tenant {tenant!r}) is held by {held}; the store never replaces "
                             f"what it did not write, choose another namespace or key")
        before = self._item(tenant, source_id, rest, op.key)
        text = self._text(op.value, op.index)
        now = datetime.now(timezone.utc).timestamp()
        metadata: dict[str, Any] = {
            "lg_key": op.key, "lg_depth": len(rest), "lg_value": json.dumps(op.value, ensure_ascii=False),
            "lg_created": before.metadata.get("lg_created", now) if before else now, "lg_updated": now,
            "lg_indexed": text is not None,
            **{f"lg_ns_{i}": label for i, label in enumerate(rest)},
            **{f"lgv_{k}": v for k, v in op.value.items()
               if isinstance(k, str) and re.fullmatch(r"[A-Za-z0-9_-]+", k) and isinstance(v, (str, int, bool))},
        }
        text = text if text is not None else json.dumps(op.value, ensure_ascii=False)  # stored, never searched here
        self.memory.add(text, source_id=source_id, metadata=metadata, tenant=tenant)
        return None

    def _delete(self, tenant: str, source_id: str, rest: tuple[str, ...], key: str) -> None:
        """Forget the store's own item and nothing else: a source ID held by anything else is left alone."""
        if self._item(tenant, source_id, rest, key) is None:
            return
        if self.memory.services.catalog.get(tenant, FILE_KEY + source_id) is None:
            self.memory.forget(source_id, tenant=tenant)  # the ID is stored as is: forget takes exactly it
            return
        # The ID also names a file: ``forget`` would take the file's sources. Under the locks a writer holds.
        with self.memory.write_lock, writing(self.memory.services, {tenant: [source_id]}):
            forget_sources(self.memory.services, tenant, [source_id], None)

    def _text(self, value: dict[str, Any], index: Any) -> str | None:
        """What search with a query reads, as LangGraph's ``index`` says (see the module's docstring);
        None: the item is not indexed."""
        if index is False:
            return None
        if index is not None and not (isinstance(index, list) and all(isinstance(p, str) for p in index)):
            raise ValueError(f"index is False, None or a list of field paths such as ['text', 'notes[*].body'], "
                             f"got {index!r}")
        paths = index if index is not None else self.index_fields
        if paths is None:
            for field in ("text", "content"):
                if isinstance(value.get(field), str) and value[field].strip():
                    return value[field]
            return json.dumps(value, ensure_ascii=False)
        texts = [t for path in paths for t in get_text_at_path(value, path) if t.strip()]
        return "\n".join(texts) or None

    def _search(self, op: SearchOp) -> list[SearchItem]:
        tenant, rest = self._split(op.namespace_prefix)
        spec = self._prefix_filter(rest, op.filter)
        if op.query and op.query.strip():  # a blank query asks for nothing in particular: the listing below
            wanted = op.offset + op.limit
            # Capped as Memory.search caps it: a page past it (offset 200) comes back empty instead of a
            # ValueError; the search budget's prompt holds fewer passages than the cap anyway. Items put with
            # index=False are passed over; when that leaves the page short, the search is asked for the cap.
            for limit in dict.fromkeys((min(wanted, MAX_SEARCH_LIMIT), MAX_SEARCH_LIMIT)):
                out, skipped = self._ranked(tenant, op.query, limit, spec)
                if len(out) >= wanted or not skipped:
                    break
            return out[op.offset:op.offset + op.limit]
        by_source = {i.source_id: i for i in self._items(tenant, spec) if _is_own(i.metadata)}
        ranked = sorted(by_source.values(), key=lambda i: -float(i.metadata.get("lg_updated") or 0))
        return [self._as_item(tenant, i, None, searched=True) for i in ranked[op.offset:op.offset + op.limit]]

    def _ranked(self, tenant: str, query: str, limit: int, spec: dict[str, Any]) -> tuple[list[SearchItem], int]:
        """The store's indexed items among ``limit`` passages for ``query``, and how many were not indexed."""
        out: list[SearchItem] = []
        seen: set[str] = set()
        skipped = 0
        for passage in self.memory.search(query, limit=limit, filters={"metadata": spec}, tenant=tenant):
            if passage.source_id in seen:
                continue
            seen.add(passage.source_id)
            found = self._item(tenant, passage.source_id)
            if found is not None and found.metadata.get("lg_indexed") is False:
                skipped += 1
            elif found is not None:
                out.append(self._as_item(tenant, found, relevance(passage.score), searched=True))  # (0, 1)
        return out, skipped

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        tenants = [self.tenant] if self.tenant is not None else self.memory.services.catalog.tenants()
        found: set[tuple[str, ...]] = set()
        for tenant in tenants:
            for item in self._items(tenant, {"lg_depth": {"gte": 0}}):
                if not _is_own(item.metadata):
                    continue
                md = item.metadata
                rest = tuple(md[f"lg_ns_{i}"] for i in range(int(md["lg_depth"])))
                found.add(self._namespace(tenant, rest))
        out = []
        for namespace in sorted(found):
            if all(_matches(namespace, c.match_type, tuple(c.path)) for c in op.match_conditions or ()):
                out.append(namespace[: op.max_depth] if op.max_depth is not None else namespace)
        return list(dict.fromkeys(out))[op.offset:op.offset + op.limit]


def _index_fields(index: dict[str, Any] | None) -> list[str] | None:
    """The store's default paths from LangGraph's ``IndexConfig`` (only ``fields``: the memory embeds)."""
    if index is None:
        return None
    if not isinstance(index, dict) or set(index) - {"fields"}:
        raise ValueError(f"index takes only {{'fields': [...]}} (the memory embeds with its own models: no 'dims' "
                         f"or 'embed'), got {index!r}")
    fields = index.get("fields")
    if fields is not None and not (isinstance(fields, list) and all(isinstance(f, str) for f in fields)):
        raise ValueError(f"index['fields'] is a list of field paths such as ['text', 'notes[*].body'], got {fields!r}")
    return fields


def _check_part(part: Any, what: str, where: str) -> None:
    """A namespace label or key becomes one '/'-separated part of a source ID: it must stay one part."""
    if not isinstance(part, str) or not part:
        raise ValueError(f"a {what} must be a non-empty string, got {part!r}{where}")
    if "/" in part or part in (".", ".."):
        raise ValueError(f"invalid {what} {part!r}{where}: a {what} cannot contain '/' or be '.' or '..' (it is "
                         f"one part of the item's source ID, and '/' would make it name another namespace's "
                         f"item)")


def _is_own(metadata: dict[str, Any]) -> bool:
    return all(field in metadata for field in _MARKER)


def _names(metadata: dict[str, Any]) -> tuple[tuple[str, ...], str]:
    """The namespace labels (after the tenant) and key an item of the store was put under."""
    rest = tuple(metadata.get(f"lg_ns_{i}") for i in range(int(metadata["lg_depth"])))
    return rest, metadata["lg_key"]


def _matches(namespace: tuple[str, ...], kind: str, path: tuple[str, ...]) -> bool:
    if len(path) > len(namespace):
        return False
    part = namespace[: len(path)] if kind == "prefix" else namespace[len(namespace) - len(path):]
    return all(p == "*" or p == n for p, n in zip(path, part))


class SessionMessages:
    """Working memory for a LangGraph graph (``MessagesState``), no checkpointer needed.

    ``sync`` is a node: it appends the state's messages that are not from a view (the new user
    message, the model's replies, tool results) to the thread's session (``config["configurable"]
    ["thread_id"]``, or ``session_id``), then replaces the state's messages with the session's view
    within ``budget`` tokens. Put it before the model node and after the last step::

        graph.add_node("memory", SessionMessages(memory).sync)
        graph.add_edge(START, "memory"); graph.add_edge("memory", "model") ...
    """

    def __init__(self, memory: Memory, *, budget: int = 4000, retention: str | None = None,
                 tenant: str | None = None) -> None:
        self.memory, self.budget, self.retention, self.tenant = memory, budget, retention, tenant

    @staticmethod
    def session_id(config: RunnableConfig | dict[str, Any] | None) -> str:
        configurable = (config or {}).get("configurable") or {}
        session_id = configurable.get("session_id") or configurable.get("thread_id")
        if not session_id:  # named, never the whole dict (LangGraph's runtime objects live in it)
            given = [k for k in ("thread_id", "session_id") if k in configurable]
            got = f"got {', '.join(f'{k}={configurable[k]!r}' for k in given)}" if given else "neither is set"
            raise ValueError("SessionMessages needs the thread's session: invoke the graph with config="
                             "{'configurable': {'thread_id': '<session id>'}} (or 'session_id'); " + got)
        return str(session_id)

    def append(self, session_id: str, messages: list[BaseMessage]) -> list[int]:
        new = [m for m in messages if not str(getattr(m, "id", "") or "").startswith(VIEW_ID)]
        if not new:
            return []
        dicts = convert_to_openai_messages(new)
        return self.memory.add_messages(session_id, dicts, retention=self.retention, tenant=self.tenant)

    def view(self, session_id: str) -> list[BaseMessage]:
        try:
            shown = self.memory.view(session_id, self.budget, tenant=self.tenant)
        except NotFoundError:
            return []
        messages = convert_to_messages(shown)
        for n, message in enumerate(messages):
            message.id = f"{VIEW_ID}{n}"
        return messages

    def sync(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        session_id = self.session_id(config)
        self.append(session_id, list(state.get("messages") or []))
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *self.view(session_id)]}
