"""A speaker the question names leaves its dense query.

"What did Caroline research?": every turn of Caroline's carries her name in its embedded text, so the
name says nothing about the topic, and the reranker's speaker signal covers it (LoCoMo 0.862 → 0.884).
Only the spaces that hold the named speakers' turns need the question without the names (an English
conversation's in a tenant that also holds Chinese documents: one model, not two); elsewhere the
names stay informative.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from agent_memory.core.records import ScoredItem
from agent_memory.index.items import embedding_text
from agent_memory.retrieval.rerank.signals import named_in, without_names
from agent_memory.retrieval.types import Decision


@dataclass(frozen=True)
class Unnamed:
    """The question without the speaker names it names, and the spaces of those speakers' turns."""

    text: str
    spaces: frozenset[str]

    def decision(self) -> Decision:
        return Decision("encode", "question", "re-embedded",
                        f"without the speaker names ({', '.join(sorted(self.spaces))}): {self.text!r}")


def unnamed(question: str, hits: Iterable[ScoredItem], embedder, occupied: Sequence[str]) -> Unnamed | None:
    """The question without the speakers it names among those of the turns in ``hits``, for the
    spaces of those turns; ``occupied`` the spaces that hold items."""
    by_space: dict[str, set[str]] = {}
    for item in (h.item for h in hits):
        speaker = item.metadata.get("speaker") if item.kind == "turn" else None
        if speaker:
            by_space.setdefault(embedder.space_for(embedding_text(item)), set()).add(str(speaker))
    return unnamed_among(question, by_space, occupied)


def named_by_space(question: str, speakers: Mapping[str, set[str]]) -> dict[str, list[str]]:
    """Space → the speakers of its turns that the question names (``speakers``: space → the
    speakers of its turns, e.g. the tenant's directory, ``SpacedVectorStore.speakers``); spaces
    where it names none are left out."""
    named = named_in(question, sorted(set().union(*speakers.values()))) if speakers else set()
    return {space: sorted(found & named) for space, found in speakers.items() if found & named}


def unnamed_among(question: str, speakers: Mapping[str, set[str]], occupied: Sequence[str]) -> Unnamed | None:
    """The question without the speakers it names, for the spaces those speakers' turns live in;
    None when it names none there."""
    return unnamed_from(question, named_by_space(question, speakers), occupied)


def unnamed_from(question: str, named: Mapping[str, Sequence[str]], occupied: Sequence[str]) -> Unnamed | None:
    """``unnamed_among`` from the speakers already found named, per space (``named_by_space``)."""
    names = sorted({name for found in named.values() for name in found})
    # Not "the text changed": without_names also tidies spaces, and a question with a double
    # space was re-embedded for nothing (4 of 100 HotpotQA questions at 11k mixed items).
    stripped = without_names(question, names)
    if not names or not stripped.strip():
        return None
    spaces = set(named) & set(occupied)
    return Unnamed(stripped, frozenset(spaces)) if spaces else None
