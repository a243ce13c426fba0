"""Time to live: one expiry pass removes an expired source from every route and store at once."""

from __future__ import annotations

import time

import pytest

from agent_memory.core.config import load_settings
from agent_memory.core.errors import ConfigError
from agent_memory.core.records import Document, MemoryItem, SearchFilter
from agent_memory.ingest.pipeline import IngestionPipeline
from agent_memory.ingest.upkeep import DAY, expire, expires_at, stats
from agent_memory.retrieval.pipeline import RetrievalPipeline

TOOL = "tools/scan-7"
NOTE = "notes/inventory"


def test_expired_source_leaves_every_route_at_once(services):
    services.settings.ttl_days = {"source:tools/": 1.0, "retention:forgettable": 1.0}
    ingest = IngestionPipeline(services, summaries=False)
    ingest.ingest_documents([
        Document(source_id=TOOL, text="Scanner Quovadis reported that Rack R-12 holds 44 Zentrix pallets."),
        Document(source_id=NOTE, text="The inventory note says Rack R-12 was repainted in Zentrix blue.")])
    [tool_item] = services.vectors.get(services.catalog.get("default", TOOL).item_ids)
    assert tool_item.metadata["expires_at"] == pytest.approx(tool_item.created_at + DAY)
    assert "expires_at" not in services.vectors.get(services.catalog.get("default", NOTE).item_ids)[0].metadata

    pipeline = RetrievalPipeline.from_services(services)
    question = "How many Zentrix pallets does Rack R-12 hold?"

    def seen() -> set[str]:
        result = pipeline.run(question, tenant="default", budget=800, debug=True)
        found = {row["source_id"] for rows in result.routes.values() for row in rows if "source_id" in row}
        return found | {p.source_id for p in result.passages}

    assert TOOL in seen() and NOTE in seen()
    assert expire(services, ingest.forget, now=time.time()) == {"sources": 0, "items": 0, "triples": 0,
                                                                 "session_messages": 0}
    removed = expire(services, ingest.forget, now=time.time() + 2 * DAY)
    assert removed["sources"] == 1 and removed["items"] == 1 and removed["triples"] >= 1
    assert TOOL not in seen() and NOTE in seen()  # dense, keyword, graph and the prompt alike
    assert services.catalog.get("default", TOOL) is None
    assert not [i for i in services.vectors.scroll(SearchFilter(tenant="default")) if i.source_id == TOOL]
    assert all(t.source_id != TOOL for t in services.graph.neighbourhood("default", ["Rack R-12", "Zentrix"], 2))
    pipeline.close()


def test_rules_pick_the_shortest_matching_ttl():
    item = MemoryItem(id="i", tenant="acme", source_id="chat/m3", kind="turn", text="x", created_at=1000.0,
                      metadata={"retention": "forgettable"})
    assert expires_at(item, {"turn": 30, "retention:forgettable": 1, "tenant:acme": 7}) == 1000.0 + DAY
    assert expires_at(item, {"kind:chunk": 1, "source:docs/": 1}) is None
    with pytest.raises(ValueError, match="colour:red"):
        expires_at(item, {"colour:red": 1})


def test_a_rule_set_after_ingestion_applies_when_gc_runs(services):
    """Items stored with no TTL rule carry no stamp; a rule set later still expires them at gc time,
    from their created time; a lengthened rule postpones a stamped item."""
    services.settings.ttl_days = {}
    ingest = IngestionPipeline(services, summaries=False)
    ingest.ingest_documents([Document(source_id=TOOL, text="Scanner Quovadis counted 44 Zentrix pallets."),
                             Document(source_id=NOTE, text="Rack R-12 was repainted in Zentrix blue.")])
    assert all("expires_at" not in i.metadata for i in services.vectors.scroll(SearchFilter(tenant="default")))
    later = time.time() + 3 * DAY
    assert expire(services, ingest.forget, now=later)["sources"] == 0  # no rule: nothing expires
    services.settings.ttl_days = {"source:tools/": 2.0}  # set afterwards, as AGENT_MEMORY_TTL_DAYS would be
    assert stats(services, "default", soon_days=5)["default"]["expiring_soon"] == 1
    assert expire(services, ingest.forget, now=time.time() + DAY)["sources"] == 0  # not yet two days old
    removed = expire(services, ingest.forget, now=later)
    assert removed["sources"] == 1 and removed["items"] == 1
    assert services.catalog.get("default", TOOL) is None and services.catalog.get("default", NOTE) is not None
    services.settings.ttl_days = {"source:tools/": 1.0}
    ingest.ingest_documents([Document(source_id=TOOL, text="Scanner Quovadis counted 45 Zentrix pallets.")])
    [stamped] = services.vectors.get(services.catalog.get("default", TOOL).item_ids)
    assert stamped.metadata["expires_at"] == pytest.approx(stamped.created_at + DAY)
    services.settings.ttl_days = {"source:tools/": 10.0}  # lengthened: the rule in force wins over the stamp
    assert expire(services, ingest.forget, now=later)["sources"] == 0


def test_unknown_ttl_selectors_are_refused_when_settings_load(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_MEMORY_TTL_DAYS", '{"turns": 3}')
    with pytest.raises(ConfigError) as caught:
        load_settings(data_dir=tmp_path)
    message = str(caught.value)
    assert "'turns'" in message and "kind:<chunk|summary|turn>" in message and "source:<ID prefix>" in message
    for bad in ({"colour:red": 1}, {"kind:turns": 1}, {"retention:sometimes": 1}, {"source:": 1}, {"turn": -1},
                {"sessions": 1}):
        with pytest.raises(ConfigError, match="ttl_days"):
            load_settings(data_dir=tmp_path, ttl_days=bad)
    monkeypatch.delenv("AGENT_MEMORY_TTL_DAYS")
    good = {"turn": 30, "kind:chunk": 365, "source:tools/": 1, "tenant:acme": 7, "retention:forgettable": 1,
            "session": 30}
    assert load_settings(data_dir=tmp_path, ttl_days=good).ttl_days == good


def test_gc_removes_a_tenants_expired_sources_in_one_removal_with_the_counts_of_one_by_one(services, tmp_path):
    """`agent-memory gc` and POST /v1/gc (no callback: one batched removal per tenant) remove what forgetting each
    expired source in turn removes, a file's records among them, and say the same totals."""
    from agent_memory.ingest import removal
    from agent_memory.ingest.file_ingestion import ingest_file

    services.settings.ttl_days = {"source:tools/": 1.0}
    ingest = IngestionPipeline(services, summaries=False)
    log = tmp_path / "log.jsonl"
    log.write_text('{"text": "Scanner Quovadis counted 44 Zentrix pallets on Rack R-12."}\n'
                   '{"text": "Scanner Quovadis counted 9 Zentrix crates on Rack R-14."}\n')
    for tenant in ("one", "batched"):
        ingest.ingest_documents([Document(source_id=TOOL, text="Scanner Quovadis reported Rack R-12 is full.",
                                          tenant=tenant),
                                 Document(source_id=NOTE, text="Rack R-12 was repainted in Zentrix blue.",
                                          tenant=tenant)])
        ingest_file(ingest, log, tenant=tenant, source_id="tools/log.jsonl")
    calls = []
    real = removal.forget_ids

    def counted(*args, **kwargs):
        calls.append(args[2])
        return real(*args, **kwargs)

    later = time.time() + 2 * DAY
    one_by_one = expire(services, ingest.forget, now=later, tenants=["one"])
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("agent_memory.ingest.upkeep.forget_ids", counted)
        batched = expire(services, now=later, tenants=["batched"])
    assert calls == [sorted([TOOL, "tools/log.jsonl#0", "tools/log.jsonl#1"])]  # one removal for the tenant
    assert batched == one_by_one and one_by_one["sources"] == 3 and one_by_one["items"] == 3
    for tenant in ("one", "batched"):
        assert services.catalog.source_ids(tenant) == [NOTE]
        assert {i.source_id for i in services.vectors.scroll(SearchFilter(tenant=tenant))} == {NOTE}
