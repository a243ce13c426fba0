"""Records that flow through the retrieval pipeline and out of it."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any

from agent_memory.core.records import MemoryItem


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
    vector_space: str = ""  # the embedding space ``vector`` lives in (agent_memory/core/embedding_spaces.py)
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

    @property
    def relevance(self) -> float:
        """``score`` (the reranker's, unbounded) as a relevance in (0, 1), as the HTTP API, MCP and the
        adapters give it (``relevance``)."""
        return relevance(self.score)


def relevance(score: float) -> float:
    """A passage's score as a relevance in (0, 1), its logistic: monotone, so the order stays (the HTTP API's
    description of it: ``answer.RELEVANCE_DOC``)."""
    value = float(score)
    if not math.isfinite(value):
        return 1.0 if value > 0 else 0.0
    return round(1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, value)))), 4)


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
    # The sources of the "Known facts" lines assembly wrote (never read back from the prompt text,
    # where a question or instructions could carry a look-alike section).
    fact_source_ids: list[str] = field(default_factory=list)
    # What assembly left out for the budget or a section's share; every other cut is in decisions.
    assembly_drops: list[Decision] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    routes: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    fused: list[dict[str, Any]] = field(default_factory=list)

    def debug_dict(self) -> dict[str, Any]:
        """The result as plain JSON-ready values, field by field (``dataclasses.asdict`` deep-copies
        every value: 18 ms for a 190 kB dump of 11k mixed items). The lists are new; the routes' and
        fusion's rows are the result's own."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        for name in ("passages", "assembly_drops", "decisions"):
            out[name] = [{f.name: _copied(getattr(r, f.name)) for f in fields(r)} for r in out[name]]
        out["routes"] = {name: list(rows) for name, rows in self.routes.items()}
        out["fused"] = list(self.fused)
        return out


def _copied(value: Any) -> Any:
    return list(value) if isinstance(value, list) else value
