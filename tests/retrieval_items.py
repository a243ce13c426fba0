"""Memory items and ranked candidates for the tests of retrieval's pure stages.

Fusion, de-duplication, reranking and assembly are tested in separate files, and all of them build the
same small items (an ID, a source, a span) and the same best-first candidates from them: one definition here.
"""

from __future__ import annotations

from agent_memory.core.records import MemoryItem
from agent_memory.retrieval.types import Candidate


def item(item_id: str, source_id: str | None = None, *, kind: str = "chunk", text: str = "", start: int = 0,
         end: int = 0, content_hash: str = "") -> MemoryItem:
    return MemoryItem(id=item_id, tenant="default", source_id=source_id or item_id, kind=kind,
                      text=text or f"text of {item_id}", start=start, end=end, content_hash=content_hash)


def candidates(*items: MemoryItem) -> list[Candidate]:
    return [Candidate(item=i, final=1.0 / (n + 1)) for n, i in enumerate(items)]
