"""PostgreSQL restarted under a running process: the pool tests a connection before it hands it out, so no
request meets a connection the restart closed. Without the check each pooled connection failed one request
(503) after a restart, and answers took about 20 s to come back (a probe of the served stack).

The server restarted is one of this test's own (the test script's, in a state dir of its own): the suite runs
its files in parallel, and a restart of the shared server would fail the other files' requests meanwhile."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest
from postgres_support import NEEDS_POSTGRES

from agent_memory.stores.postgres import PostgresDB

pytestmark = NEEDS_POSTGRES
SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "postgres-test-server.sh"


@pytest.fixture
def own_server():
    """A PostgreSQL of this test's own: (its URL, a function that restarts it)."""
    # Under /tmp, not pytest's tmp_path: the server's user must reach the state dir, and pytest's base is private.
    base = tempfile.mkdtemp(prefix="agent-memory-pg-restart-")
    env = {**os.environ, "POSTGRES_TEST_STATE_DIR": str(Path(base) / "pg")}
    started = subprocess.run(["bash", str(SCRIPT), "start"], env=env, capture_output=True, text=True, timeout=180)
    try:
        if started.returncode != 0:
            pytest.skip(f"no PostgreSQL of the test's own could start: {started.stderr.strip()[-200:]}")
        url = next(line.split("=", 1)[1] for line in started.stdout.splitlines()
                   if line.startswith("export AGENT_MEMORY_POSTGRES_URL="))

        def restart() -> None:
            done = subprocess.run(["bash", str(SCRIPT), "restart"], env=env, capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, done.stderr[-500:]

        yield url, restart
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop"], env=env, capture_output=True, timeout=120)
        shutil.rmtree(base, ignore_errors=True)


def test_every_request_after_a_restart_gets_a_live_connection(own_server):
    url, restart = own_server
    db = PostgresDB(url, pool_size=4)
    try:
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
        restart()
        for _ in range(8):
            with db.connection() as conn:
                assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        db.close()
