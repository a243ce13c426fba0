"""A time to live for session messages (``ttl_days`` ``"session"``, conversation/expiry.py): the oldest messages
leave, never the instructions, the pending turn, half a tool pair, part of a summary's span or what the archive
has not read; the view says what went, and numbering goes on past it."""

from __future__ import annotations

import pytest

from agent_memory.conversation import CompactionConfig, SessionManager
from agent_memory.conversation.scheduler import earlier_note
from agent_memory.core.tokens import TiktokenCounter

COUNTER = TiktokenCounter("cl100k_base")
OLD = 1_700_000_000.0  # every message below is said at OLD + n seconds unless said now
BEFORE = OLD + 10_000  # the time to live ends here: what was said before it may go
CALL = {"role": "assistant", "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "grep", "arguments": "{}"}}]}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": "found 3"}


@pytest.fixture()
def manager(tmp_path):
    mgr = SessionManager(tmp_path, COUNTER, synchronous="OFF")
    yield mgr
    mgr.close()


def said(session, *messages, now: bool = False) -> None:
    for message in messages:
        stamp = {} if now else {"timestamp": OLD + session.next_seq}
        session.append({**message, **stamp})


def archived(manager, session) -> None:
    manager.store.mark_archived(session.key, session.next_seq - 1)


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def answer(text: str) -> dict:
    return {"role": "assistant", "content": text}


def kept(manager, session) -> list[int]:
    return [row["seq"] for row in manager.store.load_messages(session.key)]


def test_the_pending_user_turn_stays_however_old(manager):
    session = manager.session("acme/s")
    said(session, user("Ship 40 units."), answer("Noted."), user("From Lyon?"))
    archived(manager, session)
    assert manager.expire(BEFORE, 30) == 2 and kept(manager, session) == [2]
    said(session, answer("Yes, Lyon."))  # answered: the whole exchange may go
    archived(manager, session)
    assert manager.expire(BEFORE, 30) == 2 and kept(manager, session) == []


def test_a_tool_call_stays_while_its_result_does(manager):
    session = manager.session("acme/s")
    said(session, user("Find it."), CALL)
    said(session, RESULT, answer("Found 3."), now=True)
    archived(manager, session)
    assert manager.expire(BEFORE, 30) == 1 and kept(manager, session) == [1, 2, 3]


def test_what_the_archive_has_not_read_stays(manager):
    session = manager.session("acme/s")
    said(session, user("a"), answer("b"), user("c"), answer("d"))
    manager.store.mark_archived(session.key, 1)
    assert manager.expire(BEFORE, 30) == 2 and kept(manager, session) == [2, 3]


def test_a_summary_stays_with_its_newest_message_and_so_do_the_messages_it_covers(manager):
    session = manager.session("acme/s", config=CompactionConfig(window_tokens=None))
    said(session, user("Pump P-7 moves 40 litres."), answer("Noted."))
    said(session, user("Valve V-2 closes at 6 bar."), answer("Noted."), user("Which pump?"), answer("P-7."),
         now=True)
    archived(manager, session)
    session.compact(force=True)  # one summary over m0-m3: two old messages, two new ones
    assert [(s["first_seq"], s["last_seq"]) for s in session.summaries()] == [(0, 3)]
    assert manager.expire(BEFORE, 30) == 0 and kept(manager, session) == [0, 1, 2, 3, 4, 5]


def test_removals_fold_into_one_marker_and_numbering_goes_on_past_them(manager):
    session = manager.session("acme/s")
    said(session, {"role": "system", "content": "Be brief."}, user("one"), answer("two"))
    archived(manager, session)
    assert manager.expire(BEFORE, 30) == 2
    said(session, user("three"), answer("four"))
    archived(manager, session)
    assert manager.expire(BEFORE, 7) == 2 and kept(manager, session) == [0]
    [marker] = session.markers()
    assert marker["text"].startswith("[Removed m1-m4 (time to live: said more than 7 days ago): 4 messages")
    view = session.view(1_000)
    assert [m["content"] for m in view][0] == "Be brief." and "[Removed m1-m4" in view[1]["content"]
    assert session.append(user("five")) == 5


def test_a_session_emptied_by_the_time_to_live_numbers_on_after_reopening(tmp_path):
    first = SessionManager(tmp_path, COUNTER, synchronous="OFF")
    session = first.session("acme/s")
    said(session, user("one"), answer("two"))
    archived(first, session)
    assert first.expire(BEFORE, 30) == 2
    first.close()
    second = SessionManager(tmp_path, COUNTER, synchronous="OFF")
    try:  # past the archive watermark: a new message is archived, never taken for one archived before
        assert second.session("acme/s").append(user("three")) == 2
    finally:
        second.close()


def test_a_folded_removal_marker_does_not_say_its_messages_are_kept():
    removal = {"first_seq": 0, "last_seq": 9, "method": "marker",
               "validation": {"messages": 10, "tokens": 200, "tools": {}, "removed": True}}
    drop = {"first_seq": 10, "last_seq": 12, "method": "marker", "validation": {"messages": 3, "tokens": 50}}
    alone = earlier_note([removal])
    assert "removed by the time to live: 10 messages, 200 tokens" in alone and "stays" not in alone
    both = earlier_note([removal, drop])
    assert "dropped 3 messages" in both and "stays in the session history" in both and "removed by" in both
