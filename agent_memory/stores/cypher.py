"""The Cypher shared by the graph backends (LadybugDB embedded and Neo4j).

Both drivers send the very same statements, built here from a small :class:`Dialect`
that only differs in DDL and in two list expressions, so the embedded contract tests
exercise the queries Neo4j receives. Every value travels as a parameter: the only
text ever formatted into a statement are the fixed fragments in this module.

Data model::

    (:Entity {key, tenant, name, normalized, type, source_ids: [str]})
    -[:REL {key, tenant, relation, source_id, item_id, evidence, confidence, valid_from, valid_to,
            superseded_by}]->

The entity key hashes tenant + type + normalized name, so two entities of different
types never merge. The relation key hashes tenant + both entity keys + the normalized
relation + source_id: one REL per (subject, relation, object, source), so deleting a
source removes exactly its relations. ``valid_from`` is when the fact was said (ISO);
``valid_to`` and ``superseded_by`` are set when a newer fact of the same functional
relation replaced it (``update_validity``): a superseded fact is kept, never deleted.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from agent_memory.core.entities import normalize_name, normalize_type
from agent_memory.core.records import Triple
from agent_memory.core.updates import validity_changes
from agent_memory.stores.base import EntityRecord

log = logging.getLogger(__name__)

BATCH_SIZE = 2000


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


def _digest(*parts: str) -> str:
    # \x1f cannot appear in normalized names' meaningful content and keeps parts apart.
    return hashlib.sha1("\x1f".join(parts).encode("utf-8")).hexdigest()


def entity_key(tenant: str, name: str, entity_type: str) -> str:
    return _digest("E", tenant, normalize_type(entity_type), normalize_name(name))


def relation_key(tenant: str, subject_key: str, relation: str, object_key: str, source_id: str) -> str:
    return _digest("R", tenant, subject_key, normalize_name(relation), object_key, source_id)


@dataclass
class Batch:
    entities: list[dict[str, Any]]
    relations: list[dict[str, Any]]


def prepare(triples: Iterable[Triple]) -> Batch:
    """Deduplicated parameter rows: one per entity key and one per relation key.

    Deduplicating here matters: MERGE over repeated keys inside one UNWIND is where the
    backends disagree. Triples with an empty subject, relation or object are skipped.
    """
    entities: dict[str, dict[str, Any]] = {}
    relations: dict[str, dict[str, Any]] = {}
    for t in triples:
        subject_norm, object_norm = normalize_name(t.subject), normalize_name(t.object)
        if not subject_norm or not object_norm or not normalize_name(t.relation):
            log.warning("skipping triple with an empty part: %r", t)
            continue
        ends = []
        for name, norm, etype in ((t.subject, subject_norm, t.subject_type), (t.object, object_norm, t.object_type)):
            key = entity_key(t.tenant, name, etype)
            row = entities.get(key)
            if row is None:
                entities[key] = row = {
                    "key": key, "tenant": t.tenant, "name": name.strip(), "normalized": norm,
                    "type": normalize_type(etype), "source_ids": [],
                }
            if t.source_id not in row["source_ids"]:
                row["source_ids"].append(t.source_id)
            ends.append(key)
        rkey = relation_key(t.tenant, ends[0], t.relation, ends[1], t.source_id)
        relations[rkey] = {
            "key": rkey, "subject_key": ends[0], "object_key": ends[1], "tenant": t.tenant,
            "relation": t.relation, "source_id": t.source_id, "item_id": t.item_id,
            "evidence": t.evidence, "confidence": float(t.confidence), "valid_from": t.valid_from or "",
        }
    return Batch(list(entities.values()), list(relations.values()))


def chunks(rows: Sequence[dict[str, Any]], size: int = BATCH_SIZE) -> Iterator[list[dict[str, Any]]]:
    for start in range(0, len(rows), size):
        yield list(rows[start : start + size])


def row_to_triple(row: dict[str, Any]) -> Triple:
    return Triple(
        subject=row["subject"], relation=row["relation"], object=row["object"], tenant=row["tenant"],
        source_id=row["source_id"] or "", item_id=row["item_id"] or "",
        subject_type=row["subject_type"], object_type=row["object_type"],
        evidence=row["evidence"] or "", confidence=float(row["confidence"] if row["confidence"] is not None else 1.0),
        valid_from=row.get("valid_from") or "", valid_to=row.get("valid_to") or "",
        superseded_by=row.get("superseded_by") or "",
    )


def row_to_entity(row: dict[str, Any]) -> EntityRecord:
    return EntityRecord(
        name=row["name"], normalized=row["normalized"], type=row["type"], tenant=row["tenant"],
        source_ids=list(row["source_ids"] or []),
    )


def _order(row: dict[str, Any]) -> tuple:
    return (-(row["confidence"] or 0.0), row["subject"], row["relation"], row["object"], row["source_id"])


class Runner:
    """The read side both backends share: a driver provides ``read`` (one query → dict rows)
    and ``_q`` (its dialect's queries); the lookups below are then the same Cypher on both."""

    _q: "Queries"

    def read(self, query: str, params: dict[str, Any]) -> list[dict[str, Any]]:  # pragma: no cover - protocol
        raise NotImplementedError

    def neighbourhood(self, tenant: str, entities: Sequence[str], hops: int = 1, limit: int = 50) -> list[Triple]:
        return [row_to_triple(r) for r in neighbourhood_rows(self, self._q, tenant, entities, hops, limit)]

    def seed_keys(self, tenant: str, normalized_names: Sequence[str]) -> list[str]:
        """Keys of the entities with these normalized names (a driver may answer from an index)."""
        return [r["key"] for r in self.read(self._q.seed_keys, {"tenant": tenant, "names": list(normalized_names)})]

    def source_subjects(self, tenant: str, source_id: str) -> list[str]:
        """The names of the subjects of the source's relations (whose validity a forget may change)."""
        return self.sources_subjects(tenant, [source_id])

    def sources_subjects(self, tenant: str, source_ids: Sequence[str]) -> list[str]:
        """``source_subjects`` of several sources at once."""
        if not source_ids:
            return []
        rows = self.read(self._q.source_subjects, {"tenant": tenant, "source_ids": list(source_ids)})
        return sorted({r["name"] for r in rows if r["name"]})

    def find_entities(self, tenant: str, names: Sequence[str]) -> list[EntityRecord]:
        norms = sorted({n for n in (normalize_name(x) for x in names) if n})
        if not norms:
            return []
        return [row_to_entity(r) for r in self.read(self._q.find_entities, {"tenant": tenant, "names": norms})]

    def entity_names(self, tenant: str, limit: int | None = None) -> list[str]:
        if limit is None:
            rows = self.read(self._q.entity_names, {"tenant": tenant})
        else:
            rows = self.read(self._q.entity_names_limited, {"tenant": tenant, "limit": int(limit)})
        return [r["name"] for r in rows]

    def _write_rows(self, query: str, rows: list[dict[str, Any]]) -> None:  # pragma: no cover - protocol
        raise NotImplementedError

    def update_validity(self, tenant: str, subjects: Sequence[str], functional: Mapping[str, Sequence[str]]) -> int:
        """Re-derive the validity intervals of the named subjects' functional relations (see
        ``agent_memory.core.updates``): an older fact replaced by a newer one with another object gets
        ``valid_to`` and ``superseded_by``; the newest is current. Returns how many relations changed."""
        changes = validity_changes(self.subject_facts(tenant, subjects), functional)
        return self.mark_superseded(tenant, changes)

    def subject_facts(self, tenant: str, subjects: Sequence[str]) -> list[dict[str, Any]]:
        """Every relation of the named subjects, as rows (key, subject_key, relation, object_key,
        valid_from, valid_to, superseded_by, source_id, names ...)."""
        norms = sorted({n for n in (normalize_name(x) for x in subjects) if n})
        rows: list[dict[str, Any]] = []
        for key in self.seed_keys(tenant, norms) if norms else []:
            rows += self.read(self._q.outgoing, {"tenant": tenant, "key": key, "limit": 10_000})
        return rows

    def mark_superseded(self, tenant: str, changes: Sequence[Mapping[str, Any]]) -> int:
        """Set ``valid_to`` and ``superseded_by`` of relations (rows: subject_key, key, valid_to, superseded_by;
        the keys are the tenant's own). Never deletes. Returns how many rows were written."""
        rows = [{k: c[k] for k in ("subject_key", "key", "valid_to", "superseded_by")} for c in changes]
        if rows:
            self._write_rows(self._q.mark_validity, rows)
        return len(rows)

    def superseded_count(self, tenant: str) -> int:
        """How many of the tenant's facts a newer one replaced (kept, with their interval)."""
        return int(self.read(self._q.count_superseded_tenant, {"tenant": tenant})[0]["n"])

    def stats(self, tenant: str | None = None) -> dict[str, int]:
        if tenant is None:
            entities = self.read(self._q.count_entities, {})
            relations = self.read(self._q.count_relations, {})
        else:
            entities = self.read(self._q.count_entities_tenant, {"tenant": tenant})
            relations = self.read(self._q.count_relations_tenant, {"tenant": tenant})
        return {"entities": int(entities[0]["n"]), "relations": int(relations[0]["n"])}

    def fact_sources(self, tenant: str | None = None) -> dict[str, dict[str, int]]:
        """Tenant → source ID → its relations (the tenant's alone when given)."""
        rows = (self.read(self._q.fact_sources, {}) if tenant is None
                else self.read(self._q.fact_sources_tenant, {"tenant": tenant}))
        out: dict[str, dict[str, int]] = {}
        for row in rows:
            out.setdefault(row["tenant"], {})[row["source_id"] or ""] = int(row["n"])
        return out


def delete_sources(run: Callable[[str, dict[str, Any]], list[dict[str, Any]]], q: Queries, tenant: str,
                   source_ids: Sequence[str]) -> int:
    """Inside the caller's transaction (``run``: one statement → dict rows): remove the sources' relations, then
    the entities no other source supports; returns the relations removed. A batch of sources costs one scan of
    the relations, whatever its size."""
    ids = sorted(set(source_ids))
    if not ids:
        return 0
    by_source: dict[str, set[str]] = {}
    for row in run(q.source_endpoints, {"tenant": tenant, "source_ids": ids}):
        by_source.setdefault(row["source_id"], set()).update((row["a"], row["b"]))
    if not by_source:
        return 0
    removed = run(q.delete_source_relations, {"tenant": tenant, "source_ids": ids})[0]["n"]
    for sid, keys in sorted(by_source.items()):
        run(q.strip_source, {"keys": sorted(keys), "source_id": sid})
    run(q.delete_orphans, {"keys": sorted(set().union(*by_source.values()))})
    return int(removed)


def neighbourhood_rows(run: Runner, q: Queries, tenant: str, names: Sequence[str], hops: int, limit: int) -> list[dict]:
    """Relations within ``hops`` of the named entities, at most ``limit``.

    1-hop relations come first, by confidence (then names). The 2-hop ones follow, taken
    from the neighbours in that same order until ``limit`` is reached, so the strongest
    neighbours' relations win. Every lookup is capped by ``limit``: around an entity with
    more relations than that, which of them come back is up to the backend. The cost
    follows the result size, not the graph size.
    """
    if hops not in (1, 2):
        raise ValueError(f"hops must be 1 or 2, got {hops!r}")
    if limit <= 0:
        return []
    norms = sorted({n for n in (normalize_name(x) for x in names) if n})
    if not norms:
        return []
    seeds = sorted(run.seed_keys(tenant, norms))
    seen: set[str] = set()

    def incident(key: str) -> list[dict]:
        rows = []
        for query in (q.outgoing, q.incoming):
            for row in run.read(query, {"tenant": tenant, "key": key, "limit": limit}):
                if row["key"] not in seen:
                    seen.add(row["key"])
                    rows.append(row)
        return rows

    result = sorted((row for key in seeds for row in incident(key)), key=_order)
    if hops == 1 or len(result) >= limit:
        return result[:limit]
    visited = set(seeds)
    second: list[dict] = []
    for row in list(result):
        for key in (row["subject_key"], row["object_key"]):
            if key in visited:
                continue
            visited.add(key)
            second.extend(incident(key))
        if len(result) + len(second) >= limit:
            break
    return (result + sorted(second, key=_order))[:limit]
