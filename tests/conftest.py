"""Shared fixtures: real services on a temporary data dir, with models loaded once per process."""

from __future__ import annotations

import os
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

@pytest.fixture
def settings(tmp_path):
    from agent_memory.config import load_settings

    return load_settings(data_dir=tmp_path / "data", triple_extractor="rules", qdrant_url=None, neo4j_uri=None)


@pytest.fixture
def services(settings):
    from agent_memory.services import build_services

    with build_services(settings) as svc:
        yield svc
