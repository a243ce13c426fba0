"""A tool result that arrives after other messages: the view keeps the transcript valid for chat APIs
(every result right after the step that issued its call) and the messages in between stay units of
their own, so compaction treats them apart from the tool step."""

from __future__ import annotations

import pytest

from agent_memory.conversation import CompactionConfig, SessionManager
from agent_memory.conversation import messages as msgs
from agent_memory.core.tokens import TiktokenCounter

COUNTER = TiktokenCounter("cl100k_base")


@pytest.fixture()
def manager(tmp_path):
    mgr = SessionManager(tmp_path, COUNTER, synchronous="OFF", config=CompactionConfig(window_tokens=None))
    yield mgr
    mgr.close()


def call(cid: str, name: str = "search", args: str = '{"q": "flights"}') -> dict:
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": cid, "type": "function", "function": {"name": name, "arguments": args}}]}


def result(cid: str, text: str) -> dict:
    return {"role": "tool", "tool_call_id": cid, "content": text}


def assert_chat_valid(view: list[dict]) -> None:
    """What OpenAI and Anthropic require: a message issuing tool calls is followed by the results of all
    of them before any other message (OpenAI: ``tool`` messages; Anthropic: one user message of
    ``tool_result`` blocks), and no result appears anywhere else."""
    n = 0
    while n < len(view):
        calls = set(msgs.call_ids(view[n]))
        n += 1
        if not calls:
            assert not msgs.result_ids(view[n - 1]), f"result without its call right before it: {view[n - 1]}"
            continue
        answered: set[str] = set()
        while n < len(view) and msgs.result_ids(view[n]) and answered != calls:
            answered |= set(msgs.result_ids(view[n]))
            n += 1
        assert answered == calls, f"calls {calls - answered} not answered right after their step in {view}"


def test_late_result_is_shown_right_after_its_call(manager):
    session = manager.session("s")
    session.append({"role": "user", "content": "Find me a flight to Oslo."})
    session.append(call("c1"))
    session.append({"role": "user", "content": "Prefer a morning departure."})
    session.append(result("c1", "SK-4711 departs 07:05, 129 EUR."))
    view = [m for m in session.view(4000) if m["role"] != "system"]  # the key-entities header apart
    assert_chat_valid(view)
    assert [m["role"] for m in view] == ["user", "assistant", "tool", "user"]
    assert view[2]["content"] == "SK-4711 departs 07:05, 129 EUR."
    assert view[3]["content"] == "Prefer a morning departure."  # nothing dropped, only placed after the step
    assert session.messages()[2]["content"] == "Prefer a morning departure."  # the history keeps its order


def test_late_result_in_the_anthropic_format(manager):
    session = manager.session("s")
    session.append({"role": "user", "content": "Weather in Bergen?"})
    session.append({"role": "assistant", "content": [{"type": "text", "text": "Checking."},
                                                     {"type": "tool_use", "id": "tu1", "name": "weather",
                                                      "input": {"city": "Bergen"}}]})
    session.append({"role": "user", "content": "And tomorrow too, please."})
    session.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu1",
                                                 "content": "Rain, 9 C"}]})
    view = session.view(4000)
    assert_chat_valid(view)
    assert msgs.text_of(view[-1]) == "And tomorrow too, please."


def test_parallel_calls_answered_around_a_user_message(manager):
    session = manager.session("s")
    session.append({"role": "user", "content": "Compare two hotels."})
    session.append({"role": "assistant", "content": None, "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "price", "arguments": '{"h": "Alpha"}'}},
        {"id": "b", "type": "function", "function": {"name": "price", "arguments": '{"h": "Beta"}'}}]})
    session.append(result("a", "Alpha: 140 EUR"))
    session.append({"role": "user", "content": "Breakfast must be included."})
    pending = session.view(4000)  # b still open: a note, and the view is valid meanwhile
    assert_chat_valid(pending)
    assert any("[pending tool call: price" in msgs.text_of(m) for m in pending)
    session.append(result("b", "Beta: 120 EUR"))
    view = [m for m in session.view(4000) if m["role"] != "system"]  # the key-entities header apart
    assert_chat_valid(view)
    assert [m["role"] for m in view] == ["user", "assistant", "tool", "tool", "user"]


def test_a_step_issued_after_the_late_one_keeps_its_place(manager):
    session = manager.session("s")
    session.append({"role": "user", "content": "Plan the trip."})
    session.append(call("c1", "flights"))
    session.append({"role": "user", "content": "Also a hotel."})
    session.append(call("c2", "hotels"))
    session.append(result("c2", "Hotel Nord, 98 EUR"))
    session.append(result("c1", "SK-4711, 129 EUR"))
    view = session.view(4000)
    assert_chat_valid(view)
    assert [msgs.text_of(m) or m["role"] for m in view] == [
        "Plan the trip.", "assistant", "SK-4711, 129 EUR", "Also a hotel.", "assistant", "Hotel Nord, 98 EUR"]


def test_messages_between_a_call_and_its_late_result_are_compacted_apart(manager):
    """The strict user message between the call and its late result is kept verbatim while the
    forgettable tool step around it is dropped: they are not one unit."""
    session = manager.session("s")
    session.append({"role": "user", "content": "Look up the depot stock."}, retention="fuzzy")
    session.append(call("c1", "stock", '{"depot": "Lyon"}'), retention="forgettable")
    session.append({"role": "user", "content": "Note: the order number is PO-8841."}, retention="strict")
    session.append(result("c1", "X-300: 412 units\n" * 60), retention="forgettable")
    session.append({"role": "assistant", "content": "Lyon has 412 X-300 units."}, retention="fuzzy")
    session.append({"role": "user", "content": "Ship 40 of them."}, retention="strict")
    session.append({"role": "assistant", "content": "Shipping 40 units."}, retention="fuzzy")
    session.compact(window=session._log.active_tokens * 100 // 80)  # 80% used: the structural level
    view = session.view(4000)
    assert_chat_valid(view)
    texts = [msgs.text_of(m) for m in view]
    assert "Note: the order number is PO-8841." in texts
    assert not any(msgs.call_ids(m) or msgs.result_ids(m) for m in view)  # the forgettable step went ...
    assert any("[Dropped m1-m3: 2 messages (1 tool calls: stock x1)" in t for t in texts)  # ... named


def test_reload_groups_a_late_result_the_same_way(tmp_path):
    config = CompactionConfig(window_tokens=None)
    first = SessionManager(tmp_path, COUNTER, synchronous="OFF", config=config)
    session = first.session("s")
    session.append({"role": "user", "content": "Find me a flight to Oslo."})
    session.append(call("c1"))
    session.append({"role": "user", "content": "Prefer a morning departure."})
    session.append(result("c1", "SK-4711 departs 07:05, 129 EUR."))
    before = session.view(4000)
    first.close()
    second = SessionManager(tmp_path, COUNTER, synchronous="OFF", config=config)
    try:
        assert second.session("s").view(4000) == before
    finally:
        second.close()


def test_the_step_a_late_result_completes_is_the_newest_step(tmp_path):
    """The agent acts on the late result now: it stays whole (no micro-compaction) until a newer message."""
    config = CompactionConfig(window_tokens=None, keep_tool_results=0)
    mgr = SessionManager(tmp_path, COUNTER, synchronous="OFF", config=config)
    try:
        session = mgr.session("s")
        session.append({"role": "user", "content": "Read the log."})
        session.append(call("c1", "read_log"))
        session.append({"role": "user", "content": "Look for timeouts."})
        log_text = "worker 3: timeout after 30 s\n" + "ok\n" * 300
        session.append(result("c1", log_text))
        assert [m["content"] for m in session.view(4000) if m["role"] == "tool"] == [log_text]
        session.append({"role": "assistant", "content": "Worker 3 timed out after 30 s."})
        (shown,) = [m["content"] for m in session.view(4000) if m["role"] == "tool"]
        assert shown.startswith("[truncated: read_log result") and "timeout after 30 s" in shown
    finally:
        mgr.close()


def test_one_message_answering_two_steps_joins_only_those_steps(manager):
    """Anthropic ``tool_result`` blocks for the calls of two assistant messages: the two steps become one
    unit, shown before the user text between them (Anthropic combines consecutive assistant turns)."""
    session = manager.session("s")
    session.append({"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "a", "input": {}}]})
    session.append({"role": "user", "content": "Quick question meanwhile."})
    session.append({"role": "assistant", "content": [{"type": "tool_use", "id": "t2", "name": "b", "input": {}}]})
    session.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "A done"},
                                                {"type": "tool_result", "tool_use_id": "t2", "content": "B done"}]})
    view = [m for m in session.view(4000) if m["role"] != "system"]
    assert [msgs.call_ids(m) or msgs.result_ids(m) or msgs.text_of(m) for m in view] == [
        ["t1"], ["t2"], ["t1", "t2"], "Quick question meanwhile."]
