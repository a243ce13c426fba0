"""A source's count of facts in the catalog is what the graph holds of it (``check`` compares the two): a bullet
list's "•" or a curly apostrophe read as a relation made a fact the graph stores skip while the count kept it
(seen ingesting LongMemEval's sessions)."""

from __future__ import annotations

import logging
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")

from agent_memory import Memory  # noqa: E402

TEXTS = {
    "slides/vr": "virtual reality and 3D interaction\npositioning in 3D space\n• cockpit and virtual controls\n"
                 "– steering wheels, knobs and dials … just like real!\n• the 3D mouse\n– six-degrees of movement:",
    "news/fan": "He’s a big fan of Delta Air Lines (DAL), and Bitcoin BTCUSD +0.08% remains among his top personal "
                "holdings.",
}


def test_each_sources_count_of_facts_is_what_the_graph_holds(settings, caplog):
    with caplog.at_level(logging.WARNING, logger="agent_memory.stores.cypher"), Memory(settings=settings,
                                                                                       tenant="acme") as memory:
        for source_id, text in TEXTS.items():
            memory.add(text, source_id=source_id)
        counted = {sid: e.n_triples for sid, e in memory.services.catalog.get_many("acme", list(TEXTS)).items()}
        held = memory.services.graph.fact_sources("acme").get("acme", {})
    assert all(counted.values()) and counted == {sid: held.get(sid, 0) for sid in TEXTS}
    assert "empty part" not in caplog.text
