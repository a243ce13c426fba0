"""Records that flow through the retrieval pipeline and out of it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from agent_memory.records import MemoryItem


@dataclass
class Candidate:
    """One recalled item with what each stage thought of it."""

    item: MemoryItem
    route_scores: dict[str, float] = field(default_factory=dict)
    route_ranks: dict[str, int] = field(default_factory=dict)
    fused: float = 0.0
    rerank: float = 0.0
    final: float = 0.0
    note: str = ""
    vector: Any = field(default=None, repr=False)  # the passage embedding, once fetched
    context_vector: Any = field(default=None, repr=False)  # the turn read after the one before it
    vector_space: str = ""  # the embedding space ``vector`` lives in (agent_memory/embedding_spaces.py)
    vector_lang: str = ""  # the language of the text embedded there ("en" / "zh")
    context_vector_space: str = ""
    context_vector_lang: str = ""

    @property
    def source_id(self) -> str:
        return self.item.source_id


@dataclass
class Passage:
    """A passage placed in the prompt, tagged ``[S:<source_id>]``."""

    source_id: str
    text: str
    kind: str
    score: float
    tokens: int
    compressed: bool = False
    original_tokens: int = 0
    item_ids: list[str] = field(default_factory=list)
    section: str = "passages"


@dataclass
class Decision:
    """Why something was cut, merged or compressed (shown in the debug dump)."""

    stage: str
    target: str
    action: str
    reason: str
    tokens_before: int = 0
    tokens_after: int = 0


@dataclass
class PromptResult:
    question: str
    prompt: str
    budget: int
    total_tokens: int
    tokenizer: str
    sections: dict[str, int] = field(default_factory=dict)
    passages: list[Passage] = field(default_factory=list)
    used_source_ids: list[str] = field(default_factory=list)
    # What assembly left out for the budget or a section's share; every other cut is in decisions.
    assembly_drops: list[Decision] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    routes: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    fused: list[dict[str, Any]] = field(default_factory=list)

    def debug_dict(self) -> dict[str, Any]:
        return asdict(self)
