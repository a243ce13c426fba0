"""A question's time phrase ranks the turns of its days first, on real stores and embeddings."""

from __future__ import annotations

import pytest

from agent_memory.core.records import TurnRecord
from agent_memory.ingest.pipeline import IngestionPipeline
from agent_memory.retrieval.pipeline import RetrievalPipeline

# The same kind of fact on four days: only the date tells the turns apart.
DAYS = {"s-0301": "2023/03/01 (Wed) 19:00", "s-0322": "2023/03/22 (Wed) 19:00",
        "s-0409": "2023/04/09 (Sun) 19:00", "s-0410": "2023/04/10 (Mon) 19:00"}
DISHES = {"s-0301": "a mushroom risotto", "s-0322": "a lamb curry", "s-0409": "a lentil soup",
          "s-0410": "a vegetable lasagna"}


def _cooked(services, said: str, dishes: dict[str, str], reply: str) -> RetrievalPipeline:
    """A session a day: the user says what they cooked (``said`` with the day's dish), the assistant replies."""
    turns = []
    for session, stamp in DAYS.items():
        turns.append(TurnRecord(session_id=session, turn_id="t0", speaker="user", timestamp=stamp,
                                text=said.format(dish=dishes[session])))
        turns.append(TurnRecord(session_id=session, turn_id="t1", speaker="assistant", timestamp=stamp, text=reply))
    IngestionPipeline(services).ingest_turns(turns)
    return RetrievalPipeline.from_services(services, "conversation")


@pytest.fixture
def pipeline(services):
    with _cooked(services, "I cooked {dish} for my friend Sam tonight.", DISHES,
                 "That sounds lovely, Sam must have enjoyed it.") as pipe:
        yield pipe


def _cooking_turns(result) -> list[str]:
    return [row["source_id"] for row in result.fused if row["source_id"].endswith("/t0")]


def test_a_relative_phrase_counts_from_the_question_date(pipeline):
    result = pipeline.run("What did I cook for my friend Sam a couple of days ago?", tenant="default",
                          budget=400, debug=True, question_date="2023/04/12 (Wed) 09:00")
    # 9 to 11 April: both the soup and the lasagna are in the window; March is not.
    assert set(_cooking_turns(result)[:2]) == {"s-0409/t0", "s-0410/t0"}
    [window] = [d for d in result.decisions if d.stage == "time"]
    assert window.target == "a couple of days ago" and "2023-04-09 to 2023-04-11" in window.reason


def test_a_date_in_the_question_needs_no_question_date(pipeline):
    result = pipeline.run("What did I cook for my friend Sam on 22 March, 2023?", tenant="default",
                          budget=400, debug=True)
    assert _cooking_turns(result)[0] == "s-0322/t0"


def test_without_a_time_phrase_no_window_is_applied(pipeline):
    result = pipeline.run("What did I cook for my friend Sam?", tenant="default", budget=400, debug=True,
                          question_date="2023/04/12 (Wed) 09:00")
    assert not [d for d in result.decisions if d.stage == "time"]
    assert len(_cooking_turns(result)) == 4


def test_the_window_can_be_switched_off(services, pipeline):
    from agent_memory.retrieval.config import load_preset

    with RetrievalPipeline(services, load_preset("conversation", time_signal=0.0)) as plain:
        result = plain.run("What did I cook for my friend Sam on 22 March, 2023?", tenant="default",
                           budget=400, debug=True)
    assert not [d for d in result.decisions if d.stage == "time"]


ZH_DISHES = {"s-0301": "蘑菇烩饭", "s-0322": "咖喱羊肉", "s-0409": "扁豆汤", "s-0410": "蔬菜千层面"}


@pytest.fixture
def chinese_pipeline(services):
    with _cooked(services, "今晚给朋友小王做了{dish}。", ZH_DISHES, "听起来不错，小王一定很喜欢。") as pipe:
        yield pipe


@pytest.mark.parametrize("question, first, window", [
    ("我上个月给朋友小王做了什么菜？", {"s-0301/t0", "s-0322/t0"}, "2023-03-01 to 2023-04-07"),
    ("我前天给朋友小王做了什么菜？", {"s-0410/t0"}, "2023-04-10 to 2023-04-10"),
])
def test_a_chinese_time_phrase_ranks_the_turns_of_its_days_first(chinese_pipeline, question, first, window):
    result = chinese_pipeline.run(question, tenant="default", budget=400, debug=True,
                                  question_date="2023/04/12 (Wed) 09:00")
    assert set(_cooking_turns(result)[:len(first)]) == first
    [decision] = [d for d in result.decisions if d.stage == "time"]
    assert window in decision.reason


# Told late: with time_told, a turn that names its own time is dated by it, counted from the day it was said,
# and scores when that time lies within the question's window.
TOLD = {"s-0301": "今晚给朋友小王做了蘑菇烩饭。",      # 1 March: March
        "s-0322": "上个月给朋友小王做了咖喱羊肉。",    # said 22 March: February
        "s-0409": "今晚给朋友小王做了扁豆汤。",        # 9 April: outside March
        "s-0410": "上个月给朋友小王做了蔬菜千层面。"}  # said 10 April: March


@pytest.fixture
def told_late(services):
    turns = [TurnRecord(session_id=session, turn_id="t0", speaker="user", timestamp=stamp, text=TOLD[session])
             for session, stamp in DAYS.items()]
    IngestionPipeline(services).ingest_turns(turns)
    return services


@pytest.mark.parametrize("told, first", [
    (True, {"s-0301/t0", "s-0410/t0"}),   # what happened in March
    (False, {"s-0301/t0", "s-0322/t0"}),  # what was said in March
])
def test_a_turn_is_dated_by_the_time_it_tells_of(told_late, told, first):
    from agent_memory.retrieval.config import load_preset

    with RetrievalPipeline(told_late, load_preset("conversation", time_told=told)) as pipe:
        result = pipe.run("我上个月给朋友小王做了什么菜？", tenant="default", budget=400, debug=True,
                          question_date="2023/04/12 (Wed) 09:00")
    assert set(_cooking_turns(result)[:2]) == first


def test_a_turn_said_in_the_window_about_another_time_gets_its_share_of_the_time_score(told_late):
    """With ``time_said_elsewhere``, a question's time may name when a thing was told: the turn said in March about
    February gains that share of the time signal; the one told of March keeps it whole, the April one gets none."""
    from agent_memory.retrieval.config import load_preset

    def reranked(share: float) -> dict[str, float]:
        config = load_preset("conversation", time_told=True, time_said_elsewhere=share)
        with RetrievalPipeline(told_late, config) as pipe:
            result = pipe.run("我上个月给朋友小王做了什么菜？", tenant="default", budget=400, debug=True,
                              question_date="2023/04/12 (Wed) 09:00")
        return {row["source_id"]: row["rerank"] for row in result.fused}

    without, share = reranked(0.0), reranked(0.5)
    gained = {sid: round(share[sid] - without[sid], 3) for sid in without if sid.endswith("/t0")}
    signal = load_preset("conversation").time_signal
    assert gained == {"s-0301/t0": 0.0, "s-0322/t0": round(0.5 * signal, 3), "s-0409/t0": 0.0, "s-0410/t0": 0.0}
