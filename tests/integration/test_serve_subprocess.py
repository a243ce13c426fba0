"""``serve_in_subprocess``: the API as its own process, as the benchmarks measure it."""

from __future__ import annotations

import httpx
import pytest

from agent_memory.api.testing import serve_in_subprocess, wait_ready


def test_the_server_answers_in_its_own_process_and_stops_on_exit(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_MEMORY_QDRANT_URL", "http://unreachable.invalid:6333")  # unset for the child
    env = {"AGENT_MEMORY_API_KEYS": '{"k1": "t1"}', "AGENT_MEMORY_LLM_MODEL": "", "AGENT_MEMORY_QDRANT_URL": None,
           "AGENT_MEMORY_NEO4J_URI": None, "AGENT_MEMORY_POSTGRES_URL": None}
    with serve_in_subprocess(tmp_path / "data", env, log=tmp_path / "serve.log") as url:
        with httpx.Client(base_url=url, timeout=60) as client:
            wait_ready(client)
            assert client.post("/v1/ask", json={"question": "anything?"}).status_code == 401
            answer = client.post("/v1/ask", json={"question": "anything?"}, headers={"X-API-Key": "k1"})
            assert answer.status_code == 200 and answer.json()["mode"] == "retrieval-only"
            assert answer.json()["debug"] is None  # the dump is built only on request
    assert (tmp_path / "data").is_dir()
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{url}/healthz", timeout=2)
