"""What a data dir's stored items were read with, read again where an earlier version read them otherwise.

``index-format.json`` records a version per reading (stores/index_format.py ``STORED_FACTS``): how the graph read
archived tool turns (ingest/tool_turn_facts.py), whether turns carry whom they tell of (ingest/told_of_record.py).
``agent-memory reindex`` reads again the outdated ones (:func:`read_again`) and records its whole marker afterwards;
``agent-memory check --repair`` does the same and records the readings it did (:func:`mend`). One table here serves
both, so a new reading is added in one place.
"""

from __future__ import annotations

from typing import Callable, Collection

from agent_memory.ingest.told_of_record import record_told_of
from agent_memory.ingest.tool_turn_facts import reread_tool_turn_facts
from agent_memory.stores.index_format import STORED_FACTS, read_index_format, write_index_format

# index-format key -> what reads the stored items again for it (services, extractor) -> its counts.
READ_AGAIN: dict[str, Callable[..., dict[str, int]]] = {
    "tool_turn_facts": reread_tool_turn_facts,
    "told_of": record_told_of,
}


def read_again(services, extractor, outdated: Collection[str]) -> dict[str, dict[str, int]]:
    """Each outdated reading done again, in ``STORED_FACTS``' order: key -> its counts."""
    return {key: READ_AGAIN[key](services, extractor) for key in STORED_FACTS if key in outdated}


def mend(services, extractor, outdated: Collection[str]) -> dict[str, dict[str, int]]:
    """``check --repair``'s mend: :func:`read_again`, then the marker records this version's readings of those keys,
    as ``reindex`` leaves them."""
    done = read_again(services, extractor, outdated)
    found = read_index_format(services.data_dir)
    write_index_format(services.data_dir, {**found, **{key: STORED_FACTS[key][0] for key in done}})
    return done
