"""A speaker the question names leaves its dense query.

"What did Caroline research?": every turn of Caroline's carries her name in its embedded text, so the
name says nothing about the topic, and the reranker's speaker signal covers it (LoCoMo 0.862 → 0.884).
Only the spaces that hold the named speakers' turns need the question without the names (an English
conversation's in a tenant that also holds Chinese documents: one model, not two); elsewhere the
names stay informative.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from agent_memory.records import ScoredItem
from ingest.items import embedding_text

from .rerank.signals import named_in, without_names
from .types import Decision


@dataclass(frozen=True)
class Unnamed:
    """The question without the speaker names it names, and the spaces of those speakers' turns."""

    text: str
    spaces: frozenset[str]

    def decision(self) -> Decision:
        return Decision("encode", "question", "re-embedded",
                        f"without the speaker names ({', '.join(sorted(self.spaces))}): {self.text!r}")


def unnamed(question: str, hits: Iterable[ScoredItem], embedder, occupied: Sequence[str]) -> Unnamed | None:
    """The question without the speakers it names, for the spaces of those speakers' turns; the
    speakers are those of the turns among ``hits``, ``occupied`` the spaces that hold items."""
    turns = [h.item for h in hits if h.item.kind == "turn"]
    speakers = {t.metadata.get("speaker") for t in turns} - {None, ""}
    # Not "the text changed": without_names also tidies spaces, and a question with a double
    # space was re-embedded for nothing (4 of 100 HotpotQA questions at 11k mixed items).
    named = named_in(question, sorted(speakers))
    stripped = without_names(question, sorted(named))
    if not named or not stripped.strip():
        return None
    spaces = {embedder.space_for(embedding_text(t)) for t in turns if t.metadata.get("speaker") in named}
    spaces &= set(occupied)
    return Unnamed(stripped, frozenset(spaces)) if spaces else None
