"""Forgetting many sources at once: every source under a prefix (files with all they held), or everything a
tenant holds (its sessions too), from every store, in batches; never another tenant's; a whole tenant only when
it is named and the removal confirmed."""

from __future__ import annotations

import json

import pytest

from agent_memory import Memory
from agent_memory.core.records import SearchFilter
from tests.helpers import embedded_cli_env, run_cli, write_files

FILES = {
    "notes/kestrel.md": "# Kestrel\n\nOrla Vance leads the Kestrel platform team in Lyon.\n",
    "notes/heron.md": "The Heron archive lives on the Tromso server.\n",
    "notes/people.jsonl": '{"id": "people/ana", "text": "Ana Ruiz runs payroll at Kestrel."}\n'
                          '{"id": "people/bo", "text": "Bo Lind manages the Lyon office."}\n',
    "other/pelican.md": "The Pelican release ships on Friday.\n",
}


@pytest.fixture()
def data(tmp_path, monkeypatch):
    embedded_cli_env(monkeypatch, tmp_path / "data")
    write_files(tmp_path, FILES)
    monkeypatch.chdir(tmp_path)
    with Memory(tenant="acme") as memory:
        assert memory.add_paths(["notes", "other"], recursive=True).ok
        assert memory.add_paths(["notes"], recursive=True, tenant="globex").ok
        memory.add_messages("chat-1", [{"role": "user", "content": "My locker code in Oslo is 7741."},
                                       {"role": "assistant", "content": "Noted, 7741."}])
    return tmp_path


def stored(memory: Memory, tenant: str = "acme") -> list[str]:
    return sorted({i.source_id for i in memory.services.vectors.scroll(SearchFilter(tenant=tenant))})


def test_a_prefix_forgets_its_sources_and_files_in_every_store_and_nothing_else(data):
    with Memory(tenant="acme") as memory:
        triples = memory.services.graph.stats("acme")["relations"]
        removed = memory.forget_prefix("notes/")
        # The records file's ID starts with the prefix: its records (people/...) go with it, as `forget` of it does.
        assert removed == {"prefix": "notes/", "sources": 4, "items": 4, "triples": removed["triples"],
                           "items_per_kind": {"chunk": 4, "summary": 0, "turn": 0}, "files": 3}
        assert 0 < removed["triples"] <= triples
        assert stored(memory) == ["chat-1/m0", "chat-1/m1", "other/pelican.md"]
        assert memory.matching_sources("people/ana") == [] and memory.matching_sources("notes/kestrel.md") == []
        assert len(stored(memory, "globex")) == 4  # the other tenant's copy of the folder stays whole
        nothing = memory.forget_prefix("notes/")
        assert nothing["sources"] == nothing["items"] == nothing["files"] == 0
        with pytest.raises(ValueError, match="prefix must not be empty"):
            memory.forget_prefix("")
        # The files' records are gone too: the next job reads the folder again instead of calling it unchanged.
        report = memory.add_paths(["notes"], recursive=True)
        assert report.ok and report.files_unchanged == 0 and len(stored(memory)) == 3 + 4


def test_a_source_whose_catalog_entry_was_lost_is_found_in_the_vectors(data):
    with Memory(tenant="acme") as memory:
        memory.services.catalog.delete_many("acme", ["chat-1/m0", "chat-1/m1"])  # a lost catalog (a bad backup)
        removed = memory.forget_prefix("chat-1/")
        assert removed["sources"] == 2 and removed["items_per_kind"]["turn"] == 2
        assert "7741" not in " ".join(p.text for p in memory.prompt("What is my locker code?", budget=400).passages
                                      if p.section != "recent")


def test_a_whole_tenant_goes_with_its_sessions_and_only_it(data):
    with Memory(tenant="acme") as memory:
        removed = memory.forget_tenant("acme")
        assert removed["tenant"] == "acme" and removed["sessions"] == 1 and removed["messages"] == 2
        assert removed["sources"] == 7 and removed["items_per_kind"] == {"chunk": 5, "summary": 0, "turn": 2}
        assert removed["files"] == 4 and removed["triples"] > 0
        assert stored(memory) == [] and memory.sessions() == [] and memory.tenants() == ["globex"]
        assert memory.services.graph.stats("acme") == {"entities": 0, "relations": 0}
        assert memory.services.catalog.source_ids("acme") == []
        assert len(stored(memory, "globex")) == 4 and memory.services.graph.stats("globex")["relations"] > 0
        with pytest.raises(TypeError, match="tenant"):
            memory.forget_tenant(None)


def test_forget_prefix_and_all_on_the_command_line(data, capsys):
    code, out, err = run_cli(capsys, ["forget", "--prefix", "notes/", "--tenant", "acme"])
    assert code == 0 and json.loads(out)["sources"] == 4 and json.loads(out)["files"] == 3, err
    code, out, err = run_cli(capsys, ["forget", "--prefix", "notes/", "--tenant", "acme"])
    assert code == 1 and "nothing stored under the prefix 'notes/' for tenant 'acme'" in err
    code, _, err = run_cli(capsys, ["forget", "notes/heron.md", "--prefix", "notes/"])
    assert code == 2 and "got a source ID and --prefix" in err
    code, _, err = run_cli(capsys, ["forget"])
    assert code == 2 and "got none" in err
    # A whole tenant: only named, and only confirmed (no terminal here: --yes).
    code, _, err = run_cli(capsys, ["forget", "--all"])
    assert code == 2 and "name it with --tenant" in err
    code, _, err = run_cli(capsys, ["forget", "--all", "--tenant", "acme"])
    assert code == 2 and "add --yes to confirm" in err
    code, out, _ = run_cli(capsys, ["list", "--tenant", "acme"])
    assert json.loads(out)["total"] == 3  # nothing was removed by the refusals
    code, out, _ = run_cli(capsys, ["forget", "--all", "--tenant", "acme", "--yes"])
    assert code == 0 and json.loads(out)["sessions"] == 1 and json.loads(out)["sources"] == 3
    code, out, _ = run_cli(capsys, ["list", "--tenant", "globex"])
    assert json.loads(out)["total"] == 4
