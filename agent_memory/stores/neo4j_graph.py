"""GraphStore on a real Neo4j server, through the official driver.

Writes are batched ``UNWIND $rows`` statements run in managed transactions
(``session.execute_write``), which retry transient errors (deadlocks, leader switches).
Schema (constraints, indexes) is created idempotently on start. The statements are the
ones in :mod:`agent_memory.stores.cypher`, shared with the embedded backend.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import neo4j
from neo4j import GraphDatabase, RoutingControl
from neo4j.exceptions import AuthError, Neo4jError, ServiceUnavailable, SessionExpired

from agent_memory.core.errors import BackupError, StoreError, StoreUnavailableError
from agent_memory.core.records import Triple
from agent_memory.stores import cypher, cypher_statements

log = logging.getLogger(__name__)
RETRY_S = 5.0  # how long the driver retries a transaction that failed on a transient error


# What a schema statement that lost a race to an equal one is told (Neo4j 5's status codes).
_ALREADY_THERE = frozenset({"Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists",
                            "Neo.ClientError.Schema.IndexAlreadyExists",
                            "Neo.ClientError.Schema.ConstraintAlreadyExists"})


class Neo4jGraphStore(cypher.Runner):
    """Entities and relations in Neo4j; every node and relation carries its tenant."""

    def __init__(
        self,
        uri: str,
        user: str = "neo4j",
        password: str = "neo4j",
        database: str | None = None,
        *,
        batch_size: int = cypher.BATCH_SIZE,
        connection_timeout_s: float = 10.0,
    ) -> None:
        self.uri = uri
        self.database = database
        self.batch_size = batch_size
        self._q = cypher_statements.build_queries(cypher_statements.NEO4J)
        try:
            self._driver = GraphDatabase.driver(
                uri,
                auth=(user, password),
                connection_timeout=connection_timeout_s,
                # The driver retries a failed transaction for 30 s by default, each graph read of a question
                # in turn: with Neo4j down a question took 33-63 s to fail. A restart's blip still passes.
                max_transaction_retry_time=RETRY_S,
                # "IF NOT EXISTS" on an existing index is an informational notification:
                # keep a second start quiet, still surface warnings.
                notifications_min_severity="WARNING",
                # A fresh database knows none of the properties the queries name yet: every start logged
                # six "property does not exist" warnings about nothing wrong.
                notifications_disabled_classifications=["UNRECOGNIZED"],
            )
        except (ValueError, neo4j.exceptions.ConfigurationError) as exc:
            raise StoreUnavailableError(f"invalid Neo4j URI {uri!r}: {exc}") from exc
        try:
            self._guard(self._driver.verify_connectivity)
            for statement in cypher_statements.NEO4J.schema:
                self._guard(lambda s=statement: self._create(s, database))
        except BaseException:
            self._driver.close()
            raise

    def _create(self, statement: str, database: str) -> None:
        """One schema statement. "IF NOT EXISTS" is checked before the index is written, so two processes that
        start at once on a fresh database (replicas, the suite's workers) may both pass the check: the second is
        told the equivalent index or constraint already exists, which is what it asked for."""
        try:
            self._driver.execute_query(statement, database_=database)
        except Neo4jError as exc:
            if exc.code not in _ALREADY_THERE:
                raise

    # -- plumbing -----------------------------------------------------------------

    def _guard(self, call: Callable[[], Any]) -> Any:
        """Run a driver call, mapping driver errors to ours (with the URI for the operator)."""
        try:
            return call()
        except (ServiceUnavailable, SessionExpired) as exc:
            raise StoreUnavailableError(f"Neo4j at {self.uri} is unavailable: {exc}") from exc
        except AuthError as exc:
            raise StoreUnavailableError(f"Neo4j at {self.uri} refused the credentials: {exc}") from exc
        except Neo4jError as exc:
            raise StoreError(f"Neo4j at {self.uri} failed: {exc}") from exc

    def read(self, query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        records, _, _ = self._guard(
            lambda: self._driver.execute_query(
                query, params, database_=self.database, routing_=RoutingControl.READ
            )
        )
        return [r.data() for r in records]

    def _write(self, work: Callable[[Any], Any]) -> Any:
        """One managed write transaction; the driver retries it on transient errors."""

        def call() -> Any:
            with self._driver.session(database=self.database) as session:
                return session.execute_write(work)

        return self._guard(call)

    @staticmethod
    def _run(tx, query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        return [r.data() for r in tx.run(query, params)]

    # -- GraphStore ---------------------------------------------------------------

    def merge_triples(self, triples: Iterable[Triple]) -> int:
        """Upsert entities and relations; returns the number of distinct triples merged."""
        batch = cypher.prepare(triples)
        for rows in cypher.chunks(batch.entities, self.batch_size):
            self._write(lambda tx, rows=rows: self._run(tx, self._q.merge_entities, {"rows": rows}))
        for rows in cypher.chunks(batch.relations, self.batch_size):
            self._write(lambda tx, rows=rows: self._run(tx, self._q.merge_relations, {"rows": rows}))
        return len(batch.relations)

    def _write_rows(self, query: str, rows: list[dict[str, Any]]) -> None:
        for chunk in cypher.chunks(rows, self.batch_size):
            self._write(lambda tx, chunk=chunk: self._run(tx, query, {"rows": chunk}))

    def delete_by_source(self, tenant: str, source_id: str) -> int:
        """Remove the source's relations, then entities no other source supports; returns relations removed."""
        return self.delete_by_sources(tenant, [source_id])

    def delete_by_sources(self, tenant: str, source_ids: Sequence[str]) -> int:
        """``delete_by_source`` of several sources in one transaction; returns the relations removed."""
        return self._write(lambda tx: cypher.delete_sources(
            lambda query, params: self._run(tx, query, params), self._q, tenant, source_ids))

    def delete_tenant(self, tenant: str) -> int:
        """Remove everything of one tenant; returns entities removed."""

        def work(tx) -> int:
            self._run(tx, self._q.delete_tenant_relations, {"tenant": tenant})
            return int(self._run(tx, self._q.delete_tenant_entities, {"tenant": tenant})[0]["n"])

        return self._write(work)

    def snapshot_to(self, path: Path) -> None:
        raise BackupError(f"the graph is in Neo4j ({self.uri}): back it up with neo4j-admin database dump (or "
                          "the server's own backups); `agent-memory backup` copies an embedded data dir")

    def close(self) -> None:
        self._driver.close()

    def __enter__(self) -> "Neo4jGraphStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
