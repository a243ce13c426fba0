"""PostgreSQL down under a running server, through HTTP. A question during the outage answered 503 only after
the connection pool's 10 s wait, saying it "couldn't get a connection": to the pool a dead server and a busy pool
look alike. Now the server is asked whether it answers at all, and a dead one is reported at once as
unreachable; a busy pool still waits its timeout and says it was busy. When the database is back, the same
server answers again (no restart).

The outage is a relay in front of the shared test server, cut and restored on the same port: connections are
refused and the open ones dropped, while the test server stays up for the other tests."""

from __future__ import annotations

import os
import threading
import time

import httpx
import pytest
from postgres_support import NEEDS_POSTGRES, CuttableRelay

os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")

from agent_memory.api import create_app  # noqa: E402
from agent_memory.api.testing import serve_in_thread  # noqa: E402
from agent_memory.core.config import load_settings  # noqa: E402
from agent_memory.core.errors import StoreUnavailableError  # noqa: E402
from tests.helpers import api_error  # noqa: E402

pytestmark = NEEDS_POSTGRES
QUESTION = {"question": "When was the pump in greenhouse 3 replaced?", "budget": 600}
NOTE = {"source_id": "logs/pump", "title": "Pump log",
        "text": "The pump in greenhouse 3 was replaced on 2 March by Marta Okafor."}


def test_a_question_during_an_outage_says_the_database_is_unreachable_and_recovery_needs_no_restart(
        pg_schema, tmp_path):
    relay = CuttableRelay(pg_schema.url)
    settings = load_settings(data_dir=tmp_path / "data", triple_extractor="rules", llm_model=None,
                             qdrant_url=None, neo4j_uri=None, postgres_url=relay.url, api_keys={})
    try:
        with serve_in_thread(create_app(settings, warm=False)) as url, \
                httpx.Client(base_url=url, timeout=120) as http:
            stored = http.post("/v1/documents", json=NOTE)
            assert stored.status_code == 200, stored.text
            assert "[S:logs/pump]" in http.post("/v1/ask", json=QUESTION).json()["prompt"]
            relay.cut()
            message = api_error(http.post("/v1/ask", json=QUESTION), 503, "store_unavailable")
            assert message.startswith(f"PostgreSQL at 127.0.0.1:{relay.port}/") and "is unreachable" in message
            assert "busy" not in message and "couldn't get a connection" not in message, message
            relay.restore()
            deadline = time.monotonic() + 120
            while (answer := http.post("/v1/ask", json=QUESTION)).status_code != 200:
                api_error(answer, 503, "store_unavailable")
                assert time.monotonic() < deadline, answer.text
                time.sleep(0.2)
            assert "[S:logs/pump]" in answer.json()["prompt"]
    finally:
        relay.close()


def test_a_busy_pool_waits_its_timeout_and_says_busy_not_unreachable(pg_schema):
    from agent_memory.stores.postgres import PostgresDB

    db = PostgresDB(pg_schema.url, pool_size=1, timeout=2)
    try:
        outcome: list[BaseException | None] = []

        def second_request():
            try:
                with db.connection() as conn:
                    conn.execute("SELECT 1")
                outcome.append(None)
            except StoreUnavailableError as exc:
                outcome.append(exc)

        with db.connection() as held:  # the only connection, kept for the whole wait of the second request
            held.execute("SELECT 1")
            waiter = threading.Thread(target=second_request)
            waiter.start()
            waiter.join(timeout=60)
        assert len(outcome) == 1 and isinstance(outcome[0], StoreUnavailableError), outcome
        message = str(outcome[0])
        assert "answers, but all 1 pooled connections stayed busy for 2 s" in message, message
        assert "unreachable" not in message
        with db.connection() as conn:  # the pool is whole again once the connection is back
            assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        db.close()


def test_a_server_that_answers_nothing_is_reported_unreachable_and_the_pool_recovers_from_it(pg_schema):
    from agent_memory.stores.postgres import PostgresDB

    relay = CuttableRelay(pg_schema.url)
    db = PostgresDB(relay.url, pool_size=2)
    try:
        relay.hang()
        with pytest.raises(StoreUnavailableError) as caught, db.connection():
            pass
        assert str(caught.value).startswith(f"PostgreSQL at 127.0.0.1:{relay.port}/")
        assert "is unreachable: connection timeout expired" in str(caught.value)
        relay.cut()
        relay.restore()
        deadline = time.monotonic() + 120
        while True:
            try:
                with db.connection() as conn:
                    assert conn.execute("SELECT 1").fetchone() == (1,)
                break
            except StoreUnavailableError:
                assert time.monotonic() < deadline
                time.sleep(0.2)
    finally:
        db.close()
        relay.close()
