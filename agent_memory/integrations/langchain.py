"""LangChain adapters over ``agent_memory.Memory``.

- ``AgentMemoryRetriever``: ranked passages as ``Document``s; ``metadata`` carries the
  ``source_id`` (cite it as ``[S:<source_id>]``), the ``score`` (a relevance in (0, 1), as MCP and
  HTTP give it), the ``kind`` and the item IDs.
- ``AgentMemoryPromptRetriever``: the budget-aware variant: one ``Document`` holding the
  assembled prompt (never more than ``budget`` tokens), its sources in ``metadata``.
- ``AgentMemoryChatHistory``: a ``BaseChatMessageHistory`` over a working-memory session:
  messages go in with a retention class, ``messages`` is the compacted view within ``budget``,
  ``clear()`` deletes the session's messages but keeps its turns archived in long-term memory unless
  constructed with ``forget_archived=True``.
"""

from __future__ import annotations

from typing import Any, Sequence

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage, convert_to_messages, convert_to_openai_messages
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, StrictInt

from agent_memory.core.errors import NotFoundError
from agent_memory.memory import Memory
from agent_memory.retrieval.types import relevance


class _MemoryRetriever(BaseRetriever):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: Memory
    session_id: str | None = None
    filters: dict[str, Any] | None = None
    tenant: str | None = None


class AgentMemoryRetriever(_MemoryRetriever):
    """The ``k`` best passages for a query (``invoke(query, k=...)`` overrides ``k`` per call)."""

    k: StrictInt = 4  # strict: True is not 1 passage, nor 2.5 two

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun,
                                k: int | None = None, **kwargs: Any) -> list[Document]:
        limit = self.k if k is None else k
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise TypeError(f"k must be an int, got {limit!r}")
        if limit < 1:  # 0 had silently meant the default
            raise ValueError(f"k must be at least 1, got {limit}")
        hits = self.memory.search(query, limit=limit, session_id=self.session_id, filters=self.filters,
                                  tenant=self.tenant)
        # The score as MCP and HTTP give it: a relevance in (0, 1), in the reranker's order.
        return [Document(page_content=p.text, id=p.item_ids[0] if p.item_ids else None,
                         metadata={"source_id": p.source_id, "score": relevance(p.score), "kind": p.kind,
                                   "item_ids": list(p.item_ids)}) for p in hits]


class AgentMemoryPromptRetriever(_MemoryRetriever):
    """One document: the bounded prompt for the query, passages tagged ``[S:<source_id>]``."""

    budget: StrictInt = 1800

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun,
                                budget: int | None = None, **kwargs: Any) -> list[Document]:
        # None is the default; 0 is refused by Memory.prompt as any budget too small (it had meant the default)
        result = self.memory.prompt(query, budget=self.budget if budget is None else budget, session_id=self.session_id,
                                    filters=self.filters, tenant=self.tenant)
        return [Document(page_content=result.prompt, metadata={
            "tokens": result.total_tokens, "budget": result.budget, "sections": dict(result.sections),
            "source_ids": list(dict.fromkeys(p.source_id for p in result.passages))})]


class AgentMemoryChatHistory(BaseChatMessageHistory):
    """A chat history backed by a working-memory session: appended messages are kept (and significant
    ones promoted to long-term memory); ``messages`` is the session's view compacted to ``budget``."""

    def __init__(self, memory: Memory, session_id: str, *, budget: int = 4000, retention: str | None = None,
                 tenant: str | None = None, forget_archived: bool = False) -> None:
        self.memory = memory
        self.forget_archived = forget_archived
        self.session_id = session_id
        self.budget = budget
        self.retention = retention
        self.tenant = tenant

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        if not self.memory.session_exists(self.session_id, tenant=self.tenant):
            return []
        return convert_to_messages(self.memory.view(self.session_id, self.budget, tenant=self.tenant))

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        dicts = convert_to_openai_messages(list(messages))
        self.memory.add_messages(self.session_id, dicts, retention=self.retention, tenant=self.tenant)

    def clear(self) -> None:
        """Remove all messages of this history (``messages`` is then empty), as LangChain's ``clear`` says;
        by default the turns already archived to long-term memory stay there, and recall can still cite
        them: construct with ``forget_archived=True`` to forget those too. Clearing an empty history is a no-op."""
        try:
            self.memory.delete_session(self.session_id, forget_archived=self.forget_archived, tenant=self.tenant)
        except NotFoundError:
            pass
