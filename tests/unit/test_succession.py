"""What holds now and what came before a named event (agent_memory/retrieval/succession.py): which questions
ask either, and how the bonuses re-order a reranked list."""

from __future__ import annotations

from agent_memory.core.records import MemoryItem
from agent_memory.retrieval.succession import anchor_phrase, asks_now, order_in_time, terms_question, without_anchor
from agent_memory.retrieval.time_windows import DateSlack
from agent_memory.retrieval.types import Candidate, Decision
from agent_memory.retrieval.when import parse_stamp, question_window

SLACK = DateSlack(3, 7)
ASKED = "2024/04/07 (Sun) 10:00"


def turn(source_id: str, text: str, stamp: str | None, score: float, speaker: str = "Lin") -> Candidate:
    metadata = {"speaker": speaker, **({"timestamp": stamp} if stamp else {})}
    item = MemoryItem(id=source_id, tenant="t", source_id=source_id, kind="turn", text=text, metadata=metadata)
    return Candidate(item=item, rerank=score, final=score)


def manager_turns() -> list[Candidate]:
    """Reranked best first: the oldest statement ranks first by its words, the newest fourth."""
    return [
        turn("s/D14:7", "I report to Daniel Alessandrini now.", "2023-09-07T10:00:00", 10.0),
        turn("s/D19:1", "Marion Lindberg took over as my boss today.", "2023-10-31T10:00:00", 8.5),
        turn("s/D24:7", "Damien Reiss's new manager is Bob Yilmaz.", "2023-12-12T10:00:00", 8.0),
        turn("s/D29:9", "My new manager is Fazle Newcombe.", "2024-01-18T10:00:00", 7.5),
        turn("s/D2:1", "Went to Chiswick with Molly at the weekend.", None, 7.0),
    ]


def calendar(question: str) -> bool:
    """Whether the question names a window the calendar reads, as the pipeline reads it (asked on ``ASKED``)."""
    return question_window(question, parse_stamp(ASKED), SLACK) is not None


def ids(candidates: list[Candidate]) -> list[str]:
    return [c.item.source_id for c in candidates]


def test_which_questions_ask_about_the_present():
    assert asks_now("Who do I report to these days?") == "these days"
    assert asks_now("Where do I work now?") == "now"
    assert asks_now("Who is my current employer?") == "current"
    assert asks_now("我现在住在哪里？") == "现在"
    # "Recently" asks about some time before, not about what holds now; a known word inside another is none.
    assert asks_now("What did Melanie paint recently?") is None
    # 最近 ("lately") asks about what holds, unless 了 or 过 marks a finished event.
    assert asks_now("我最近用哪款手机？") == "最近"
    assert asks_now("她最近一次出去玩去了哪座城市？") is None
    assert asks_now("你最近看过什么电影？") is None
    assert asks_now("Did she mention the currents at the beach?") is None


def test_the_anchor_of_a_before_question():
    assert anchor_phrase("Who was my manager before Fazle Newcombe?") == "Fazle Newcombe"
    assert anchor_phrase("Which city was John in prior to traveling to Chicago?") == "traveling to Chicago"
    assert anchor_phrase("我搬到南宁之前住在哪里？") == "我搬到南宁"
    assert anchor_phrase("What did Melanie do after the road trip?") is None


def test_a_question_about_the_present_puts_the_newest_statement_first():
    decisions: list[Decision] = []
    question = "Who do I report to these days?"
    ranked = order_in_time(question, manager_turns(), present_recency=4.0, before_anchor=0.0, anchor_coverage=0.5,
                           top=20, calendar_window=calendar(question), decisions=decisions)
    # Up to 4 by time from September (0) to January (4): the newest first, the undated last.
    assert ids(ranked) == ["s/D29:9", "s/D24:7", "s/D19:1", "s/D14:7", "s/D2:1"]
    finals = {c.item.source_id: round(c.final, 2) for c in ranked}
    assert finals["s/D14:7"] == 10.0 and finals["s/D29:9"] == 11.5 and finals["s/D2:1"] == 7.0
    assert [d.action for d in decisions] == ["newest"]


def test_before_a_named_event_lifts_the_event_and_what_was_said_before_it():
    decisions: list[Decision] = []
    later = turn("s/D33:1", "Went bowling with the team after work.", "2024-02-20T10:00:00", 9.0)
    turns = manager_turns()
    question = "Who was my manager before Fazle Newcombe?"
    ranked = order_in_time(question, [turns[0], later, *turns[1:]], present_recency=4.0, before_anchor=4.0,
                           anchor_coverage=0.5, top=20, calendar_window=calendar(question), decisions=decisions)
    # The anchor is January's "My new manager is Fazle Newcombe": it and all said before it gain 4, what was said
    # after it and the undated nothing; the present bonus is not added ("before" wins).
    assert ids(ranked) == ["s/D14:7", "s/D19:1", "s/D24:7", "s/D29:9", "s/D33:1", "s/D2:1"]
    finals = {c.item.source_id: c.final for c in ranked}
    assert finals == {"s/D14:7": 14.0, "s/D19:1": 12.5, "s/D24:7": 12.0, "s/D29:9": 11.5, "s/D33:1": 9.0,
                      "s/D2:1": 7.0}
    assert decisions[0].action == "before" and "s/D29:9" in decisions[0].reason


def test_no_bonus_without_an_anchor_or_with_a_window_of_the_calendar():
    for question in ("Who was my manager before Kim Wexler?",  # nobody holds the anchor
                     "Where did I work in March 2023, and who do I report to now?",  # the calendar's window
                     "Who was my manager before March 2023?",
                     "Which team did I support as a child?"):  # neither
        turns = manager_turns()
        ranked = order_in_time(question, turns, present_recency=4.0, before_anchor=4.0, anchor_coverage=0.5,
                               top=20, calendar_window=calendar(question), decisions=[])
        assert ids(ranked) == ids(manager_turns()), question
        assert [c.final for c in ranked] == [c.rerank for c in ranked], question


def test_the_assistants_turns_get_no_bonus_of_time():
    # The assistant's acknowledgement of January's statement ranks above it by its neighbour's share; it is
    # not what holds, the user's statement is. Under either label of the role.
    for label in ("Assistant", "助手"):
        noted = turn("s/D29:10", "Okay, noted.", "2024-01-18T10:00:00", 9.0, speaker=label)
        question = "Who do I report to these days?"
        ranked = order_in_time(question, [*manager_turns(), noted], present_recency=4.0, before_anchor=0.0,
                               anchor_coverage=0.5, top=20, calendar_window=calendar(question), decisions=[])
        assert ids(ranked)[:2] == ["s/D29:9", "s/D24:7"], label
        assert {c.item.source_id: c.final for c in ranked}["s/D29:10"] == 9.0, label
        assert "succession" not in noted.route_scores, label
    # Nor for "before": the acknowledgement of September's statement stays where its score put it.
    noted = turn("s/D14:8", "Got it, I'll remember that.", "2023-09-07T10:00:00", 9.6, speaker="Assistant")
    question = "Who was my manager before Fazle Newcombe?"
    ranked = order_in_time(question, [*manager_turns(), noted], present_recency=4.0, before_anchor=4.0,
                           anchor_coverage=0.5, top=20, calendar_window=calendar(question), decisions=[])
    assert ids(ranked)[:4] == ["s/D14:7", "s/D19:1", "s/D24:7", "s/D29:9"]
    assert {c.item.source_id: c.final for c in ranked}["s/D14:8"] == 9.6


def test_off_by_default_weights_change_nothing():
    ranked = order_in_time("Who do I report to these days?", manager_turns(), present_recency=0.0,
                           before_anchor=0.0, anchor_coverage=0.5, top=20, calendar_window=False, decisions=[])
    assert ids(ranked) == ids(manager_turns())


def test_only_the_best_candidates_are_reordered():
    decisions: list[Decision] = []
    ranked = order_in_time("Who do I report to these days?", manager_turns(), present_recency=4.0,
                           before_anchor=0.0, anchor_coverage=0.5, top=2, calendar_window=False, decisions=decisions)
    # The first two are September's and October's: October's (the newer of the two) gains 4 and leads; January's
    # statement, fourth by its words, is not brought up.
    assert ids(ranked) == ["s/D19:1", "s/D14:7", "s/D24:7", "s/D29:9", "s/D2:1"]
    assert {c.item.source_id: c.final for c in ranked}["s/D29:9"] == 7.5
    assert "the 2 dated of the best candidates" in decisions[0].reason


def test_a_before_question_reads_its_event_as_a_time_where_memory_is_dated():
    decisions: list[Decision] = []
    question = "Who was my manager before Fazle Newcombe?"
    assert without_anchor(question).split() == ["Who", "was", "my", "manager"]
    assert without_anchor("我搬到南宁之前住在哪里？").strip() == "住在哪里？"
    assert terms_question(question, manager_turns(), before_anchor=4.0, calendar_window=calendar(question),
                          decisions=decisions).split() == ["Who", "was", "my", "manager"]
    assert [(d.target, d.action) for d in decisions] == [("Fazle Newcombe", "not a term")]
    # Undated memory (documents): X is what the question asks about. No "before", a window of the calendar, or the
    # stage off: the question as it is.
    undated = [turn("doc#0", "Donna Tartt was born in 1963.", None, 1.0)]
    assert terms_question("Which books came out before Donna Tartt was born?", undated, before_anchor=4.0,
                          calendar_window=False, decisions=[]) is None
    for asked, weight in (("Who do I report to these days?", 4.0), ("Who was my manager before March 2023?", 4.0),
                          (question, 0.0)):
        assert terms_question(asked, manager_turns(), before_anchor=weight, calendar_window=calendar(asked),
                              decisions=[]) is None


def test_before_counts_in_days_so_a_session_reads_alike_however_it_was_stored():
    """A transcript gives a session's turns one time, an agent's appends a time each: an earlier turn of the
    anchor's own day is not "before" it either way."""
    same_day = turn("s/m1", "That's nice, have fun.", "2024-01-18T09:59:00", 9.9)
    ranked = order_in_time("Who was my manager before Fazle Newcombe?", [same_day, *manager_turns()],
                           present_recency=0.0, before_anchor=4.0, anchor_coverage=0.5, top=20, calendar_window=False,
                           decisions=[])
    assert {c.item.source_id: c.final for c in ranked}["s/m1"] == 9.9
