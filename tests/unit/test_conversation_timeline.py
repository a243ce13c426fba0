"""When an undated message was said: a dated message after it redates it only when the session replays
its history (conversation/timeline.py)."""

from __future__ import annotations

from agent_memory.conversation.timeline import MAX_UNDATED, Timeline

MAY_2023 = 1_683_554_160.0
NOW = 1_790_000_000.0


def test_a_dated_message_after_undated_ones_of_a_history_redates_them():
    timeline, inferred = Timeline().replay(0, [(MAY_2023, True, ()), (NOW, False, ("decision",)),
                                               (NOW + 1, False, ()), (MAY_2023 + 300, True, ())])
    assert inferred == {1: (MAY_2023 + 300, ("decision",)), 2: (MAY_2023 + 300, ())}
    assert timeline == Timeline(MAY_2023 + 300)


def test_live_messages_are_never_redated():
    # No dated message before them: a live session, whatever comes after.
    assert Timeline().replay(0, [(NOW, False, ()), (MAY_2023, True, ())])[1] == {}
    # After an import, a live continuation stays live; history older than the import redates nothing.
    after_import = Timeline(MAY_2023)
    assert after_import.replay(5, [(NOW, False, ()), (NOW + 60, False, ())])[1] == {}
    assert after_import.replay(5, [(NOW, False, ()), (MAY_2023 - 86_400, True, ())])[1] == {}
    # A dated message later than the undated ones (a client clock): they were said before it, unchanged.
    assert after_import.replay(5, [(NOW, False, ()), (NOW + 5, True, ())])[1] == {}


def test_a_long_undated_run_is_a_live_conversation():
    run = [(NOW + n, False, ()) for n in range(MAX_UNDATED + 5)]
    timeline, _ = Timeline(MAY_2023).replay(0, run)
    assert timeline == Timeline()
    assert timeline.replay(len(run), [(MAY_2023 + 60, True, ())])[1] == {}
