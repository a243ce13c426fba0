"""A data dir whose graph holds the facts an earlier version read from a tool turn's code (written before the graph
read a tool turn's prose alone) says so when opened, and `agent-memory reindex` reads those turns again from their
stored text: their facts become this version's reading, every other fact stays (ingest/tool_turn_facts.py)."""

from __future__ import annotations

import json
import logging
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")

from agent_memory import Memory  # noqa: E402
from agent_memory.cli import main as cli_main  # noqa: E402
from agent_memory.core.records import SearchFilter, Triple  # noqa: E402
from agent_memory.index.items import is_tool_turn  # noqa: E402
from agent_memory.services import read_index_format, write_index_format  # noqa: E402

LOOP = [
    {"role": "user", "content": "Find where the retry loop lives."},
    {"role": "assistant", "content": "Maria Lopez leads the billing team at Stripe. I will grep for the retry loop.",
     "tool_calls": [{"id": "c1", "type": "function",
                     "function": {"name": "grep", "arguments": json.dumps({"pattern": "retry_loop"})}}]},
    {"role": "tool", "tool_call_id": "c1",
     "content": "0.1: def handler_9(req): return process(req, limit=923)\n"
                "match: the retry loop is implemented in src/net/backoff_loop_48.py at line 237."},
]
# What the version before read of such a turn: code and pieces of paths (benchmarks/tool_turn_triples.py).
OLD_READING = [("return process(req", "is_a", "limit=923"), ("src", "related_to", "py"), ("handler_9", "is_a", "0.1")]


def facts(memory: Memory) -> dict[str, set[tuple[str, str, str]]]:
    graph = memory.services.graph
    out: dict[str, set] = {}
    for row in graph.subject_facts("acme", graph.entity_names("acme")):
        out.setdefault(row["source_id"], set()).add((row["subject"], row["relation"], row["object"]))
    return out


def test_reindex_reads_an_older_graphs_tool_turns_again(settings, capsys, caplog, monkeypatch):
    # The CLI reads its settings from the environment, where the test command names a Neo4j server: this data dir's
    # graph is the embedded one the fixture's settings chose.
    for name in ("AGENT_MEMORY_NEO4J_URI", "AGENT_MEMORY_QDRANT_URL", "AGENT_MEMORY_POSTGRES_URL"):
        monkeypatch.delenv(name, raising=False)
    with Memory(settings=settings, tenant="acme") as memory:
        memory.add_messages("loop", LOOP)
        memory.settle()
        turns = list(memory.services.vectors.scroll(SearchFilter(tenant="acme", kinds=["turn"])))
        [tool_turn] = {t.source_id for t in turns if is_tool_turn(t)}
        [plain] = {t.source_id for t in turns if not is_tool_turn(t)}
        read_now = facts(memory)
        assert read_now[tool_turn] and not {f for f in read_now[tool_turn] if "(" in f[0] or "=" in f[2]}
        # The older graph: the tool turn's code read as facts, beside a plain turn's fact no one reads again.
        memory.services.graph.merge_triples(
            [Triple(subject=s, relation=r, object=o, tenant="acme", source_id=sid, item_id="old")
             for s, r, o in OLD_READING for sid in (tool_turn, plain)])
        older = facts(memory)
    marker = read_index_format(settings.data_dir)
    assert marker["tool_turn_facts"] == 1  # a new data dir's graph is read as this version reads
    write_index_format(settings.data_dir, {k: v for k, v in marker.items() if k != "tool_turn_facts"})

    with caplog.at_level(logging.WARNING, logger="agent_memory.services"), Memory(settings=settings,
                                                                                  tenant="acme") as memory:
        assert memory.services.vectors.count() and facts(memory) == older  # served as it is until reindex
    assert "tool turns' code" in caplog.text and "agent-memory reindex" in caplog.text

    assert cli_main(["--data-dir", str(settings.data_dir), "reindex"]) == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["items"] == 0  # the vectors were current: none embedded again
    assert report["tool_turn_facts"] == {"sources": 1, "triples_before": len(older[tool_turn]),
                                         "triples_after": len(read_now[tool_turn])}
    assert read_index_format(settings.data_dir)["tool_turn_facts"] == 1
    with Memory(settings=settings, tenant="acme") as memory:
        after = facts(memory)
        entry = memory.services.catalog.get_many("acme", [tool_turn])[tool_turn]
    assert after[tool_turn] == read_now[tool_turn]  # the new reading's facts, the code gone
    assert after[plain] == older[plain]  # not a tool turn: left as written
    assert entry.n_triples == len(read_now[tool_turn])
    assert cli_main(["--data-dir", str(settings.data_dir), "reindex"]) == 0  # nothing left to read again
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["tool_turn_facts"] is None


def test_check_names_an_older_graphs_tool_turns_and_check_repair_reads_them_again(settings, capsys, monkeypatch):
    for name in ("AGENT_MEMORY_NEO4J_URI", "AGENT_MEMORY_QDRANT_URL", "AGENT_MEMORY_POSTGRES_URL"):
        monkeypatch.delenv(name, raising=False)
    with Memory(settings=settings, tenant="acme") as memory:
        memory.add_messages("loop", LOOP)
        memory.settle()
        [tool_turn] = {t.source_id for t in memory.services.vectors.scroll(SearchFilter(tenant="acme", kinds=["turn"]))
                       if is_tool_turn(t)}
        read_now = facts(memory)[tool_turn]
        memory.services.graph.merge_triples([Triple(subject=s, relation=r, object=o, tenant="acme", source_id=tool_turn,
                                                    item_id="old") for s, r, o in OLD_READING])
    marker = read_index_format(settings.data_dir)
    write_index_format(settings.data_dir, {k: v for k, v in marker.items() if k != "tool_turn_facts"})
    data_dir = ["--data-dir", str(settings.data_dir)]

    assert cli_main([*data_dir, "check"]) == 0  # the stores agree: a note, not a failure
    captured = capsys.readouterr()
    assert json.loads(captured.out)["data_dir"]["notes"] and "agent-memory reindex" in captured.err
    assert cli_main([*data_dir, "check", "--tenant", "acme", "--repair"]) == 0  # one tenant's repair: named, not run
    assert json.loads(capsys.readouterr().out)["data_dir"]["notes"]

    assert cli_main([*data_dir, "check", "--repair"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["data_dir"] == {"notes": [], "tool_turn_facts": {
        "sources": 1, "triples_before": len(read_now) + len(OLD_READING), "triples_after": len(read_now)}}
    assert read_index_format(settings.data_dir)["tool_turn_facts"] == 1
    with Memory(settings=settings, tenant="acme") as memory:
        assert facts(memory)[tool_turn] == read_now
    assert cli_main([*data_dir, "check"]) == 0
    assert json.loads(capsys.readouterr().out)["data_dir"] == {"notes": []}
