"""PostgreSQL restarted under a running process: the pool tests a connection before it hands it out, so no
request meets a connection the restart closed. Without the check each pooled connection failed one request
(503) after a restart, and answers took about 20 s to come back (a probe of the served stack)."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import pytest
from postgres_support import NEEDS_POSTGRES, FreshSchema

pytestmark = NEEDS_POSTGRES
SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "postgres-test-server.sh"


def test_every_request_after_a_restart_gets_a_live_connection():
    schema = FreshSchema()
    try:
        db = schema.open(pool_size=4)
        busy = threading.Barrier(4)

        def hold_one():  # four at once: the pool opens all four connections
            with db.connection() as conn:
                busy.wait(timeout=30)
                conn.execute("SELECT 1")

        threads = [threading.Thread(target=hold_one) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        restarted = subprocess.run(["bash", str(SCRIPT), "restart"], capture_output=True, text=True, timeout=120)
        if restarted.returncode != 0:
            pytest.skip(f"this PostgreSQL is not the test script's to restart: {restarted.stderr.strip()[-200:]}")
        for _ in range(8):
            with db.connection() as conn:
                assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        schema.cleanup()
