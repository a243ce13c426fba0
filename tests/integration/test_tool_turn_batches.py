"""A tool result is archived exactly once, however its messages arrive. A batch holding a result more than
``CALL_WAIT_MESSAGES`` after its call, with another call still awaiting its result when the batch ends, was
archived twice: with its call by the batch's pass (which read the whole batch), and again as a late result
by the next pass (which reads a call's results only ``CALL_WAIT_MESSAGES`` on). Through ``Memory`` and
through the HTTP API."""

from __future__ import annotations

import json
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")

import httpx  # noqa: E402

from agent_memory import Memory  # noqa: E402
from agent_memory.api import create_app  # noqa: E402
from agent_memory.api.testing import serve_in_thread  # noqa: E402
from agent_memory.conversation.tool_turns import CALL_WAIT_MESSAGES  # noqa: E402
from agent_memory.core.records import SearchFilter  # noqa: E402

FAR_RESULT = "checksum mismatch in ledger_7.db, error code 0x51C0DE"


def call(n: int, tool: str) -> dict:
    return {"role": "assistant", "content": f"Step {n}: running {tool}.", "tool_calls": [
        {"id": f"c{n}", "type": "function", "function": {"name": tool, "arguments": json.dumps({"n": n})}}]}


def result(n: int, text: str) -> dict:
    return {"role": "tool", "tool_call_id": f"c{n}", "content": text}


def note(n: int) -> dict:
    return {"role": "user" if n % 2 == 0 else "assistant", "content": f"note {n}"}


def first_batch() -> list[dict]:
    """Call c0 at 1; c1 at 16, still awaiting its result when the batch ends; c0's result at 26 (25 on)."""
    batch = [{"role": "user", "content": "Check the ledger."}, call(0, "verify_ledger")]
    batch += [note(n) for n in range(14)] + [call(1, "run_tests")] + [note(n) for n in range(14, 23)]
    batch.append(result(0, FAR_RESULT))
    assert len(batch) - 2 > CALL_WAIT_MESSAGES  # the result lies past the call's wait
    return batch


LAST = [result(1, "412 passed")]


def archived(memory: Memory, tenant: str) -> dict[str, str]:
    memory.settle()  # the archive runs on a worker thread
    texts: dict[str, list[str]] = {}
    for item in memory.services.vectors.scroll(SearchFilter(tenant=tenant, kinds=["turn"])):
        texts.setdefault(item.source_id, []).append(item.text)
    return {sid: "\n".join(parts) for sid, parts in texts.items()}


def holding(turns: dict[str, str], text: str) -> list[str]:
    return sorted(sid for sid, turn in turns.items() if text in turn)


def test_a_far_result_in_a_batch_is_archived_once_as_when_appended_one_by_one(settings):
    with Memory(settings=settings, tenant="acme") as memory:
        memory.add_messages("batch", first_batch())
        memory.add_messages("batch", LAST)
        for message in first_batch() + LAST:
            memory.add_message("single", message)
        turns = archived(memory, "acme")
    batched = {sid.removeprefix("batch/"): text for sid, text in turns.items() if sid.startswith("batch/")}
    single = {sid.removeprefix("single/"): text for sid, text in turns.items() if sid.startswith("single/")}
    assert holding(batched, "0x51C0DE") == ["m26"]  # a late result: 25 messages after its call
    assert batched["m26"] == f"[tool_result:verify_ledger] {FAR_RESULT}"
    assert holding(batched, "412 passed") == ["m16"]
    assert batched == single


def test_a_far_result_in_a_batch_over_http_is_archived_once(tmp_path):
    from agent_memory.core.config import load_settings

    settings = load_settings(data_dir=tmp_path / "data", triple_extractor="rules", llm_model=None,
                             qdrant_url=None, neo4j_uri=None, postgres_url=None)
    app = create_app(settings, warm=False)
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=120) as http:
        for batch in (first_batch(), LAST):
            answer = http.post("/v1/sessions/loop/messages/batch", json={"messages": [{"message": m} for m in batch]})
            assert answer.status_code == 200, answer.text
        memory = app.state.api.memory
        memory.working_memory.flush()  # archived off the request path; wait for it here
        turns = archived(memory, memory.services.settings.tenant)
        assert holding(turns, "0x51C0DE") == ["loop/m26"]
        assert holding(turns, "412 passed") == ["loop/m16"]
