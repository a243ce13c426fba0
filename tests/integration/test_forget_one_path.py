"""Forgetting takes one path whichever way the sources are named: `forget ID` of each and `forget --prefix` of
them all leave the same stores and say the same counts, a source the catalog lost and a session's archived
turns included; a graph that refuses the removal leaves everything in place, and forgetting again finishes."""

from __future__ import annotations

import json

import pytest

from agent_memory import Memory
from agent_memory.core.errors import StoreUnavailableError
from agent_memory.core.records import SearchFilter
from tests.helpers import embedded_cli_env, run_cli, write_files

FILES = {
    "notes/kestrel.md": "# Kestrel\n\nOrla Vance leads the Kestrel platform team in Lyon.\n",
    "notes/heron.md": "The Heron archive lives on the Tromso server. Bo Lind manages the Heron archive.\n",
    "notes/people.jsonl": '{"id": "people/ana", "text": "Ana Ruiz runs payroll at Kestrel."}\n'
                          '{"id": "people/bo", "text": "Bo Lind manages the Lyon office."}\n',
    "notes/osprey.md": "Ivo Marsh leads the Osprey team in Gdansk.\n",
    "other/pelican.md": "The Pelican release ships on Friday. Orla Vance reviews the Pelican release.\n",
}
# What `forget ID` is given, one at a time: the records file's ID takes its records (people/...).
NAMED = ["notes/kestrel.md", "notes/heron.md", "notes/osprey.md", "notes/people.jsonl", "notes-chat/m0",
         "notes-chat/m1"]
# Catalog entries a bad backup lost: heron's and a turn's items are still stored; of osprey and the record
# people/bo only facts are left (their items went too).
LOST = ["notes/heron.md", "file:notes/heron.md", "notes/osprey.md", "file:notes/osprey.md", "people/bo",
        "notes-chat/m1"]
FACTS_ONLY = ["notes/osprey.md", "people/bo"]


@pytest.fixture()
def twins(tmp_path, monkeypatch):
    """Tenants acme and globex holding the same files and session, each with the same catalog entries lost."""
    embedded_cli_env(monkeypatch, tmp_path / "data")
    write_files(tmp_path, FILES)
    monkeypatch.chdir(tmp_path)
    for tenant in ("acme", "globex"):
        with Memory(tenant=tenant) as memory:
            assert memory.add_paths(["notes", "other"], recursive=True).ok
            memory.add_messages("notes-chat", [{"role": "user", "content": "My locker code in Oslo is 7741."},
                                               {"role": "assistant", "content": "Noted, 7741."}])
    with Memory(tenant="acme") as memory:
        services = memory.services
        for tenant in ("acme", "globex"):
            assert set(FACTS_ONLY) <= set(services.graph.fact_sources(tenant)[tenant])
            assert services.catalog.delete_many(tenant, LOST) == len(LOST)
            assert services.vectors.delete_where(SearchFilter(tenant=tenant, source_ids=FACTS_ONLY)) == 2
    return tmp_path


def end_state(memory: Memory, tenant: str) -> dict:
    services = memory.services
    return {"vectors": sorted((i.source_id, i.kind, i.text) for i in services.vectors.scroll(SearchFilter(tenant=tenant))),
            "catalog": sorted(e.source_id for e in services.catalog.entries(tenant)),
            "claims": services.catalog.owners(tenant, services.catalog.source_ids(tenant)),
            "graph": services.graph.stats(tenant), "fact_sources": services.graph.fact_sources(tenant).get(tenant, {}),
            "superseded": services.graph.superseded_count(tenant),
            "entities": sorted(services.graph.entity_names(tenant))}


def test_forget_each_id_and_forget_the_prefix_leave_the_same_stores_and_say_the_same_counts(twins, capsys):
    with Memory(tenant="acme") as memory:
        assert end_state(memory, "acme") == end_state(memory, "globex")
        assert end_state(memory, "acme")["graph"]["relations"] > 0
    one_by_one = {"sources": 0, "items": 0, "triples": 0}
    for sid in NAMED:
        code, out, err = run_cli(capsys, ["forget", sid, "--tenant", "acme"])
        assert code == 0, (sid, err)
        for key in one_by_one:
            one_by_one[key] += json.loads(out)[key]
    code, out, err = run_cli(capsys, ["forget", "--prefix", "notes", "--tenant", "globex"])
    assert code == 0, err
    at_once = json.loads(out)
    # Seven sources: kestrel, heron and a turn (their entries lost), osprey and people/bo (facts alone left),
    # people/ana, the other turn.
    assert {key: at_once[key] for key in one_by_one} == one_by_one
    assert one_by_one["sources"] == 7 and one_by_one["items"] == sum(at_once["items_per_kind"].values()) >= 5
    assert at_once["items_per_kind"]["turn"] == 2 and one_by_one["triples"] > 0
    with Memory(tenant="acme") as memory:
        acme, globex = end_state(memory, "acme"), end_state(memory, "globex")
        assert acme == globex
        assert {sid for sid, _, _ in acme["vectors"]} == {"other/pelican.md"}
        assert acme["catalog"] == ["file:other/pelican.md", "other/pelican.md"]
        # The session itself is working memory's: forgetting its archived turns leaves its messages.
        assert [s["session_id"] for s in memory.sessions(tenant="acme")] == ["notes-chat"]


def test_a_graph_that_refuses_leaves_every_store_as_it_was_and_forgetting_again_finishes(twins, monkeypatch):
    with Memory(tenant="acme") as memory:
        before = end_state(memory, "acme")

        def away(tenant, source_ids):
            raise StoreUnavailableError("graph unavailable: Neo4j at bolt://graph:7687 does not answer")

        with monkeypatch.context() as mp:
            mp.setattr(memory.services.graph, "delete_by_sources", away)
            with pytest.raises(StoreUnavailableError, match="Neo4j"):
                memory.forget("notes/kestrel.md")
            with pytest.raises(StoreUnavailableError, match="Neo4j"):
                memory.forget_prefix("notes")
        assert end_state(memory, "acme") == before  # nothing searchable the catalog says is gone, nothing lost
        assert memory.forget("notes/kestrel.md") == {"sources": 1, "items": 1,
                                                     "triples": before["fact_sources"]["notes/kestrel.md"]}
        assert memory.forget_prefix("notes")["sources"] == 6


def test_forget_on_the_command_line_releases_what_a_killed_upload_claimed_as_the_api_does(twins, capsys):
    with Memory(tenant="acme") as memory:  # a file's job that died before writing its manifest, or anything else
        memory.services.catalog.claim("acme", "file:killed.jsonl", ["killed/1", "killed/2"])
    code, out, err = run_cli(capsys, ["forget", "killed.jsonl", "--tenant", "acme"])
    assert code == 0 and json.loads(out) == {"source_id": "killed.jsonl", "matched": [], "sources": 0, "items": 0,
                                             "triples": 0, "claims_released": 2}, err
    with Memory(tenant="acme") as memory:
        assert memory.services.catalog.owners("acme", ["killed/1", "killed/2"]) == {}
        memory.add("Written again under a released ID.", source_id="killed/1")
    code, _, err = run_cli(capsys, ["forget", "killed.jsonl", "--tenant", "acme"])
    assert code == 1 and "nothing stored under 'killed.jsonl'" in err
