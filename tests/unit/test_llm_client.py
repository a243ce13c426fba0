"""LLMClient against the local fake OpenAI-compatible server."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ holds fake_openai.py

from fake_openai import FakeOpenAI  # noqa: E402

from agent_memory.core.config import load_settings  # noqa: E402
from agent_memory.core.errors import LLMError  # noqa: E402
from agent_memory.core.llm import LLMClient, llm_from_settings  # noqa: E402


@pytest.fixture()
def fake():
    with FakeOpenAI() as server:
        yield server


def test_complete_returns_text_and_records_usage(fake):
    fake.enqueue("first", prompt_tokens=10, completion_tokens=3)
    fake.enqueue("second", prompt_tokens=5, completion_tokens=2)
    client = LLMClient("fake-model", base_url=fake.base_url, max_retries=0)
    one = client.complete([{"role": "user", "content": "hi"}], max_tokens=20)
    two = client.complete([{"role": "user", "content": "again"}], response_format={"type": "json_object"})
    assert (one.text, two.text) == ("first", "second")
    assert one.usage.prompt_tokens == 10 and one.usage.completion_tokens == 3
    assert client.usage.prompt_tokens == 15
    assert client.usage.completion_tokens == 5
    assert client.usage.calls == 2
    assert fake.requests[0]["model"] == "fake-model"
    assert fake.requests[0]["max_tokens"] == 20
    assert fake.requests[0]["temperature"] == 0.0
    assert fake.requests[1]["response_format"] == {"type": "json_object"}
    assert fake.requests[1]["messages"] == [{"role": "user", "content": "again"}]


def test_retries_on_429_and_500_then_succeeds(fake):
    fake.enqueue(status=429)
    fake.enqueue(status=500)
    fake.enqueue("finally")
    client = LLMClient("fake-model", base_url=fake.base_url, max_retries=2)
    result = client.complete([{"role": "user", "content": "hi"}])
    assert result.text == "finally"
    assert len(fake.requests) == 3
    assert client.usage.calls == 1


def test_gives_up_after_retries_with_model_and_url_in_message(fake):
    for _ in range(3):
        fake.enqueue(status=503)
    client = LLMClient("fake-model", base_url=fake.base_url, max_retries=1)
    with pytest.raises(LLMError) as info:
        client.complete([{"role": "user", "content": "hi"}])
    assert "fake-model" in str(info.value)
    assert fake.base_url in str(info.value)
    assert "503" in str(info.value)
    assert len(fake.requests) == 2  # one try + one retry
    assert client.usage.calls == 0


def test_timeout_raises_llm_error(fake):
    fake.enqueue("too late", delay=1.5)
    client = LLMClient("fake-model", base_url=fake.base_url, timeout=0.2, max_retries=0)
    with pytest.raises(LLMError, match="timed out"):
        client.complete([{"role": "user", "content": "hi"}])


def test_null_content_and_garbage_body_raise_llm_error(fake):
    fake.enqueue(None)
    fake.enqueue(body="this is not json")
    client = LLMClient("fake-model", base_url=fake.base_url, max_retries=0)
    with pytest.raises(LLMError, match="no text"):
        client.complete([{"role": "user", "content": "hi"}])
    with pytest.raises(LLMError):
        client.complete([{"role": "user", "content": "hi"}])


def test_unreachable_endpoint_raises_llm_error():
    client = LLMClient("fake-model", base_url="http://127.0.0.1:9/v1", timeout=0.5, max_retries=0)
    with pytest.raises(LLMError, match="127.0.0.1:9"):
        client.complete([{"role": "user", "content": "hi"}])


def test_llm_from_settings(fake):
    assert llm_from_settings(load_settings(llm_model=None)) is None
    client = llm_from_settings(load_settings(llm_model="m1", llm_base_url=fake.base_url, llm_timeout_s=3.0))
    assert isinstance(client, LLMClient)
    assert client.model == "m1" and client.timeout == 3.0
    assert client.complete([{"role": "user", "content": "x"}]).text == "ok"
