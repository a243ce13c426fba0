"""The importance an item starts with (stamped at ingestion, read by the reranker's importance signal) and
the raise an answer's citation gives it."""

from __future__ import annotations

from typing import Iterable

from pydantic import BaseModel, ConfigDict, Field

from agent_memory.core.records import MemoryItem


class ImportanceInputs(BaseModel):
    """The numbers an item's starting importance is made of. They are stamped into the item at ingestion
    (so they live with the index, below retrieval); the reranker weighs the stored value with
    ``importance_signal`` in the retrieval config."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    default: float = Field(0.5, description="An item whose source gives no importance: documents, transcripts, "
                                            "every benchmark item, so their ranking among themselves is flat.")
    per_reason: float = Field(0.1, description="Added for each reason a promoted turn was judged significant "
                                               "(decision, preference, fact ...).")
    retention: dict[str, float] = Field(
        default_factory=lambda: {"strict": 0.2, "fuzzy": 0.0, "forgettable": -0.3},
        description="Added for a promoted turn's retention class.")


IMPORTANCE = ImportanceInputs()


def importance_of(item: MemoryItem) -> float:
    """In [0, 1]: what the source says (metadata ``importance``), else 0.5, raised for a promoted turn
    by each reason it was judged significant (decision, preference, fact ...) and by its retention class."""
    given = item.metadata.get("importance")
    if given is not None:
        try:
            return min(1.0, max(0.0, float(given)))
        except (TypeError, ValueError):
            pass  # a bad value in a document's metadata: the default, not a failed ingestion
    value = IMPORTANCE.default
    if item.metadata.get("promoted"):
        value += IMPORTANCE.per_reason * len(item.metadata.get("reasons") or [])
        value += IMPORTANCE.retention.get(str(item.metadata.get("retention")), 0.0)
    return round(min(1.0, max(0.0, value)), 4)


def stamp_importance(items: Iterable[MemoryItem]) -> None:
    for item in items:
        item.metadata["importance"] = importance_of(item)


def raise_importance(vectors, item_ids: Iterable[str], step: float) -> dict[str, float]:
    """Each stored item's importance raised by ``step`` (capped at 1.0), written back into its metadata:
    an item an answer cited was worth recalling. Returns item ID -> new importance (items not stored
    are skipped). Read, then written: the caller serializes concurrent raises."""
    ids = list(dict.fromkeys(item_ids))
    if step <= 0 or not ids:
        return {}
    raised = {item.id: round(min(1.0, importance_of(item) + step), 4) for item in vectors.get(ids)}
    vectors.update_metadata({item_id: {"importance": value} for item_id, value in raised.items()})
    return raised
