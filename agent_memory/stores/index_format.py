"""The data dir's record of how its vectors were written (``index-format.json``): the keyword format and the
embedding models, which ``services.py`` compares with what the settings ask for before any vector is read
or written, and ``agent-memory reindex`` moves; and how its graph read archived tool turns and whether its turns carry whom they
tell of (``STORED_FACTS``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from agent_memory.core.sparse import SPARSE_FORMAT

INDEX_FORMAT_FILE = "index-format.json"
UNREADABLE = "unreadable"  # the key read_index_format gives a marker that does not read
# How the graph read archived tool turns: 1, their prose alone (index/triples/prose.py). A data dir written before
# holds the facts an earlier version read from their payloads (code, JSON keys, pieces of paths: 4,180 on the four
# agent trajectories of benchmarks/tool_turn_triples.py) until `agent-memory reindex` reads those turns again (ingest/tool_turn_facts.py). Apart from
# services.STORED_EXTRAS, whose lack costs every vector again: this one costs the tool turns' extraction alone.
TOOL_TURN_FACTS_FORMAT = 1
# Whether stored turns carry whom they tell of (index/told_of.py): 1, they do; 2, read with the facts of an adjective
# and what it is of ("Kate is busy with the party": index/triples/english.py), which told of nobody before. A data dir
# written before holds turns without it (or with the older reading), which a question in the first person then ranks
# as it did before, until `agent-memory reindex` reads them again (ingest/told_of_record.py): the extraction alone,
# no vector, no fact written.
TOLD_OF_FORMAT = 2
# index-format key -> (version, what opening a data dir written before says).
STORED_FACTS = {
    "tool_turn_facts": (TOOL_TURN_FACTS_FORMAT, "its graph may hold facts an earlier version read from tool turns' "
                        "code and payloads: run `agent-memory reindex` to read those turns again from their stored text "
                        "(no file is read, no vector computed for it)"),
    "told_of": (TOLD_OF_FORMAT, "its turns carry no record, or an older one, of the people they tell of, which a "
                "question in the first person reads to rank the user's own statements first: run `agent-memory "
                "reindex` to read them from their stored text (no file is read, no vector computed, no fact written)"),
}


def outdated_facts(found: dict) -> dict[str, str]:
    """The graph's readings a data dir's marker (``found``: ``read_index_format``) records at another version than
    this one's (``STORED_FACTS``): key -> what opening it says. Empty for a new data dir ({})."""
    return {key: said for key, (version, said) in STORED_FACTS.items() if found and found.get(key) != version}


def read_index_format(data_dir: Path) -> dict:
    """What the data dir records of how its vectors were written ({} for a new one). A marker that does not
    read (cut short by a crash before writes were atomic, emptied by hand) is ``{UNREADABLE: why}``: refused,
    naming the file and `reindex`, which writes it afresh."""
    marker = Path(data_dir) / INDEX_FORMAT_FILE
    if not marker.exists():
        return {}
    try:
        found = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return {UNREADABLE: f"{type(exc).__name__}: {exc}"}
    return found if isinstance(found, dict) else {UNREADABLE: f"a JSON {type(found).__name__}, not an object"}


def write_index_format(data_dir: Path, value: dict) -> None:
    """Written whole or not at all (a temporary file renamed over it): a crash never leaves half a marker."""
    marker = Path(data_dir) / INDEX_FORMAT_FILE
    temporary = marker.with_name(marker.name + ".tmp")
    temporary.write_text(json.dumps(value), encoding="utf-8")
    os.replace(temporary, marker)


def sparse_format_version(value: object) -> int | None:
    """The version of a keyword format this code's lineage wrote (``…/v5`` → 5); None for any other value."""
    prefix = SPARSE_FORMAT.rsplit("/v", 1)[0] + "/v"
    if isinstance(value, str) and value.startswith(prefix) and value[len(prefix):].isdigit():
        return int(value[len(prefix):])
    return None
