"""The Cypher statements both graph backends send, built from a small :class:`Dialect`.

LadybugDB (embedded) and Neo4j differ only in DDL and in two list expressions, so the embedded
contract tests exercise the very statements Neo4j receives. Every value travels as a parameter:
the only text ever formatted into a statement are the fixed fragments in this module. The data
model and the keys are described in ``cypher.py``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Dialect:
    """What differs between backends: schema statements and two list expressions.

    ``list_union`` and ``list_without`` are templates over *identifiers* chosen in this
    module (``{a}``, ``{b}``, ``{x}``), never over values.
    """

    name: str
    schema: tuple[str, ...]
    list_union: str
    list_without: str


NEO4J = Dialect(
    name="neo4j",
    schema=(
        "CREATE CONSTRAINT agent_memory_entity_key IF NOT EXISTS FOR (e:Entity) REQUIRE e.key IS UNIQUE",
        "CREATE CONSTRAINT agent_memory_rel_key IF NOT EXISTS FOR ()-[x:REL]-() REQUIRE x.key IS UNIQUE",
        "CREATE INDEX agent_memory_entity_tenant IF NOT EXISTS FOR (e:Entity) ON (e.tenant)",
        "CREATE INDEX agent_memory_entity_normalized IF NOT EXISTS FOR (e:Entity) ON (e.tenant, e.normalized)",
        "CREATE INDEX agent_memory_rel_source IF NOT EXISTS FOR ()-[x:REL]-() ON (x.tenant, x.source_id)",
    ),
    list_union="{a} + [s IN {b} WHERE NOT s IN {a}]",
    list_without="[s IN {a} WHERE s <> {x}]",
)

# LadybugDB (Kuzu lineage) needs declared tables; the primary key is its index.
LADYBUG = Dialect(
    name="ladybug",
    schema=(
        "CREATE NODE TABLE IF NOT EXISTS Entity(key STRING, tenant STRING, name STRING, normalized STRING,"
        " type STRING, source_ids STRING[], PRIMARY KEY(key))",
        "CREATE REL TABLE IF NOT EXISTS REL(FROM Entity TO Entity, key STRING, tenant STRING, relation STRING,"
        " source_id STRING, item_id STRING, evidence STRING, confidence DOUBLE)",
        # Added after the first release: databases created before get the columns here.
        "ALTER TABLE REL ADD IF NOT EXISTS valid_from STRING DEFAULT ''",
        "ALTER TABLE REL ADD IF NOT EXISTS valid_to STRING DEFAULT ''",
        "ALTER TABLE REL ADD IF NOT EXISTS superseded_by STRING DEFAULT ''",
    ),
    # Lambdas cannot read $parameters directly in LadybugDB, hence the WITH ... AS sid below.
    list_union="list_distinct(list_concat({a}, {b}))",
    list_without="list_filter({a}, s -> s <> {x})",
)

_TRIPLE_COLUMNS = (
    "a.key AS subject_key, a.name AS subject, a.type AS subject_type, x.relation AS relation,"
    " b.key AS object_key, b.name AS object, b.type AS object_type, x.key AS key, x.tenant AS tenant,"
    " x.source_id AS source_id, x.item_id AS item_id, x.evidence AS evidence, x.confidence AS confidence,"
    " x.valid_from AS valid_from, x.valid_to AS valid_to, x.superseded_by AS superseded_by"
)
_ENTITY_COLUMNS = "e.name AS name, e.normalized AS normalized, e.type AS type, e.tenant AS tenant, e.source_ids AS source_ids"


@dataclass(frozen=True)
class Queries:
    merge_entities: str
    merge_relations: str
    source_endpoints: str
    source_subjects: str
    delete_source_relations: str
    strip_source: str
    delete_orphans: str
    seed_keys: str
    outgoing: str
    incoming: str
    find_entities: str
    all_entities: str
    entity_names: str
    entity_names_limited: str
    count_entities: str
    count_entities_tenant: str
    count_relations: str
    count_relations_tenant: str
    delete_tenant_relations: str
    delete_tenant_entities: str
    mark_validity: str
    count_superseded_tenant: str
    fact_sources: str
    fact_sources_tenant: str


def build_queries(d: Dialect) -> Queries:
    union = d.list_union.format(a="e.source_ids", b="r.source_ids")
    without = d.list_without.format(a="e.source_ids", x="sid")
    return Queries(
        merge_entities=(
            "UNWIND $rows AS r MERGE (e:Entity {key: r.key})"
            " ON CREATE SET e.tenant = r.tenant, e.name = r.name, e.normalized = r.normalized,"
            " e.type = r.type, e.source_ids = r.source_ids"
            f" ON MATCH SET e.source_ids = {union}"
        ),
        # Entities first, then MATCH both ends: a single UNWIND with three MERGEs loses
        # edges in LadybugDB batches (measured 340 of 10,000). Two MATCH clauses, not one
        # comma pattern: LadybugDB plans the latter as a join and runs ~2x slower.
        merge_relations=(
            "UNWIND $rows AS r MATCH (a:Entity {key: r.subject_key}) MATCH (b:Entity {key: r.object_key})"
            " MERGE (a)-[x:REL {key: r.key}]->(b)"
            " ON CREATE SET x.tenant = r.tenant, x.relation = r.relation, x.source_id = r.source_id,"
            " x.item_id = r.item_id, x.evidence = r.evidence, x.confidence = r.confidence,"
            " x.valid_from = r.valid_from, x.valid_to = '', x.superseded_by = ''"
            " ON MATCH SET x.item_id = r.item_id, x.evidence = r.evidence, x.confidence = r.confidence,"
            " x.valid_from = r.valid_from"
        ),
        # Over a list of sources: one scan of the relations for a batch (a forget by prefix, a tenant's
        # sources), not one per source.
        source_endpoints=(
            "MATCH (a:Entity)-[x:REL]->(b:Entity) WHERE x.tenant = $tenant AND x.source_id IN $source_ids"
            " RETURN a.key AS a, b.key AS b, x.source_id AS source_id"
        ),
        source_subjects=(
            "MATCH (a:Entity)-[x:REL]->(b:Entity) WHERE x.tenant = $tenant AND x.source_id IN $source_ids"
            " RETURN DISTINCT a.name AS name"
        ),
        delete_source_relations=(
            "MATCH (a:Entity)-[x:REL]->(b:Entity) WHERE x.tenant = $tenant AND x.source_id IN $source_ids"
            " DELETE x RETURN count(*) AS n"
        ),
        strip_source=(
            "UNWIND $keys AS k MATCH (e:Entity {key: k}) WITH e, $source_id AS sid"
            f" SET e.source_ids = {without}"
        ),
        delete_orphans=(
            "UNWIND $keys AS k MATCH (e:Entity {key: k}) WHERE size(e.source_ids) = 0"
            " DETACH DELETE e RETURN count(*) AS n"
        ),
        seed_keys="MATCH (e:Entity) WHERE e.tenant = $tenant AND e.normalized IN $names RETURN e.key AS key",
        # One entity per statement, looked up by its key: an equality on the key is an
        # index seek in both backends, while "key IN $list" is a full scan in LadybugDB,
        # and a 2-hop pattern through a hub multiplies degrees before any LIMIT applies
        # (measured: 5 s at 10k triples). No ORDER BY in the database either: the caller
        # orders what comes back.
        outgoing=f"MATCH (a:Entity {{key: $key}})-[x:REL]->(b:Entity) WHERE x.tenant = $tenant RETURN {_TRIPLE_COLUMNS} LIMIT $limit",
        incoming=f"MATCH (a:Entity)-[x:REL]->(b:Entity {{key: $key}}) WHERE x.tenant = $tenant RETURN {_TRIPLE_COLUMNS} LIMIT $limit",
        find_entities=(
            "MATCH (e:Entity) WHERE e.tenant = $tenant AND e.normalized IN $names"
            f" RETURN {_ENTITY_COLUMNS} ORDER BY normalized, type"
        ),
        all_entities=f"MATCH (e:Entity) RETURN e.key AS key, {_ENTITY_COLUMNS}",
        entity_names="MATCH (e:Entity) WHERE e.tenant = $tenant RETURN DISTINCT e.name AS name ORDER BY name",
        entity_names_limited=(
            "MATCH (e:Entity) WHERE e.tenant = $tenant RETURN DISTINCT e.name AS name ORDER BY name LIMIT $limit"
        ),
        count_entities="MATCH (e:Entity) RETURN count(e) AS n",
        count_entities_tenant="MATCH (e:Entity) WHERE e.tenant = $tenant RETURN count(e) AS n",
        count_relations="MATCH (:Entity)-[x:REL]->(:Entity) RETURN count(x) AS n",
        count_relations_tenant="MATCH (:Entity)-[x:REL]->(:Entity) WHERE x.tenant = $tenant RETURN count(x) AS n",
        delete_tenant_relations=(
            "MATCH (:Entity)-[x:REL]->(:Entity) WHERE x.tenant = $tenant DELETE x RETURN count(*) AS n"
        ),
        delete_tenant_entities="MATCH (e:Entity) WHERE e.tenant = $tenant DETACH DELETE e RETURN count(*) AS n",
        count_superseded_tenant=(
            "MATCH (:Entity)-[x:REL]->(:Entity) WHERE x.tenant = $tenant AND x.valid_to <> '' RETURN count(x) AS n"
        ),
        fact_sources=("MATCH (:Entity)-[x:REL]->(:Entity) RETURN x.tenant AS tenant, x.source_id AS source_id,"
                      " count(x) AS n"),
        fact_sources_tenant=("MATCH (:Entity)-[x:REL]->(:Entity) WHERE x.tenant = $tenant"
                             " RETURN x.tenant AS tenant, x.source_id AS source_id, count(x) AS n"),
        # Found from the subject's key (an index seek), then the relation by its key among its edges.
        mark_validity=(
            "UNWIND $rows AS r MATCH (a:Entity {key: r.subject_key})-[x:REL]->(b:Entity) WHERE x.key = r.key"
            " SET x.valid_to = r.valid_to, x.superseded_by = r.superseded_by"
        ),
    )
