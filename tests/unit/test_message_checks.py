"""Messages a model provider would refuse never enter a session: content on every role (an assistant's
may be tool calls instead), only the keys its role can carry, one result per tool call (also after a
restart), and no blank session ID (archived turns would be ``/m0``)."""

from __future__ import annotations

import pytest

from agent_memory.conversation import SessionManager
from agent_memory.conversation.message_validation import validate
from agent_memory.core.tokens import TiktokenCounter

COUNTER = TiktokenCounter("cl100k_base")
CALL = {"role": "assistant", "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": "r"}


@pytest.fixture()
def manager(tmp_path):
    mgr = SessionManager(tmp_path, COUNTER, synchronous="OFF")
    yield mgr
    mgr.close()


@pytest.mark.parametrize("message, words", [
    ({"role": "user", "content": None}, "a user message needs content .*got None"),
    ({"role": "user"}, "a user message needs content .*got None"),
    ({"role": "system", "content": None}, "a system message needs content"),
    ({"role": "tool", "tool_call_id": "c1"}, "a tool message needs content"),
    ({"role": "assistant"}, "an assistant message needs content or tool_calls, got content None"),
    ({"role": "assistant", "content": None, "tool_calls": []}, "needs content or tool_calls"),
    ({"role": "user", "content": "x", "extra_field": {"a": 1}}, r"\['extra_field'\] that user messages cannot"),
    ({"role": "user", "content": "x", "tool_calls": []}, r"\['tool_calls'\] that user messages cannot"),
    ({"role": "user", "content": "x", "tool_call_id": "c1"}, r"\['tool_call_id'\] that user messages"),
    ({"role": "assistant", "content": "x", "id": "m-1"}, r"\['id'\] that assistant messages cannot"),
    ({"role": "assistant", "content": "x", "refusal": 3}, "message.refusal must be a string, got 3"),
])
def test_messages_a_provider_would_refuse_are_refused_naming_the_value(message, words):
    with pytest.raises(ValueError, match=words):
        validate(message)


@pytest.mark.parametrize("message", [
    {"role": "user", "content": ""},
    {"role": "user", "content": [{"type": "text", "text": "hi"}, "plain part"], "name": "ana",
     "timestamp": "2024-05-01T10:00:00Z"},
    {"role": "system", "content": "Be brief."},
    {"role": "developer", "content": [{"type": "text", "text": "Be brief."}]},
    {"role": "assistant", "content": "hello", "name": "bot"},
    {"role": "assistant", "content": "", "refusal": "I can't help with that."},
    CALL,
    {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "n", "input": {}}]},
    {**RESULT, "name": "f"},  # LangChain's ToolMessage carries the tool's name
])
def test_the_forms_providers_accept_still_pass(message):
    assert validate(message) is message


def test_a_second_result_for_one_call_is_refused_and_the_view_keeps_one(manager):
    session = manager.session("s")
    session.append(CALL)
    session.append(RESULT)
    with pytest.raises(ValueError, match=r"tool call id\(s\) \['c1'\] that already have their result"):
        session.append({**RESULT, "content": "again"})
    assert [m for m in session.view(4000) if m["role"] == "tool"] == [RESULT]


def test_one_message_answering_a_call_twice_is_refused(manager):
    session = manager.session("s")
    session.append({"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "n", "input": {}}]})
    twice = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a"},
                                         {"type": "tool_result", "tool_use_id": "t1", "content": "b"}]}
    with pytest.raises(ValueError, match=r"\['t1'\].*answers one twice"):
        session.append(twice)
    assert len(session.messages()) == 1


def test_a_call_id_issued_again_takes_one_more_result(manager):
    session = manager.session("s")
    for _ in range(2):  # some models number their calls per turn: c1 again is a new call
        session.append(CALL)
        session.append(RESULT)
    with pytest.raises(ValueError, match="repeated tool result"):
        session.append(RESULT)


def test_the_second_result_is_refused_after_compaction_and_a_restart(tmp_path):
    first = SessionManager(tmp_path, COUNTER, synchronous="OFF")
    session = first.session("s")
    session.append({"role": "user", "content": "Run f."})
    session.append(CALL)
    session.append(RESULT)
    session.append({"role": "user", "content": "Thanks."})
    session.compact(force=True)
    assert all(m["role"] != "tool" for m in session.view(4000))  # the call and its result are summarized
    first.close()
    second = SessionManager(tmp_path, COUNTER, synchronous="OFF")
    try:
        reloaded = second.session("s")
        with pytest.raises(ValueError, match=r"\['c1'\].*repeated tool result"):
            reloaded.append(RESULT)
        with pytest.raises(ValueError, match="orphan"):  # the orphan check is unchanged
            reloaded.append({**RESULT, "tool_call_id": "never"})
        assert len(reloaded.messages()) == 4
    finally:
        second.close()


@pytest.mark.parametrize("session_id, shown", [
    (" ", "' '"), ("\t", r"'\\t'"), ("tenant/", "''"), ("tenant/  ", "'  '"),
])
def test_a_blank_session_id_is_refused(manager, session_id, shown):
    with pytest.raises(ValueError, match=f"session IDs are non-blank strings.*; got {shown} \\(is blank\\)"):
        manager.session(session_id)


@pytest.mark.parametrize("session_id", ["a\x00b", "tenant/line\nbreak", "tenant/del\x7f"])
def test_a_session_id_with_a_control_character_is_refused_naming_it(manager, session_id):
    with pytest.raises(ValueError, match=r"without '/' or control characters; got .* \(holds a control character"):
        manager.session(session_id)


def test_ordinary_session_ids_still_work(manager):
    for session_id in ("s1", "tenant/s1", "tenant/a/b", " padded "):
        assert manager.session(session_id).append({"role": "user", "content": "hi"}) == 0
