"""The Python API takes the session IDs the HTTP API and MCP take (core/names.py), checked on the session ID
itself, never on the ``<tenant>/<session>`` key: 'team/alpha' (archived as team/alpha/m0, then out of reach
of HTTP and MCP) and an int (silently session '7') are refused, naming the value and the rule."""

from __future__ import annotations

import pytest

from agent_memory import Memory

MESSAGE = {"role": "user", "content": "Alpha team standup is at 9:15."}


@pytest.fixture()
def memory(tmp_path):
    with Memory(data_dir=tmp_path, tenant="acme") as mem:
        yield mem


@pytest.mark.parametrize(("session_id", "problem"), [("team/alpha", "holds '/'"), ("", "is blank"), ("  ", "is blank"),
                                                     ("a\nb", "holds a control character"),
                                                     ("x" * 257, "has 257 characters")])
def test_a_session_id_http_refuses_is_refused_by_every_session_call(memory, session_id, problem):
    calls = [lambda: memory.add_message(session_id, MESSAGE), lambda: memory.add_messages(session_id, [MESSAGE]),
             lambda: memory.check_messages(session_id, [MESSAGE]), lambda: memory.view(session_id),
             lambda: memory.session(session_id), lambda: memory.session_exists(session_id),
             lambda: memory.session_configured(session_id), lambda: memory.delete_session(session_id),
             lambda: memory.prompt("standup?", budget=200, session_id=session_id)]
    for call in calls:
        with pytest.raises(ValueError, match="session IDs are non-blank strings of at most 256 characters") as refused:
            call()
        assert problem in str(refused.value) and repr(session_id[:80]) in str(refused.value)
    assert memory.sessions() == [] and memory.tenants() == []


@pytest.mark.parametrize("session_id", [7, None, b"s1", ("s",)])
def test_a_session_id_that_is_no_str_is_a_type_error(memory, session_id):
    with pytest.raises(TypeError, match="session_id must be a str such as 'chat-1', got"):
        memory.add_message(session_id, MESSAGE)
    with pytest.raises(TypeError, match="session_id must be a str"):
        memory.prompt("standup?", budget=200, session_id=session_id) if session_id is not None else memory.view(None)
    assert memory.sessions() == []


def test_a_session_stored_before_the_rule_stays_viewable_and_deletable(memory):
    # Appended as a version that checked the combined key did (below the surface's checks).
    memory.working_memory.session("acme", "team/alpha").append(MESSAGE, retention="strict")
    assert memory.session_exists("team/alpha")
    assert [m["content"] for m in memory.view("team/alpha", 500)][-1] == MESSAGE["content"]
    removed = memory.delete_session("team/alpha", forget_archived=True)
    assert removed["messages"] == 1 and removed["sources"] == 1
    with pytest.raises(ValueError, match="holds '/'"):  # gone: the rule holds again
        memory.view("team/alpha")
    assert memory.add_message("team-alpha", MESSAGE) == 0 and memory.add_message(" s 1 ", MESSAGE) == 0


def test_a_10000_character_session_id_is_named_by_its_first_80_characters_at_every_layer(memory):
    long = "x" * 10_000
    with pytest.raises(ValueError, match="has 10000 characters") as refused:
        memory.add_message(long, MESSAGE)
    assert repr("x" * 80) + "..." in str(refused.value) and "x" * 81 not in str(refused.value)
    # Below Memory (the session manager takes a key it never built from a checked ID): the same rule's words.
    for session_id in (long + "\x00", "acme/" + long + "\n", " " * 10_000):
        with pytest.raises(ValueError, match="session IDs are non-blank strings") as refused:
            memory.working_memory.sessions.session(session_id)
        assert len(str(refused.value)) < 300, str(refused.value)
    assert memory.sessions() == []
