"""What the graph backends (LadybugDB embedded and Neo4j) share around their Cypher: the data
model, the keys, batches of triples as rows, and the reads and deletes both run the same way. The
statements themselves are ``cypher_statements.py``.

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
from agent_memory.stores.cypher_statements import Queries

log = logging.getLogger(__name__)

BATCH_SIZE = 2000


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
