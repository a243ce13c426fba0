"""A server stopped while an upload's job was unfinished: the next start on that data dir runs it, and the
job ID the client was given answers with its outcome (before, it answered 404 and nothing was stored)."""

from __future__ import annotations

import os
import time

import httpx

os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")

from agent_memory.api import create_app  # noqa: E402
from agent_memory.api.testing import serve_in_thread  # noqa: E402
from agent_memory.core.config import load_settings  # noqa: E402
from tests.helpers import spool_an_interrupted_upload  # noqa: E402

NOTE = b"# Pump log\n\nThe pump in greenhouse 3 was replaced on 2 March by Marta Okafor.\n"


def test_an_interrupted_upload_job_runs_at_the_next_start_under_the_id_the_client_had(tmp_path):
    data_dir = tmp_path / "data"
    # The stopped server: its job was queued (its run never got the stores) when the stop came.
    job_id = spool_an_interrupted_upload(tmp_path, data_dir, "default", NOTE)

    settings = load_settings(data_dir=data_dir, triple_extractor="none", qdrant_url=None, neo4j_uri=None,
                             postgres_url=None, api_keys={})
    with serve_in_thread(create_app(settings, warm=False)) as url, httpx.Client(base_url=url, timeout=120) as http:
        deadline = time.monotonic() + 300
        while (answer := http.get(f"/v1/jobs/{job_id}")).json().get("status") not in ("done", "failed"):
            assert answer.status_code == 200, answer.text
            assert time.monotonic() < deadline, answer.text
            time.sleep(0.1)
        assert answer.json()["status"] == "done", answer.text
        assert answer.json()["result"]["source_ids"] == ["logs/pump.md"]
        stored = http.get("/v1/sources/logs/pump.md")
        assert stored.status_code == 200, stored.text
        assert "Marta Okafor" in stored.text
