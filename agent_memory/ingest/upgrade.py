"""Opening a data dir: one written by an earlier version in another keyword format is brought up to date first.

A new version may tokenize keywords differently (``core/sparse.py`` ``SPARSE_FORMAT``: time words, weekdays
...). Vectors of two formats must never mix, so such a data dir was refused until someone ran
``agent-memory reindex`` — and a ``serve`` restarted after an upgrade answered every question with that
refusal while ``reindex`` itself was refused because the server owned the dir. Nothing in that step is the
user's to decide: the models are the same, no file is read again and the dense vectors come from the
embedding cache. So whoever owns the data dir and opens its stores (``Memory``, ``serve``, the evaluation)
re-indexes it in place first, saying so, under the owner lock it already holds.

Not done on its own:
- when the settings ask for other embedding models than the data dir holds: that costs every embedding
  again and is often a mistaken setting; ``reindex`` stays the user's call, and the refusal names it;
- with a Qdrant server (``qdrant_url``): other processes (replicas, workers) share its collections while
  each keeps its own data dir marker; one replica re-indexing under the others would race them. The
  operator runs ``reindex`` once, between versions.
"""

from __future__ import annotations

import logging

from agent_memory.core.config import Settings
from agent_memory.core.sparse import SPARSE_FORMAT
from agent_memory.ingest.lock import ingest_lock
from agent_memory.ingest.reindex import ReindexReport, reindex
from agent_memory.services import (
    UNREADABLE,
    Services,
    build_services,
    read_index_format,
    recorded_layout,
    space_layout,
    sparse_format_version,
    with_recorded_routing,
)

log = logging.getLogger(__name__)


def needs_keyword_upgrade(settings: Settings, found: dict) -> bool:
    """Whether the data dir whose index format is ``found`` holds vectors of an older keyword format and nothing
    else stands in the way of re-indexing it here: the same embedding models, embedded vector store."""
    if not found or found.get("sparse") in (None, SPARSE_FORMAT) or settings.qdrant_url or UNREADABLE in found:
        return False
    older, current = sparse_format_version(found.get("sparse")), sparse_format_version(SPARSE_FORMAT)
    if older is None or current is None or older >= current:
        return False  # a newer version's format, or one this code never wrote: refused, not "upgraded" down
    # The first markers recorded the keyword format only: their models were the settings' (none other existed).
    return recorded_layout(found.get("embedding")) in (None, space_layout(settings).as_dict())


def upgrade_in_place(settings: Settings) -> ReindexReport | None:
    """Re-index the data dir of ``settings`` when ``needs_keyword_upgrade``; the caller owns the data dir."""
    found = read_index_format(settings.data_dir)
    if not needs_keyword_upgrade(settings, found):
        return None
    log.warning("upgrading data dir %s: keyword format %s -> %s, re-indexing the stored text (no file is "
                "read again; this happens once)", settings.data_dir, found["sparse"], SPARSE_FORMAT)
    with ingest_lock(settings.data_dir):
        report = reindex(settings)
    log.warning("data dir %s upgraded: %d items re-indexed, %d embeddings computed", settings.data_dir,
                report.items, report.embeddings_computed)
    return report


def open_services(settings: Settings) -> Services:
    """The services of a data dir this process owns, as every owner opens them (``Memory``, ``serve``,
    ``worker``, the evaluation): upgraded in place first where ``upgrade_in_place`` applies."""
    settings = with_recorded_routing(settings)
    upgrade_in_place(settings)
    return build_services(settings)
