"""A data dir whose turns were stored before turns carried whom they tell of says so when opened, and `agent-memory
reindex` (or `check --repair`) reads them for it from their stored text (ingest/told_of_record.py)."""

from __future__ import annotations

import json
import logging
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")

import pytest  # noqa: E402

from agent_memory import Memory  # noqa: E402
from agent_memory.cli import main as cli_main  # noqa: E402
from agent_memory.core.records import SearchFilter  # noqa: E402
from agent_memory.index.told_of import TOLD_OF  # noqa: E402
from agent_memory.ingest import pipeline as ingest_pipeline  # noqa: E402
from agent_memory.services import read_index_format, write_index_format  # noqa: E402
from agent_memory.stores.index_format import TOLD_OF_FORMAT  # noqa: E402

MESSAGES = [{"role": "user", "content": "Helen Shank's new manager is Daniel Alessandrini."},
            {"role": "assistant", "content": "Okay, noted."},
            {"role": "user", "content": "My new manager is Fazle Newcombe."}]


def told_of(memory: Memory) -> dict[str, object]:
    turns = memory.services.vectors.scroll(SearchFilter(tenant="acme", kinds=["turn"]))
    return {turn.text: turn.metadata.get(TOLD_OF) for turn in turns}


@pytest.fixture
def older_data_dir(settings, monkeypatch):
    """Turns stored as an earlier version stored them: no record of whom they tell of, none in the marker."""
    for name in ("AGENT_MEMORY_NEO4J_URI", "AGENT_MEMORY_QDRANT_URL", "AGENT_MEMORY_POSTGRES_URL"):
        monkeypatch.delenv(name, raising=False)
    with monkeypatch.context() as patched:
        patched.setattr(ingest_pipeline, "people_told_of", lambda items, triples: {})
        with Memory(settings=settings, tenant="acme") as memory:
            memory.add_messages("week", MESSAGES)
            memory.settle()
            assert set(told_of(memory).values()) == {None}
    marker = read_index_format(settings.data_dir)
    assert marker["told_of"] == TOLD_OF_FORMAT  # a new data dir's turns carry it
    write_index_format(settings.data_dir, {k: v for k, v in marker.items() if k != "told_of"})
    return settings


def test_reindex_reads_whom_older_turns_tell_of(older_data_dir, capsys, caplog):
    settings = older_data_dir
    with caplog.at_level(logging.WARNING, logger="agent_memory.services"), Memory(settings=settings,
                                                                                  tenant="acme") as memory:
        assert set(told_of(memory).values()) == {None}  # served as it is until reindex
    assert "people they tell of" in caplog.text and "agent-memory reindex" in caplog.text

    assert cli_main(["--data-dir", str(settings.data_dir), "reindex"]) == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["items"] == 0 and report["tool_turn_facts"] is None  # nothing else was out of date
    assert report["told_of"] == {"turns": 3, "told_of": 1}
    assert read_index_format(settings.data_dir)["told_of"] == TOLD_OF_FORMAT
    with Memory(settings=settings, tenant="acme") as memory:
        assert told_of(memory) == {MESSAGES[0]["content"]: ["Helen Shank"], MESSAGES[1]["content"]: None,
                                   MESSAGES[2]["content"]: None}
    assert cli_main(["--data-dir", str(settings.data_dir), "reindex"]) == 0  # nothing left to read
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["told_of"] is None


def test_check_repair_reads_whom_older_turns_tell_of(older_data_dir, capsys):
    data_dir = ["--data-dir", str(older_data_dir.data_dir)]
    assert cli_main([*data_dir, "check"]) == 0  # a note, not a disagreement
    assert any("people they tell of" in note for note in json.loads(capsys.readouterr().out)["data_dir"]["notes"])
    assert cli_main([*data_dir, "check", "--repair"]) == 0
    assert json.loads(capsys.readouterr().out)["data_dir"] == {"notes": [], "told_of": {"turns": 3, "told_of": 1}}
    assert read_index_format(older_data_dir.data_dir)["told_of"] == TOLD_OF_FORMAT
    with Memory(settings=older_data_dir, tenant="acme") as memory:
        assert told_of(memory)[MESSAGES[0]["content"]] == ["Helen Shank"]
