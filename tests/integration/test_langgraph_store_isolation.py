"""AgentMemoryStore keeps to its own items: a key or label cannot name another namespace's item
(no '/'), and put/delete never replace or forget a source the store did not write (a document,
an archived turn, an ingested file, an item from before keys were checked)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("langgraph")

from langgraph.store.base import GetOp, PutOp, SearchOp  # noqa: E402

from agent_memory.core.records import SearchFilter, TurnRecord  # noqa: E402
from agent_memory.integrations.langgraph import AgentMemoryStore  # noqa: E402


@pytest.fixture()
def memory(settings):
    from agent_memory import Memory

    with Memory(settings=settings) as mem:
        yield mem


def _sources(memory, tenant: str) -> set[str]:
    return {i.source_id for i in memory.services.vectors.scroll(SearchFilter(tenant=tenant))}


def test_a_key_with_a_slash_is_refused_and_cannot_overwrite_another_namespace(memory):
    store = AgentMemoryStore(memory)
    store.put(("acme", "users", "u1"), "prefs", {"text": "Anna prefers window seats."})
    with pytest.raises(ValueError, match=r"key 'u1/prefs'.*'/'"):
        store.put(("acme", "users"), "u1/prefs", {"text": "An overwrite through the key."})
    item = store.get(("acme", "users", "u1"), "prefs")
    assert item.namespace == ("acme", "users", "u1") and item.key == "prefs"
    assert item.value == {"text": "Anna prefers window seats."}
    with pytest.raises(ValueError, match=r"key 'u1/prefs'"):
        store.get(("acme", "users"), "u1/prefs")
    with pytest.raises(ValueError, match=r"key 'u1/prefs'"):
        store.delete(("acme", "users"), "u1/prefs")
    assert store.get(("acme", "users", "u1"), "prefs") is not None


@pytest.mark.parametrize("namespace", [("acme", "us/ers"), ("acme", ""), ("acme", "a.b"), ("acme", ".."),
                                       ("acme", "x\x00y"), ("acme", 7)])
def test_bad_namespace_labels_are_refused_by_name(memory, namespace):
    store = AgentMemoryStore(memory)
    label = repr(namespace[1])
    # Through batch (no BaseStore check before it) and through the methods.
    for op in (PutOp(namespace, "k", {"text": "x"}), GetOp(namespace, "k"), SearchOp(namespace)):
        with pytest.raises(ValueError) as raised:
            store.batch([op])
        assert label in str(raised.value)
    with pytest.raises(ValueError):
        store.put(namespace, "k", {"text": "x"})
    assert _sources(memory, "acme") == set()


@pytest.mark.parametrize("key", ["", ".", "..", "a/b", "/a", "a/"])
def test_bad_keys_are_refused_by_name(memory, key):
    store = AgentMemoryStore(memory)
    with pytest.raises(ValueError) as raised:
        store.batch([PutOp(("acme", "notes"), key, {"text": "x"})])
    assert repr(key) in str(raised.value)
    assert _sources(memory, "acme") == set()


def test_keys_with_periods_and_spaces_still_work(memory):
    store = AgentMemoryStore(memory)
    store.put(("acme", "notes"), "v1.2 release", {"text": "Release 1.2 ships on Friday."})
    assert store.get(("acme", "notes"), "v1.2 release").value["text"] == "Release 1.2 ships on Friday."


def test_put_and_delete_never_touch_a_plain_document(memory):
    memory.add("The bakery opens at seven.", source_id="notes/bakery", tenant="acme")
    store = AgentMemoryStore(memory)
    assert store.get(("acme", "notes"), "bakery") is None
    with pytest.raises(ValueError, match=r"'notes/bakery'.*did not write"):
        store.put(("acme", "notes"), "bakery", {"text": "The store's own bakery note."})
    store.delete(("acme", "notes"), "bakery")  # not the store's: nothing happens
    store.batch([PutOp(("acme", "notes"), "bakery", None)])
    assert "notes/bakery" in _sources(memory, "acme")
    hit = memory.search("When does the bakery open?", tenant="acme")[0]
    assert hit.source_id == "notes/bakery" and "seven" in hit.text
    assert store.search(("acme",)) == [] and store.list_namespaces() == []


def test_put_and_delete_never_touch_an_archived_turn(memory):
    memory.add_turns([TurnRecord(session_id="chat", turn_id="m0", speaker="user",
                                 text="My locker code is 4417.", tenant="acme")])
    assert "chat/m0" in _sources(memory, "acme")
    store = AgentMemoryStore(memory)
    assert store.get(("acme", "chat"), "m0") is None
    with pytest.raises(ValueError, match=r"'chat/m0'"):
        store.put(("acme", "chat"), "m0", {"text": "replaced"})
    store.delete(("acme", "chat"), "m0")
    assert "chat/m0" in _sources(memory, "acme")
    assert memory.search("locker code", tenant="acme")[0].source_id == "chat/m0"


def test_put_never_replaces_an_ingested_file(memory, tmp_path):
    path = tmp_path / "recipes.md"
    path.write_text("# Recipes\n\nSourdough needs a starter fed the night before.\n")
    memory.add_file(path, source_id="docs/recipes", tenant="acme")
    before = _sources(memory, "acme")
    assert before
    store = AgentMemoryStore(memory)
    with pytest.raises(ValueError, match=r"'docs/recipes'"):
        store.put(("acme", "docs"), "recipes", {"text": "replaced"})
    store.delete(("acme", "docs"), "recipes")
    assert _sources(memory, "acme") == before


def test_an_item_from_before_keys_were_checked_is_not_aliased(memory):
    # Written by an older store: key 'u1/prefs' in ('acme', 'users'), source ID users/u1/prefs.
    old = {"text": "Old: Bo likes aisle seats."}
    memory.add(old["text"], source_id="users/u1/prefs", tenant="acme",
               metadata={"lg_key": "u1/prefs", "lg_depth": 1, "lg_ns_0": "users", "lg_value": json.dumps(old),
                         "lg_created": 1.0, "lg_updated": 1.0})
    store = AgentMemoryStore(memory)
    assert store.get(("acme", "users", "u1"), "prefs") is None
    with pytest.raises(ValueError, match=r"item 'u1/prefs' in namespace \('acme', 'users'\)"):
        store.put(("acme", "users", "u1"), "prefs", {"text": "New"})
    store.delete(("acme", "users", "u1"), "prefs")
    # Still listed and searchable under its own namespace.
    assert [(i.namespace, i.key) for i in store.search(("acme", "users"))] == [(("acme", "users"), "u1/prefs")]


def test_the_store_still_replaces_and_deletes_its_own_items(memory):
    memory.add("The bakery opens at seven.", source_id="notes/bakery", tenant="acme")
    store = AgentMemoryStore(memory)
    store.put(("acme", "notes"), "bakery-hours", {"text": "Open 7-15."})
    store.put(("acme", "notes"), "bakery-hours", {"text": "Open 6-14."})
    assert store.get(("acme", "notes"), "bakery-hours").value == {"text": "Open 6-14."}
    store.delete(("acme", "notes"), "bakery-hours")
    assert store.get(("acme", "notes"), "bakery-hours") is None
    assert _sources(memory, "acme") == {"notes/bakery"}


def test_a_fixed_tenant_store_keeps_to_its_own_items_too(memory):
    memory.add("Deploys freeze on Fridays.", source_id="ops/freeze", tenant="team")
    store = AgentMemoryStore(memory, tenant="team")
    with pytest.raises(ValueError, match=r"'ops/freeze'"):
        store.put(("ops",), "freeze", {"text": "replaced"})
    store.delete(("ops",), "freeze")
    assert "ops/freeze" in _sources(memory, "team")
    with pytest.raises(ValueError, match=r"key 'a/b'"):
        store.put(("ops",), "a/b", {"text": "x"})


def test_deleting_an_item_whose_id_also_names_a_file_keeps_the_files_sources(memory, tmp_path):
    store = AgentMemoryStore(memory)
    store.put(("acme", "docs"), "bundle", {"text": "The store's note about bundles."})
    path = tmp_path / "bundle.jsonl"
    path.write_text("\n".join(json.dumps({"id": f"r{i}", "text": f"Record {i} is about kiwis."}) for i in range(3)))
    records = memory.add_file(path, source_id="docs/bundle", tenant="acme").source_ids
    assert records and "docs/bundle" not in records
    # The store's item is still its own (and may be updated); deleting it forgets it alone, not the
    # file's records (Memory.forget('docs/bundle') would forget the file).
    store.put(("acme", "docs"), "bundle", {"text": "The store's updated note."})
    assert store.get(("acme", "docs"), "bundle").value == {"text": "The store's updated note."}
    store.delete(("acme", "docs"), "bundle")
    assert store.get(("acme", "docs"), "bundle") is None
    assert _sources(memory, "acme") == set(records)
