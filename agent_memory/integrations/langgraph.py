"""LangGraph over ``agent_memory.Memory``: a long-term ``BaseStore`` and a checkpointer-free message history.

- ``AgentMemoryStore``: ``langgraph.store.base.BaseStore``. A namespace's first label is the tenant
  (or every label is metadata when the store is given a fixed ``tenant``); the other labels and
  the key make the source ID (``users/u1/prefs``), so ``put`` is ``Memory.add`` (the same key again
  replaces it), ``search`` with a query is recall (``Memory.search``, scores included), ``get`` and
  ``delete`` (``Memory.forget``) act on that source, ``list_namespaces`` lists what ``put`` wrote.
  Filters are equality on the value's top-level scalar fields. TTLs are not supported.
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

from agent_memory.core.errors import NotFoundError
from agent_memory.core.records import SearchFilter
from agent_memory.memory import Memory

_LABEL = re.compile(r"^[^/]+$")
VIEW_ID = "am-view-"  # ids of the view's messages in a graph's state: ``sync`` never appends them again


def _when(stamp: float | None) -> datetime:
    return datetime.fromtimestamp(float(stamp or 0.0), timezone.utc)


class AgentMemoryStore(BaseStore):
    """A LangGraph store whose items are this memory's sources (recall, citations, forgetting apply)."""

    def __init__(self, memory: Memory, *, tenant: str | None = None, search_limit_scan: int = 5000) -> None:
        self.memory = memory
        self.tenant = tenant
        self.search_limit_scan = search_limit_scan  # the most items a query-less search or a listing reads

    # -- mapping ---------------------------------------------------------------------------------
    def _split(self, namespace: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
        for label in namespace:
            if not isinstance(label, str) or not _LABEL.match(label):
                raise ValueError(f"namespace labels are non-empty strings without '/', got {label!r} in {namespace!r}")
        if self.tenant is not None:
            return self.tenant, tuple(namespace)
        if not namespace:
            return self.memory.tenant, ()
        return namespace[0], tuple(namespace[1:])

    def _namespace(self, tenant: str, rest: tuple[str, ...]) -> tuple[str, ...]:
        return rest if self.tenant is not None else (tenant, *rest)

    @staticmethod
    def _source_id(rest: tuple[str, ...], key: str) -> str:
        if not key or not isinstance(key, str):
            raise ValueError(f"a key must be a non-empty string, got {key!r}")
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

    def _item(self, tenant: str, source_id: str) -> Any | None:
        for item in self.memory.services.vectors.scroll(SearchFilter(tenant=tenant, source_ids=[source_id])):
            if "lg_key" in item.metadata:
                return item
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
            found = self._item(tenant, self._source_id(rest, op.key))
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
            self.memory.forget(source_id, tenant=tenant)
            return None
        if not isinstance(op.value, dict):
            raise ValueError(f"a store value is a dict, got {type(op.value).__name__}: {op.value!r}")
        before = self._item(tenant, source_id)
        now = datetime.now(timezone.utc).timestamp()
        metadata: dict[str, Any] = {
            "lg_key": op.key, "lg_depth": len(rest), "lg_value": json.dumps(op.value, ensure_ascii=False),
            "lg_created": before.metadata.get("lg_created", now) if before else now, "lg_updated": now,
            **{f"lg_ns_{i}": label for i, label in enumerate(rest)},
            **{f"lgv_{k}": v for k, v in op.value.items()
               if isinstance(k, str) and re.fullmatch(r"[A-Za-z0-9_-]+", k) and isinstance(v, (str, int, bool))},
        }
        self.memory.add(self._text(op.value, op.index), source_id=source_id, metadata=metadata, tenant=tenant)
        return None

    @staticmethod
    def _text(value: dict[str, Any], index: Any) -> str:
        """What recall reads: the indexed fields, else ``text`` / ``content``, else the whole value as JSON."""
        if isinstance(index, list) and index:
            parts = [value.get(field) for field in index]
            return "\n".join(p if isinstance(p, str) else json.dumps(p, ensure_ascii=False)
                             for p in parts if p is not None) or json.dumps(value, ensure_ascii=False)
        for field in ("text", "content"):
            if isinstance(value.get(field), str) and value[field].strip():
                return value[field]
        return json.dumps(value, ensure_ascii=False)

    def _search(self, op: SearchOp) -> list[SearchItem]:
        tenant, rest = self._split(op.namespace_prefix)
        spec = self._prefix_filter(rest, op.filter)
        out: list[SearchItem] = []
        if op.query:
            seen: set[str] = set()
            for passage in self.memory.search(op.query, limit=op.offset + op.limit,
                                              filters={"metadata": spec}, tenant=tenant):
                if passage.source_id in seen:
                    continue
                seen.add(passage.source_id)
                found = self._item(tenant, passage.source_id)
                if found is not None:
                    out.append(self._as_item(tenant, found, float(passage.score), searched=True))
            return out[op.offset:op.offset + op.limit]
        by_source = {i.source_id: i for i in self._items(tenant, spec) if "lg_key" in i.metadata}
        ranked = sorted(by_source.values(), key=lambda i: -float(i.metadata.get("lg_updated") or 0))
        return [self._as_item(tenant, i, None, searched=True) for i in ranked[op.offset:op.offset + op.limit]]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        tenants = [self.tenant] if self.tenant is not None else self.memory.services.catalog.tenants()
        found: set[tuple[str, ...]] = set()
        for tenant in tenants:
            for item in self._items(tenant, {"lg_depth": {"gte": 0}}):
                md = item.metadata
                rest = tuple(md[f"lg_ns_{i}"] for i in range(int(md["lg_depth"])))
                found.add(self._namespace(tenant, rest))
        out = []
        for namespace in sorted(found):
            if all(_matches(namespace, c.match_type, tuple(c.path)) for c in op.match_conditions or ()):
                out.append(namespace[: op.max_depth] if op.max_depth is not None else namespace)
        return list(dict.fromkeys(out))[op.offset:op.offset + op.limit]


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
        if not session_id:
            raise ValueError("SessionMessages needs config['configurable']['thread_id'] (or 'session_id'), "
                             f"got {configurable!r}")
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
