"""What the default time-to-live rule ``{"retention:forgettable": 1}`` selects: items whose metadata says
``retention: forgettable``. A session never archives a forgettable message, so the rule meets a document (or a
file, or a turn of ``Memory.add_turns``) posted with that metadata, which ``gc`` removes a day on. An archived
tool call whose call was forgettable but whose result was kept is not forgettable: it was archived under the
call's class, so the default rule removed the kept result a day later."""

from __future__ import annotations

import json
import os
import time
from types import SimpleNamespace

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")

import httpx  # noqa: E402

from agent_memory import Memory  # noqa: E402
from agent_memory.api import create_app  # noqa: E402
from agent_memory.api.testing import serve_in_thread  # noqa: E402
from agent_memory.core.config import load_settings  # noqa: E402
from agent_memory.core.records import SearchFilter  # noqa: E402
from agent_memory.ingest import upkeep  # noqa: E402
from agent_memory.ingest.upkeep import DAY, expire  # noqa: E402


def days_later(monkeypatch, days: float) -> None:
    """The expiry pass's clock (only its: the server's own stays) moved ``days`` on."""
    now = time.time() + days * DAY
    monkeypatch.setattr(upkeep, "time", SimpleNamespace(time=lambda: now))


def test_a_document_posted_as_forgettable_is_removed_by_gc_a_day_on_under_the_default_rule(tmp_path, monkeypatch):
    settings = load_settings(data_dir=tmp_path / "data", triple_extractor="rules", llm_model=None,
                             qdrant_url=None, neo4j_uri=None, postgres_url=None)
    assert settings.ttl_days == {"retention:forgettable": 1.0}  # the default
    app = create_app(settings, warm=False)
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=120) as http:
        for source_id, metadata in (("scratch/probe", {"retention": "forgettable"}), ("notes/rack", {})):
            sent = http.post("/v1/documents", json={"source_id": source_id, "metadata": metadata,
                                                    "text": "Rack R-12 holds 44 Zentrix pallets."})
            assert sent.status_code == 200, sent.text
        gc = http.post("/v1/gc")
        assert gc.status_code == 200 and gc.json()["expired"]["sources"] == 0  # not a day old yet
        days_later(monkeypatch, 1.5)
        gc = http.post("/v1/gc")
        assert gc.status_code == 200 and gc.json()["expired"]["sources"] == 1, gc.text
        assert http.get("/v1/sources/scratch/probe").status_code == 404
        assert http.get("/v1/sources/notes/rack").status_code == 200


def test_a_kept_result_of_a_forgettable_call_is_archived_as_fuzzy_and_outlives_the_default_rule(settings):
    call = {"role": "assistant", "content": "Looking it up.", "tool_calls": [
        {"id": "c0", "type": "function", "function": {"name": "grep", "arguments": json.dumps({"pattern": "retry"})}}]}
    with Memory(settings=settings, tenant="acme") as memory:
        memory.add_message("loop", {"role": "user", "content": "Where is the retry loop?"})
        memory.add_message("loop", call, retention="forgettable")
        memory.add_message("loop", {"role": "tool", "tool_call_id": "c0", "content": "src/net/backoff_48.py:12"})
        memory.settle()  # the archive runs on a worker thread
        [pair] = [i for i in memory.services.vectors.scroll(SearchFilter(tenant="acme", kinds=["turn"]))
                  if i.source_id == "loop/m1"]
        assert pair.metadata["retention"] == "fuzzy" and "expires_at" not in pair.metadata
        assert expire(memory.services, now=time.time() + 2 * DAY)["sources"] == 0
        assert memory.services.catalog.get("acme", "loop/m1") is not None
