"""Issue 32, the pure parts of request isolation: strict JSON, message shape checks, and a native
panic (a BaseException) in a background job failing that job only."""

from __future__ import annotations

import threading

import pytest

from agent_memory.api.strict import json_problem
from agent_memory.conversation.message_validation import MAX_DEPTH, validate
from agent_memory.core.errors import InternalError, contained
from agent_memory.stores.jobs import JobRegistry, JobSpec


class Panic(BaseException):
    """pyo3's PanicException derives from BaseException, like this."""


@pytest.mark.parametrize("body, reason", [
    (b'{"a": NaN}', "NaN"),
    (b'{"a": Infinity}', "NaN, Infinity"),
    (b'"\\ud800"', "lone surrogates"),
    (b"{not json", "malformed JSON"),
    (b"[" * 101 + b"]" * 101, "nested deeper than 100"),
])
def test_bodies_that_are_not_strict_json_are_named(body, reason):
    assert reason in json_problem(body)


def test_strict_json_passes_ordinary_bodies():
    assert json_problem(b'{"question": "caf\\u00e9 \\ud83d\\ude00", "budget": 1e3, "x": [[[1]]]}') is None


def _deep(depth: int):
    value: object = "x"
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("message, words", [
    ({"role": "user", "content": "a \ud800 b"}, "lone surrogate"),
    ({"role": "user", "content": "hi", "extra": {"k\udfff": 1}}, "lone surrogate"),
    ({"role": "user", "content": [_deep(MAX_DEPTH + 5)]}, f"deeper than {MAX_DEPTH}"),
    ({"role": "user", "content": "x", "meta": _deep(5000)}, f"deeper than {MAX_DEPTH}"),  # no RecursionError
    ({"role": "user"}, "needs content"),
    ({"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "n"}]}, "input must be an object"),
])
def test_messages_the_store_cannot_hold_are_refused(message, words):
    with pytest.raises(ValueError, match=words):
        validate(message)


def test_contained_turns_a_panic_into_an_internal_error_and_lets_exits_through():
    def panic():
        raise Panic("boom")

    with pytest.raises(InternalError, match="Panic"):
        contained(panic)
    with pytest.raises(KeyboardInterrupt):
        contained(lambda: (_ for _ in ()).throw(KeyboardInterrupt()))
    assert contained(lambda x: x + 1, 1) == 2


def test_a_panic_in_a_background_job_fails_that_job_and_the_next_one_runs():
    ran = threading.Event()

    def run(spec, job):
        if spec.source_id == "bad":
            raise Panic("called `Option::unwrap()` on a `None` value")
        ran.set()
        return {"source_ids": [spec.source_id]}

    jobs = JobRegistry(run)
    try:
        bad = jobs.submit(JobSpec(tenant="t", kind="text", source_id="bad", size=1))
        good = jobs.submit(JobSpec(tenant="t", kind="text", source_id="good", size=1))
        assert ran.wait(60)
        for _ in range(600):
            if jobs.get(bad.id, "t").status in ("done", "failed") and jobs.get(good.id, "t").status == "done":
                break
            threading.Event().wait(0.05)
        failed = jobs.get(bad.id, "t")
        assert failed.status == "failed" and failed.error["code"] == "internal", failed
        assert jobs.get(good.id, "t").result == {"source_ids": ["good"]}
    finally:
        jobs.close()
