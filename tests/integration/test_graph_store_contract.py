"""One contract for every GraphStore backend: embedded LadybugDB always, real Neo4j when
AGENT_MEMORY_NEO4J_URI is set (start one with ``eval "$(scripts/neo4j-test-server.sh start)"``).

Each test works in its own tenant; on Neo4j the tenant is removed afterwards.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import uuid

import pytest

from agent_memory.core.config import load_settings
from agent_memory.core.entities import normalize_name
from agent_memory.core.errors import BackupError, StoreError, StoreUnavailableError
from agent_memory.core.records import Triple
from agent_memory.stores.base import GraphStore
from agent_memory.stores.graph_factory import open_graph_store
from agent_memory.stores.ladybug_graph import LadybugGraphStore

NEO4J_URI = os.environ.get("AGENT_MEMORY_NEO4J_URI")
NEO4J_SKIP = (
    "AGENT_MEMORY_NEO4J_URI is not set, so the Neo4j backend is NOT tested; "
    'start a real one with: eval "$(scripts/neo4j-test-server.sh start)"'
)


def _neo4j_store():
    from agent_memory.stores.neo4j_graph import Neo4jGraphStore

    return Neo4jGraphStore(
        NEO4J_URI,
        os.environ.get("AGENT_MEMORY_NEO4J_USER", "neo4j"),
        os.environ.get("AGENT_MEMORY_NEO4J_PASSWORD", "neo4j"),
        os.environ.get("AGENT_MEMORY_NEO4J_DATABASE") or None,
    )


@pytest.fixture(scope="module")
def neo4j_store():
    if not NEO4J_URI:
        pytest.skip(NEO4J_SKIP)
    store = _neo4j_store()
    yield store
    store.close()


class Graph:
    """A store plus a tenant of this test's own, and a short way to write triples."""

    def __init__(self, store: GraphStore, tenant: str) -> None:
        self.store = store
        self.tenant = tenant

    def t(self, s: str, r: str, o: str, source: str = "doc-1", **kw) -> Triple:
        return Triple(subject=s, relation=r, object=o, tenant=kw.pop("tenant", self.tenant), source_id=source, **kw)

    def stats(self) -> dict[str, int]:
        return self.store.stats(self.tenant)


@pytest.fixture(params=["ladybug", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def graph(request, tmp_path):
    tenant = f"t-{uuid.uuid4().hex[:12]}"
    if request.param == "ladybug":
        store = LadybugGraphStore(tmp_path / "graph")
        yield Graph(store, tenant)
        store.close()
    else:
        store = request.getfixturevalue("neo4j_store")
        yield Graph(store, tenant)
        for t in (tenant, tenant + "-other"):
            store.delete_tenant(t)


def _edges(triples: list[Triple]) -> set[tuple[str, str, str, str]]:
    return {(t.subject, t.relation, t.object, t.source_id) for t in triples}


def test_neighbourhood_one_and_two_hops_with_source_ids(graph):
    assert graph.store.merge_triples([
        graph.t("Alice", "works at", "ACME", "doc-1", item_id="i1", evidence="Alice works at ACME.", confidence=0.9),
        graph.t("ACME", "based in", "Paris", "doc-2"),
        graph.t("Paris", "capital of", "France", "doc-3"),
        graph.t("Bob", "knows", "Alice", "doc-2", subject_type="person", object_type="entity"),
    ]) == 4
    one = graph.store.neighbourhood(graph.tenant, ["alice"], hops=1)
    assert _edges(one) == {("Alice", "works at", "ACME", "doc-1"), ("Bob", "knows", "Alice", "doc-2")}
    works = next(t for t in one if t.relation == "works at")
    assert (works.item_id, works.evidence, works.confidence, works.tenant) == ("i1", "Alice works at ACME.", 0.9, graph.tenant)
    assert next(t for t in one if t.relation == "knows").subject_type == "person"

    two = graph.store.neighbourhood(graph.tenant, ["Alice"], hops=2)
    assert _edges(two) == _edges(one) | {("ACME", "based in", "Paris", "doc-2")}
    # Nearest first: every 1-hop relation comes before any 2-hop one.
    assert _edges(two[: len(one)]) == _edges(one)
    assert len(graph.store.neighbourhood(graph.tenant, ["Alice"], hops=2, limit=2)) == 2
    assert graph.store.neighbourhood(graph.tenant, ["nobody"], hops=2) == []
    with pytest.raises(ValueError, match="hops"):
        graph.store.neighbourhood(graph.tenant, ["Alice"], hops=3)


def test_fact_sources_count_each_sources_relations_per_tenant(graph):
    """What `agent-memory check` compares with the catalog: which sources hold facts, and how many."""
    other = graph.tenant + "-other"
    graph.store.merge_triples([graph.t("Alice", "works at", "ACME", "doc-1"), graph.t("ACME", "based in", "Paris", "doc-1"),
                               graph.t("Bob", "knows", "Alice", "doc-2"),
                               graph.t("Carol", "lives in", "Oslo", "doc-1", tenant=other)])
    assert graph.store.fact_sources(graph.tenant) == {graph.tenant: {"doc-1": 2, "doc-2": 1}}
    everything = graph.store.fact_sources()
    assert everything[graph.tenant] == {"doc-1": 2, "doc-2": 1} and everything[other] == {"doc-1": 1}
    graph.store.delete_by_source(graph.tenant, "doc-1")
    assert graph.store.fact_sources(graph.tenant) == {graph.tenant: {"doc-2": 1}}
    assert graph.store.fact_sources(graph.tenant + "-none") == {}


def test_a_snapshot_opens_with_every_relation_or_names_the_servers_backup_tool(graph, tmp_path):
    graph.store.merge_triples([graph.t("Alice", "works at", "ACME", "doc-1", evidence="Alice works at ACME."),
                               graph.t("ACME", "based in", "Paris", "doc-2")])
    target = tmp_path / "backup" / "graph"
    if not isinstance(graph.store, LadybugGraphStore):
        with pytest.raises(BackupError, match="neo4j-admin"):
            graph.store.snapshot_to(target)
        return
    before = (graph.stats(), graph.store.neighbourhood(graph.tenant, ["Alice"], hops=2))
    graph.store.snapshot_to(target)
    graph.store.merge_triples([graph.t("Bob", "knows", "Alice", "doc-3")])  # after the copy: not in it
    with LadybugGraphStore(target) as copy:
        assert (copy.stats(graph.tenant), copy.neighbourhood(graph.tenant, ["Alice"], hops=2)) == before


def test_a_newer_functional_fact_supersedes_the_older_one_which_is_kept(graph):
    from agent_memory.core.updates import FUNCTIONAL_RELATIONS

    moves = [("Berlin", "2024-01-10", "doc-jan"), ("Lisbon", "2024-03-02", "doc-mar"), ("Porto", "2024-06-20", "doc-jun")]
    # Out of order on purpose: the intervals follow the dates, not the ingestion order.
    for city, day, source in (moves[2], moves[0], moves[1]):
        graph.store.merge_triples([graph.t("Maria", "moved to", city, source, valid_from=f"{day}T00:00:00"),
                                   graph.t("Maria", "knows", f"Friend in {city}", source, valid_from=f"{day}T00:00:00")])
        graph.store.update_validity(graph.tenant, ["Maria"], FUNCTIONAL_RELATIONS)
    facts = {t.object: t for t in graph.store.neighbourhood(graph.tenant, ["Maria"])}
    assert facts["Berlin"].valid_from == "2024-01-10T00:00:00" and facts["Berlin"].valid_to == "2024-03-02T00:00:00"
    assert facts["Lisbon"].valid_to == "2024-06-20T00:00:00" and facts["Lisbon"].superseded
    assert facts["Porto"].valid_to == "" and not facts["Porto"].superseded  # current
    assert facts["Lisbon"].superseded_by and facts["Berlin"].superseded_by != facts["Lisbon"].superseded_by
    assert not any(facts[f"Friend in {c}"].superseded for c, _, _ in moves)  # "knows" is not functional
    assert graph.stats()["relations"] == 6  # nothing deleted
    assert graph.store.superseded_count(graph.tenant) == 2
    # Idempotent; and a source forgotten then re-derived leaves the one before it current again.
    assert graph.store.update_validity(graph.tenant, ["Maria"], FUNCTIONAL_RELATIONS) == 0
    graph.store.delete_by_source(graph.tenant, "doc-jun")
    assert graph.store.update_validity(graph.tenant, ["Maria"], FUNCTIONAL_RELATIONS) == 1
    facts = {t.object: t for t in graph.store.neighbourhood(graph.tenant, ["Maria"])}
    assert not facts["Lisbon"].superseded and facts["Berlin"].superseded


def test_subject_facts_and_mark_superseded(graph):
    graph.store.merge_triples([graph.t("Maria", "drives", "Volvo", "doc-1", valid_from="2024-01-10T00:00:00"),
                               graph.t("Maria", "drives", "Tesla", "doc-2", valid_from="2024-06-01T00:00:00"),
                               graph.t("Bob", "drives", "Fiat", "doc-2", valid_from="2024-06-01T00:00:00")])
    rows = {r["object"]: r for r in graph.store.subject_facts(graph.tenant, ["maria"])}
    assert set(rows) == {"Volvo", "Tesla"} and rows["Tesla"]["source_id"] == "doc-2"
    assert rows["Volvo"]["subject_key"] == rows["Tesla"]["subject_key"] and rows["Volvo"]["valid_to"] in ("", None)
    assert graph.store.subject_facts(graph.tenant, ["nobody"]) == []
    change = {"subject_key": rows["Volvo"]["subject_key"], "key": rows["Volvo"]["key"],
              "valid_to": rows["Tesla"]["valid_from"], "superseded_by": rows["Tesla"]["key"]}
    assert graph.store.mark_superseded(graph.tenant, [change]) == 1
    facts = {t.object: t for t in graph.store.neighbourhood(graph.tenant, ["Maria"])}
    assert facts["Volvo"].valid_to == "2024-06-01T00:00:00" and facts["Volvo"].superseded_by == rows["Tesla"]["key"]
    assert not facts["Tesla"].superseded and graph.stats()["relations"] == 3
    assert graph.store.mark_superseded(graph.tenant, []) == 0
    # A judged mark outlives nothing: once the fact that made it is gone, re-deriving clears it.
    assert graph.store.source_subjects(graph.tenant, "doc-2") == ["Bob", "Maria"]
    assert graph.store.source_subjects(graph.tenant, "no-such-doc") == []
    graph.store.delete_by_source(graph.tenant, "doc-2")
    assert graph.store.update_validity(graph.tenant, ["Maria"], {}) == 1
    facts = {t.object: t for t in graph.store.neighbourhood(graph.tenant, ["Maria"])}
    assert facts["Volvo"].valid_to == "" and not facts["Volvo"].superseded


def test_remerge_is_idempotent(graph):
    triples = [graph.t("Alice", "knows", "Bob"), graph.t("Bob", "knows", "Carol"), graph.t("Alice", "knows", "Bob", "doc-2")]
    graph.store.merge_triples(triples)
    before = graph.stats()
    assert before == {"entities": 3, "relations": 3}  # one relation per source
    # Same triples again, and the same names in other surface forms.
    graph.store.merge_triples(triples + [graph.t(" ALICE ", "knows", "bob")])
    assert graph.stats() == before
    assert len(graph.store.neighbourhood(graph.tenant, ["alice"])) == 2


def test_tenant_isolation(graph):
    other = graph.tenant + "-other"
    graph.store.merge_triples([graph.t("Alice", "knows", "Bob"), graph.t("Alice", "knows", "Eve", tenant=other)])
    assert graph.stats() == {"entities": 2, "relations": 1}
    assert graph.store.stats(other) == {"entities": 2, "relations": 1}
    assert _edges(graph.store.neighbourhood(graph.tenant, ["Alice"], hops=2)) == {("Alice", "knows", "Bob", "doc-1")}
    assert graph.store.entity_names(graph.tenant) == ["Alice", "Bob"]
    assert graph.store.find_entities(graph.tenant, ["Eve"]) == []
    [alice] = graph.store.find_entities(other, ["alice"])
    assert alice.tenant == other
    assert graph.store.delete_by_source(other, "doc-1") == 1
    assert graph.stats() == {"entities": 2, "relations": 1}
    assert graph.store.stats(other) == {"entities": 0, "relations": 0}


def test_delete_by_source_keeps_entities_other_sources_support(graph):
    graph.store.merge_triples([
        graph.t("Alice", "knows", "Bob", "doc-1"),
        graph.t("Bob", "likes", "Jazz", "doc-1"),
        graph.t("Alice", "knows", "Bob", "doc-2"),
        graph.t("Bob", "lives in", "Oslo", "doc-2"),
    ])
    assert graph.stats() == {"entities": 4, "relations": 4}
    assert graph.store.delete_by_source(graph.tenant, "doc-1") == 2
    assert graph.stats() == {"entities": 3, "relations": 2}
    remaining = graph.store.neighbourhood(graph.tenant, ["Bob"], hops=2)
    assert _edges(remaining) == {("Alice", "knows", "Bob", "doc-2"), ("Bob", "lives in", "Oslo", "doc-2")}
    assert graph.store.find_entities(graph.tenant, ["Jazz"]) == []
    [bob] = graph.store.find_entities(graph.tenant, ["Bob"])
    assert bob.source_ids == ["doc-2"]
    assert graph.store.delete_by_source(graph.tenant, "doc-1") == 0
    assert graph.store.delete_by_source(graph.tenant, "doc-2") == 2
    assert graph.stats() == {"entities": 0, "relations": 0}


def test_deleting_many_sources_at_once_is_deleting_each(graph):
    graph.store.merge_triples([
        graph.t("Alice", "knows", "Bob", "doc-1"),
        graph.t("Bob", "likes", "Jazz", "doc-2"),
        graph.t("Alice", "knows", "Bob", "doc-3"),
        graph.t("Carol", "leads", "Kestrel", "doc-4"),
        graph.t("Alice", "knows", "Bob", "doc-1", tenant=graph.tenant + "-other"),
    ])
    assert graph.store.sources_subjects(graph.tenant, ["doc-1", "doc-2", "doc-4"]) == ["Alice", "Bob", "Carol"]
    assert graph.store.sources_subjects(graph.tenant, []) == []
    assert graph.store.delete_by_sources(graph.tenant, ["doc-1", "doc-2", "doc-4", "nothing"]) == 3
    assert graph.stats() == {"entities": 2, "relations": 1}
    [bob] = graph.store.find_entities(graph.tenant, ["Bob"])
    assert bob.source_ids == ["doc-3"]
    assert graph.store.delete_by_sources(graph.tenant, []) == 0
    assert graph.store.stats(graph.tenant + "-other") == {"entities": 2, "relations": 1}
    assert graph.store.delete_tenant(graph.tenant) == 2
    assert graph.stats() == {"entities": 0, "relations": 0}


def test_find_entities_exact_and_normalized(graph):
    graph.store.merge_triples([graph.t("ACME  Corp.", "employs", "Alice", "doc-1"), graph.t("acme corp", "employs", "Bob", "doc-2")])
    assert normalize_name("ACME  Corp.") == normalize_name("ａｃｍｅ corp") == "acme corp"
    for query in (["ACME  Corp."], ["acme corp"], ["ＡＣＭＥ Corp"], ["“Acme Corp”"]):
        [acme] = graph.store.find_entities(graph.tenant, query)
        assert (acme.name, acme.normalized, acme.type) == ("ACME  Corp.", "acme corp", "entity")
        assert sorted(acme.source_ids) == ["doc-1", "doc-2"]
    found = graph.store.find_entities(graph.tenant, ["alice", "BOB", "nobody"])
    assert sorted(e.name for e in found) == ["Alice", "Bob"]
    assert graph.store.entity_names(graph.tenant) == ["ACME  Corp.", "Alice", "Bob"]
    assert graph.store.entity_names(graph.tenant, limit=2) == ["ACME  Corp.", "Alice"]


def test_lookups_see_every_merge_and_delete_in_between(graph):
    # Drivers may answer lookups from an index of names: it must follow every write.
    graph.store.merge_triples([graph.t("Alice", "knows", "Bob", "doc-1")])
    assert graph.store.find_entities(graph.tenant, ["Carol"]) == []
    graph.store.merge_triples([graph.t("Carol", "knows", "Alice", "doc-2")])
    [carol] = graph.store.find_entities(graph.tenant, ["carol"])
    [alice] = graph.store.find_entities(graph.tenant, ["alice"])
    assert carol.source_ids == ["doc-2"] and sorted(alice.source_ids) == ["doc-1", "doc-2"]
    assert _edges(graph.store.neighbourhood(graph.tenant, ["Carol"])) == {("Carol", "knows", "Alice", "doc-2")}
    graph.store.delete_by_source(graph.tenant, "doc-2")
    assert graph.store.find_entities(graph.tenant, ["Carol"]) == []
    assert graph.store.neighbourhood(graph.tenant, ["Carol"]) == []
    [alice] = graph.store.find_entities(graph.tenant, ["alice"])
    assert alice.source_ids == ["doc-1"]


def test_different_types_are_never_merged(graph):
    graph.store.merge_triples([
        graph.t("Apple", "makes", "iPhone", subject_type="company", object_type="product"),
        graph.t("Apple", "grows on", "Tree", subject_type="fruit", object_type="plant"),
    ])
    assert graph.stats() == {"entities": 4, "relations": 2}
    apples = graph.store.find_entities(graph.tenant, ["apple"])
    assert sorted(e.type for e in apples) == ["company", "fruit"]
    one = graph.store.neighbourhood(graph.tenant, ["Apple"], hops=2)
    # Two separate nodes: a 2-hop walk from "Apple" cannot cross between them via a shared node.
    assert {(t.subject_type, t.relation) for t in one} == {("company", "makes"), ("fruit", "grows on")}


INJECTIONS = [
    "O'Brien \"the\" `boss`",
    "x'}) DETACH DELETE n //",
    "a}) MATCH (n) DETACH DELETE n RETURN 1 //",
    "{evil: $tenant}",
    "`REL` ]->(m) DELETE m //",
    "\\' OR 1=1 --",
]


def test_cypher_injection_is_stored_verbatim_and_harms_nothing(graph):
    graph.store.merge_triples([graph.t("Control", "stays", "Intact", "doc-keep")])
    triples = [graph.t(name, rel, f"Target {i}", f"src-{name}") for i, (name, rel) in enumerate(zip(INJECTIONS, reversed(INJECTIONS)))]
    assert graph.store.merge_triples(triples) == len(INJECTIONS)
    assert graph.stats() == {"entities": 2 + 2 * len(INJECTIONS), "relations": 1 + len(INJECTIONS)}
    names = set(graph.store.entity_names(graph.tenant))
    assert set(INJECTIONS) <= names
    for t in triples:
        [hit] = graph.store.neighbourhood(graph.tenant, [t.subject])
        assert (hit.subject, hit.relation, hit.object, hit.source_id) == (t.subject, t.relation, t.object, t.source_id)
        assert [e.name for e in graph.store.find_entities(graph.tenant, [t.subject])] == [t.subject]
    for t in triples:
        assert graph.store.delete_by_source(graph.tenant, t.source_id) == 1
    assert graph.stats() == {"entities": 2, "relations": 1}
    assert _edges(graph.store.neighbourhood(graph.tenant, ["control"])) == {("Control", "stays", "Intact", "doc-keep")}


def test_batch_of_2000_triples_loses_none(graph):
    # Shared subjects and objects across the batch: the pattern where a one-statement
    # UNWIND/MERGE loses edges in LadybugDB.
    triples = [graph.t(f"e{i % 97}", f"r{i % 5}", f"e{(i * 7 + 3) % 1009}", f"doc-{i % 11}") for i in range(2000)]
    distinct = {(t.subject, t.relation, t.object, t.source_id) for t in triples}
    entities = {t.subject for t in triples} | {t.object for t in triples}
    assert graph.store.merge_triples(triples) == len(distinct)
    assert graph.stats() == {"entities": len(entities), "relations": len(distinct)}
    got = graph.store.neighbourhood(graph.tenant, ["e1"], hops=1, limit=10_000)
    assert _edges(got) == {e for e in distinct if "e1" in (e[0], e[2])}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("ACME  Corp.", "acme corp"),
        ("ＡＣＭＥ\u3000Corp", "acme corp"),  # full-width letters and ideographic space
        ("  \u201cAlice\u201d ", "alice"),
        ("'Bob'", "bob"),
        ("Stra\u00dfe", "strasse"),
        ("zero\u200bwidth", "zerowidth"),
        ("C#", "c#"),
        ("AT&T", "at&t"),
        ("node.js", "node.js"),
        ("...", ""),
    ],
)
def test_normalize_name(raw, expected):
    assert normalize_name(raw) == expected


# -- backend-specific behaviour ------------------------------------------------------


def test_ladybug_persists_and_rejects_a_second_process(tmp_path):
    path = tmp_path / "graph"
    with LadybugGraphStore(path) as store:
        store.merge_triples([Triple(subject="Alice", relation="knows", object="Bob", tenant="p", source_id="d")])
        probe = "from agent_memory.stores.ladybug_graph import LadybugGraphStore as L; L(__import__('sys').argv[1])"
        other = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True, timeout=120)
        assert other.returncode != 0 and "StoreUnavailableError" in other.stderr and str(path) in other.stderr
    with LadybugGraphStore(path) as store:
        assert store.stats("p") == {"entities": 2, "relations": 1}


def test_factory_picks_embedded_under_data_dir(tmp_path):
    store = open_graph_store(load_settings(data_dir=tmp_path, neo4j_uri=None))
    try:
        assert isinstance(store, LadybugGraphStore) and store.path == tmp_path / "graph"
    finally:
        store.close()


def test_factory_maps_unreachable_neo4j_to_store_unavailable(tmp_path):
    uri = "bolt://127.0.0.1:1"
    with pytest.raises(StoreUnavailableError, match="127.0.0.1:1"):
        open_graph_store(load_settings(data_dir=tmp_path, neo4j_uri=uri))


@pytest.mark.neo4j
def test_neo4j_second_start_is_quiet_and_factory_uses_settings(neo4j_store, caplog, tmp_path):
    from agent_memory.stores.neo4j_graph import Neo4jGraphStore

    settings = load_settings(
        data_dir=tmp_path,
        neo4j_uri=NEO4J_URI,
        neo4j_user=os.environ.get("AGENT_MEMORY_NEO4J_USER", "neo4j"),
        neo4j_password=os.environ.get("AGENT_MEMORY_NEO4J_PASSWORD", "neo4j"),
    )
    with caplog.at_level(logging.INFO):
        store = open_graph_store(settings)  # schema already exists: IF NOT EXISTS must stay silent
    try:
        assert isinstance(store, Neo4jGraphStore)
        assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    finally:
        store.close()
    with pytest.raises(StoreUnavailableError, match="credentials"):
        Neo4jGraphStore(NEO4J_URI, settings.neo4j_user, "wrong-password")


def test_neo4j_schema_statement_that_lost_a_race_to_an_equal_one_opens_and_any_other_error_is_ours():
    """Two processes starting at once on a fresh Neo4j both pass "IF NOT EXISTS"; the second is told the equal
    index already exists (seen in the suite's parallel workers). That is what it asked for; any other error is not."""
    from neo4j.exceptions import Neo4jError

    from agent_memory.stores.neo4j_graph import Neo4jGraphStore

    class Driver:
        def __init__(self, code: str) -> None:
            self.code, self.statements = code, []

        def execute_query(self, statement, database_=None):
            self.statements.append(statement)
            raise Neo4jError._hydrate_neo4j(code=self.code, message="An equivalent index already exists")

    store = Neo4jGraphStore.__new__(Neo4jGraphStore)
    store.uri = "bolt://db:7687"
    store._driver = Driver("Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists")
    store._create("CREATE INDEX agent_memory_entity_tenant IF NOT EXISTS FOR (e:Entity) ON (e.tenant)", "neo4j")
    assert len(store._driver.statements) == 1
    store._driver = Driver("Neo.ClientError.Statement.SyntaxError")
    with pytest.raises(StoreError, match="bolt://db:7687"):
        store._guard(lambda: store._create("CREATE INDEX oops", "neo4j"))
