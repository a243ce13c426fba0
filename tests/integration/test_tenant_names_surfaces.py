"""Tenant names follow one rule (core/names.py) wherever a caller's tenant enters the Python API: a call's
``tenant=``, the constructor's, records' own tenants and a LangGraph namespace's first label. A tenant a
data dir holds from before the rule is still read and forgotten."""

from __future__ import annotations

import pytest

from agent_memory import ConfigError, Memory
from agent_memory.core.records import Document, TurnRecord
from agent_memory.ingest.pipeline import IngestionPipeline


def test_every_entry_refuses_a_tenant_name_the_rule_refuses(tmp_path):
    with pytest.raises(ConfigError, match="tenant names are non-blank"):
        Memory(data_dir=tmp_path / "one", tenant="acme ")
    with Memory(data_dir=tmp_path / "two", tenant="acme") as memory:
        for bad in ("default\x00", "t\nx", " ", "x" * 600):
            with pytest.raises(ConfigError, match="tenant names are non-blank") as refused:
                memory.add("tenant probe text", source_id="probe/t", tenant=bad)
            assert repr(bad[:80]) in str(refused.value)
        with pytest.raises(ConfigError, match="holds a control character"):
            memory.add_documents([Document(source_id="probe/d", text="x", tenant="t\nx")])
        with pytest.raises(ConfigError, match="has whitespace around it"):
            memory.add_turns([TurnRecord(session_id="s", turn_id="1", speaker="Ana", text="x", tenant="acme ")])
        with pytest.raises(ConfigError, match="is blank"):
            memory.add_message("s1", {"role": "user", "content": "x"}, tenant=" ")
        with pytest.raises(TypeError, match="tenant must be a str"):
            memory.prompt("x", tenant=7)
        assert memory.tenants() == []


def test_a_tenant_stored_before_the_rule_stays_readable_and_forgettable(tmp_path):
    old = "legacy\ttenant"
    with Memory(data_dir=tmp_path, tenant="acme") as memory:
        # Written as a version that took any name without '/' did (below the surface's checks).
        IngestionPipeline(memory.services).ingest_documents(
            [Document(source_id="notes/gannet", text="The Gannet code is 7781.", tenant=old)])
        assert [p.source_id for p in memory.search("Gannet code", tenant=old)] == ["notes/gannet"]
        assert memory.search("Gannet code") == []  # still its own tenant
        assert memory.forget("notes/gannet", tenant=old)["sources"] == 1
        with pytest.raises(ConfigError, match="holds a control character"):  # held no more: refused again
            memory.search("Gannet code", tenant=old)


def test_a_langgraph_namespace_s_tenant_follows_the_rule(tmp_path):
    pytest.importorskip("langgraph")
    from agent_memory.integrations.langgraph import AgentMemoryStore

    with Memory(data_dir=tmp_path, tenant="acme") as memory:
        store = AgentMemoryStore(memory)
        for bad in ("t\nx", "acme ", " "):
            with pytest.raises(ValueError, match=r"invalid namespace\[0\] \(the tenant\)") as refused:
                store.put((bad, "users"), "k", {"text": "x"})
            assert "tenant names are non-blank" in str(refused.value)
        with pytest.raises(ValueError, match="invalid tenant: tenant names are non-blank"):
            AgentMemoryStore(memory, tenant="a\x00")
        store.put(("my tenant", "users"), "k", {"text": "Anna prefers window seats."})
        assert store.get(("my tenant", "users"), "k").value == {"text": "Anna prefers window seats."}
