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


def _row(seq: int, created_at: float, stated: bool | None, significant: bool = False) -> dict:
    return {"seq": seq, "created_at": created_at, "stated": stated, "significant": significant}


def test_a_reopened_session_s_timeline_is_the_one_its_appends_left():
    reasons = {2: ("decision",)}
    rows = [_row(0, MAY_2023, True), _row(1, MAY_2023 + 60, True), _row(2, NOW, False, True), _row(3, NOW + 1, False)]
    appended, _ = Timeline().replay(0, [(r["created_at"], r["stated"], reasons.get(r["seq"], ())) for r in rows])
    assert Timeline.of_stored(rows, lambda row: reasons.get(row["seq"], ())) == appended
    assert appended.anchor == MAY_2023 + 60 and [u.seq for u in appended.undated] == [2, 3]
    # Undated with no dated message before them, or after a row that does not say (stored before rows did):
    # live, as the appends left them.
    assert Timeline.of_stored(rows[2:], lambda row: ()) == Timeline()
    assert Timeline.of_stored([_row(0, MAY_2023, None), *rows[2:]], lambda row: ()) == Timeline()
    assert Timeline.of_stored([], lambda row: ()) == Timeline()
