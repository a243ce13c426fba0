"""An LLM endpoint that accepts and never answers holds a caller until one total deadline, not
timeout x attempts: retries happen only while the deadline leaves room for them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ holds fake_openai.py

from fake_openai import FakeOpenAI  # noqa: E402

from agent_memory.core.config import load_settings  # noqa: E402
from agent_memory.core.errors import LLMError  # noqa: E402
from agent_memory.core.llm import LLMClient, llm_from_settings  # noqa: E402


def test_a_silent_endpoint_ends_at_the_deadline_without_further_attempts():
    with FakeOpenAI() as fake:
        for _ in range(3):
            fake.enqueue("late", delay=3.0)
        client = LLMClient("m", base_url=fake.base_url, timeout=30.0, max_retries=2, deadline=0.5)
        with pytest.raises(LLMError, match="deadline 0.5s"):
            client.complete([{"role": "user", "content": "hi"}])
        assert len(fake.requests) == 1  # the first attempt used the whole deadline: no retry after it


def test_retries_still_happen_inside_the_deadline():
    with FakeOpenAI() as fake:
        fake.enqueue(status=500)
        fake.enqueue("second time")
        client = LLMClient("m", base_url=fake.base_url, timeout=30.0, max_retries=2, deadline=20.0)
        assert client.complete([{"role": "user", "content": "hi"}]).text == "second time"


def test_the_deadline_is_a_setting_well_under_30s():
    settings = load_settings(llm_model="m", llm_base_url="http://127.0.0.1:9")
    assert settings.llm_deadline_s <= 20.0
    assert llm_from_settings(settings).deadline == settings.llm_deadline_s
