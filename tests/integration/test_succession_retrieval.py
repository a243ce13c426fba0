"""What holds now, and what came before a named event, on real stores and embeddings through the served
default: a user's manager changes three times, each told in other words."""

from __future__ import annotations

import pytest

from agent_memory.core.records import TurnRecord
from agent_memory.ingest.pipeline import IngestionPipeline
from agent_memory.retrieval.config import load_preset
from agent_memory.retrieval.pipeline import RetrievalPipeline

ASKED = "2024/04/07 (Sun) 10:00"
# Told three times in the same words: only the time tells which holds now. After them, a manager of someone else's
# "before" something else, which shares the question's words.
TOLD = [("s-0907", "2023/09/07 (Thu) 19:00", "I report to Daniel Alessandrini now."),
        ("s-1031", "2023/10/31 (Tue) 19:00", "I report to Marion Lindberg now."),
        ("s-0118", "2024/01/18 (Thu) 19:00", "I report to Fazle Newcombe now."),
        ("s-0202", "2024/02/02 (Fri) 19:00", "Went to Chiswick with Molly at the weekend and had some dumplings."),
        ("s-0301", "2024/03/01 (Fri) 19:00", "My sister says her manager before the merger was a nightmare.")]


@pytest.fixture
def pipeline(services):
    turns = []
    for session, stamp, text in TOLD:
        turns.append(TurnRecord(session_id=session, turn_id="t0", speaker="user", timestamp=stamp, text=text))
        turns.append(TurnRecord(session_id=session, turn_id="t1", speaker="assistant", timestamp=stamp,
                                text="Okay, noted."))
    IngestionPipeline(services).ingest_turns(turns)
    with RetrievalPipeline.from_services(services, "default") as pipe:
        yield pipe


def _told(result) -> list[str]:
    return [row["source_id"] for row in result.fused if row["source_id"].endswith("/t0")]


def test_the_present_ranks_the_newest_statement_first(pipeline, services):
    question = "Who do I report to these days?"
    result = pipeline.run(question, tenant="default", budget=400, debug=True, question_date=ASKED)
    assert _told(result)[:3] == ["s-0118/t0", "s-1031/t0", "s-0907/t0"], _told(result)
    [newest] = [d for d in result.decisions if d.stage == "succession"]
    assert newest.action == "newest" and newest.target == "these days"
    with RetrievalPipeline(services, load_preset("default", present_recency=0.0)) as plain:
        without = plain.run(question, tenant="default", budget=400, debug=True, question_date=ASKED)
    assert not [d for d in without.decisions if d.stage == "succession"]
    assert _told(without)[0] != "s-0118/t0"  # by the words alone, any of the three may lead


def test_before_a_named_event_ranks_it_and_what_was_said_before_it(pipeline, services):
    question = "Who was my manager before Fazle Newcombe?"
    result = pipeline.run(question, tenant="default", budget=400, debug=True, question_date=ASKED)
    told = _told(result)
    [not_a_term, before] = [d for d in result.decisions if d.stage == "succession"]
    assert not_a_term.action == "not a term" and not_a_term.target == "Fazle Newcombe"
    assert before.action == "before" and "s-0118/t0" in before.reason
    with RetrievalPipeline(services, load_preset("default", before_anchor=0.0)) as plain:
        without = plain.run(question, tenant="default", budget=400, debug=True, question_date=ASKED)
    # The anchor and the two said before it lead; without the bonus, what was said after it (the sister's manager
    # "before the merger", the weekend) ranks above them.
    assert told[:3] == ["s-0118/t0", "s-1031/t0", "s-0907/t0"], told
    assert _told(without)[-2:] == ["s-1031/t0", "s-0907/t0"], _told(without)


def test_a_calendar_window_is_left_to_the_time_signal(pipeline):
    result = pipeline.run("Who did I report to in October 2023?", tenant="default", budget=400, debug=True,
                          question_date=ASKED)
    assert not [d for d in result.decisions if d.stage == "succession"]
    assert [d for d in result.decisions if d.stage == "time"]
