"""Through the API, error messages hide the server's data dir only where it stands as a path: with the data
dir ``data``, ``DELETE /v1/sources/metadata/notes.md`` once said ``no source 'meta<data dir>/notes.md'`` and
``GET /v1/jobs/nodata`` said ``no job 'no<data dir>'``."""

from __future__ import annotations

import httpx

from agent_memory.api import create_app
from agent_memory.api.testing import serve_in_thread, wait_ready
from agent_memory.core.config import load_settings


def test_ids_holding_the_data_dirs_name_are_said_as_sent(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    settings = load_settings(data_dir="data", triple_extractor="rules", qdrant_url=None, neo4j_uri=None,
                             postgres_url=None)
    with serve_in_thread(create_app(settings)) as url, httpx.Client(base_url=url, timeout=60) as client:
        wait_ready(client)
        source = client.delete("/v1/sources/metadata/notes.md")
        assert source.status_code == 404 and "'metadata/notes.md'" in source.json()["error"]["message"]
        job = client.get("/v1/jobs/nodata")
        assert job.status_code == 404 and "'nodata'" in job.json()["error"]["message"]
