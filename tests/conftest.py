"""Shared fixtures: real services on a temporary data dir, with models loaded once per process."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# The ONNX graphs the models' encoders write (onnx_graph.graph_session) are kept for this run only, in a
# folder of its own, not in the user's cache: the processes the tests start read them from there.
if "AGENT_MEMORY_MODEL_CACHE_DIR" not in os.environ:
    os.environ["AGENT_MEMORY_MODEL_CACHE_DIR"] = tempfile.mkdtemp(prefix="agent-memory-test-graphs-")
    atexit.register(shutil.rmtree, os.environ["AGENT_MEMORY_MODEL_CACHE_DIR"], True)
# The PostgreSQL that scripts/test.sh starts is for the tests that ask for it (each in a fresh schema,
# tests/postgres_support.py): settings built anywhere else stay embedded instead of sharing its tables.
if os.environ.get("AGENT_MEMORY_POSTGRES_URL"):
    os.environ["AGENT_MEMORY_TEST_POSTGRES_URL"] = os.environ.pop("AGENT_MEMORY_POSTGRES_URL")

@pytest.fixture
def pg_schema():
    """A schema of its own in the test PostgreSQL, its tables made (tests/postgres_support.py), dropped after."""
    from postgres_support import FreshSchema

    fresh = FreshSchema()
    fresh.open()
    yield fresh
    fresh.cleanup()


@pytest.fixture
def settings(tmp_path):
    from agent_memory.core.config import load_settings

    return load_settings(data_dir=tmp_path / "data", triple_extractor="rules", qdrant_url=None, neo4j_uri=None,
                         postgres_url=None)


@pytest.fixture
def services(settings):
    from agent_memory.services import build_services

    with build_services(settings) as svc:
        yield svc
