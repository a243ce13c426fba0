"""English relative time words read as a calendar reads them: days of a week, weekends, units before last, a
count of units ago, and seasons and months named by a year word (the Chinese ones in
tests/unit/test_time_window_chinese.py). Asked on Thursday 25 April 2024; a window is [start, stop)."""

from datetime import datetime

import pytest

from agent_memory.retrieval.config import RetrievalConfig
from agent_memory.retrieval.when import DateSlack, question_window

ASKED = datetime(2024, 4, 25, 10, 0)  # a Thursday
SLACK = DateSlack(RetrievalConfig().time_after_day, RetrievalConfig().time_after_month)
DAY, MONTH = SLACK.day, SLACK.month


def _days(first: datetime, last: datetime, after: int) -> tuple[datetime, datetime]:
    """The window of the days ``first`` to ``last`` and ``after`` days past them."""
    return first, datetime.fromordinal(last.toordinal() + 1 + after)


def _window(question: str, asked: datetime = ASKED) -> tuple[datetime, datetime]:
    window = question_window(question, asked, SLACK)
    assert window is not None, question
    return window.start, window.stop


@pytest.mark.parametrize("question", [
    "What did I do last Friday?", "Where did we eat on Friday last week?", "Who came on Friday of last week?",
    "What happened last week on Friday?", "What did I do this past Friday?",
])
def test_last_friday_is_the_friday_of_last_week(question):
    assert _window(question) == _days(datetime(2024, 4, 19), datetime(2024, 4, 19), DAY)


@pytest.mark.parametrize("question, asked, day", [
    # "last Monday" is last week's, as 上周一 is, though this week's Monday is over too ...
    ("What did I cook last Monday?", ASKED, datetime(2024, 4, 15)),
    # ... and "this past Monday" is the latest one before the day asked.
    ("What did I cook this past Monday?", ASKED, datetime(2024, 4, 22)),
    ("What did I cook this past Monday?", datetime(2024, 4, 22, 9), datetime(2024, 4, 15)),  # asked on a Monday
    ("Who called the Friday before last?", ASKED, datetime(2024, 4, 12)),
    ("What did I do last Sunday?", datetime(2024, 4, 28, 9), datetime(2024, 4, 21)),  # asked on a Sunday
])
def test_a_weekday_is_the_one_of_the_week_its_words_name(question, asked, day):
    assert _window(question, asked) == _days(day, day, DAY)


@pytest.mark.parametrize("question, asked, saturday", [
    ("Where did we go last weekend?", ASKED, datetime(2024, 4, 20)),
    ("Where did we go this past weekend?", ASKED, datetime(2024, 4, 20)),
    ("Where did we go last weekend?", datetime(2024, 4, 28, 9), datetime(2024, 4, 20)),  # asked on a Sunday
    ("Where did we go this past weekend?", datetime(2024, 4, 28, 9), datetime(2024, 4, 27)),  # the one under way
    ("Who is coming this weekend?", ASKED, datetime(2024, 4, 27)),
])
def test_a_weekend_is_a_saturday_and_sunday(question, asked, saturday):
    assert _window(question, asked) == _days(saturday, datetime.fromordinal(saturday.toordinal() + 1), DAY)


@pytest.mark.parametrize("question, first, last, after", [
    ("What did I buy the week before last?", datetime(2024, 4, 8), datetime(2024, 4, 14), DAY),
    ("What did I buy two weeks ago?", datetime(2024, 4, 8), datetime(2024, 4, 14), DAY),
    ("What did I buy a week ago?", datetime(2024, 4, 15), datetime(2024, 4, 21), DAY),
    ("Where did I go the previous week?", datetime(2024, 4, 15), datetime(2024, 4, 21), DAY),
    ("Where did I go the previous month?", datetime(2024, 3, 1), datetime(2024, 3, 31), MONTH),
    ("Where did I go last month?", datetime(2024, 3, 1), datetime(2024, 3, 31), MONTH),
    ("Where did I go the month before last?", datetime(2024, 2, 1), datetime(2024, 2, 29), MONTH),
    ("Where did I go two months ago?", datetime(2024, 2, 1), datetime(2024, 2, 29), MONTH),
    ("Where did I go five months ago?", datetime(2023, 11, 1), datetime(2023, 11, 30), MONTH),
    ("What did I do the year before last?", datetime(2022, 1, 1), datetime(2022, 12, 31), MONTH),
    ("What did I do two years ago?", datetime(2022, 1, 1), datetime(2022, 12, 31), MONTH),
    ("What did I do the previous year?", datetime(2023, 1, 1), datetime(2023, 12, 31), MONTH),
])
def test_units_back_are_calendar_units(question, first, last, after):
    assert _window(question) == _days(first, last, after)


@pytest.mark.parametrize("question, day", [
    ("What did I eat yesterday?", datetime(2024, 4, 24)),
    ("What did I eat the day before yesterday?", datetime(2024, 4, 23)),  # raised KeyError
    ("What did I eat day before yesterday?", datetime(2024, 4, 23)),      # was read as yesterday
    ("What did I eat two days ago?", datetime(2024, 4, 23)),
    ("What did I eat 3 days ago?", datetime(2024, 4, 22)),
])
def test_a_day_counted_back_is_that_one_day(question, day):
    assert _window(question) == _days(day, day, 0)


@pytest.mark.parametrize("question, first, stop", [
    # A vague count is a point with a margin of a third of its distance, as before.
    ("What did I buy a couple of weeks ago?", datetime(2024, 4, 6), datetime(2024, 4, 17)),
    ("What did I eat a few days ago?", datetime(2024, 4, 21), datetime(2024, 4, 24)),
    # Spans run to the end of the day asked: "in the last week" is the seven days, "earlier this week" the
    # week so far.
    ("What did I buy in the last week?", datetime(2024, 4, 18), datetime(2024, 4, 26)),
    ("What did I buy over the previous three months?", datetime(2024, 1, 26), datetime(2024, 4, 26)),
    ("What did I buy earlier this week?", datetime(2024, 4, 22), datetime(2024, 4, 26)),
])
def test_vague_counts_and_spans_keep_their_reading(question, first, stop):
    assert _window(question) == (first, stop)


@pytest.mark.parametrize("question, first, last", [
    ("Where did we go in the spring of last year?", datetime(2023, 3, 1), datetime(2023, 5, 31)),
    ("Where did we go during the summer last year?", datetime(2023, 6, 1), datetime(2023, 8, 31)),
    ("Where did we go last summer?", datetime(2023, 6, 1), datetime(2023, 8, 31)),
    ("Where did we ski this past winter?", datetime(2023, 12, 1), datetime(2024, 2, 29)),
    ("Where did we ski last winter?", datetime(2023, 12, 1), datetime(2024, 2, 29)),
    ("Where is the trip next March?", datetime(2025, 3, 1), datetime(2025, 3, 31)),
    ("Where is the trip in March next year?", datetime(2025, 3, 1), datetime(2025, 3, 31)),
    ("Where did we go last March?", datetime(2024, 3, 1), datetime(2024, 3, 31)),   # over by late April
    ("Where did we go last April?", datetime(2023, 4, 1), datetime(2023, 4, 30)),   # April 2024 is not over
    ("Where is the trip next May?", datetime(2024, 5, 1), datetime(2024, 5, 31)),
    ("What did we plan for this year's autumn?", datetime(2024, 9, 1), datetime(2024, 11, 30)),
    ("Where did we go in the fall of last year?", datetime(2023, 9, 1), datetime(2023, 11, 30)),
    ("Where is the party in May next year?", datetime(2025, 5, 1), datetime(2025, 5, 31)),
])
def test_a_season_or_month_named_by_a_year_word_is_that_one(question, first, last):
    assert _window(question) == _days(first, last, MONTH)


@pytest.mark.parametrize("question", [
    "What did I do on Friday?",            # may be ahead: not read
    "Who won the last march of the season?",
    "What is the last weekday train?",
    "Will prices fall next year?",            # a verb, not the season ("the fall of next year" is one)
    "What it may next year cost is unclear.",  # a verb, not the month
])
def test_weekday_and_month_words_that_name_no_window(question):
    assert question_window(question, ASKED, SLACK) is None


def test_relative_phrases_need_the_day_asked():
    for question in ["What did I do last Friday?", "the week before last", "next March", "last weekend"]:
        assert question_window(question, None, SLACK) is None, question


def test_a_turn_that_names_these_times_tells_their_window():
    """told_window passes over texts without a time word by substring tests: each phrase read here gets past them."""
    from agent_memory.retrieval.when import told_window

    said = datetime(2024, 4, 23, 19, 0)
    for phrase in ["last Friday", "on Friday last week", "this past Monday", "the Friday before last", "last weekend",
                   "the week before last", "the previous month", "two weeks ago", "the day before yesterday",
                   "the spring of last year", "summer last year", "next March", "last March", "this Easter",
                   "over Easter this year"]:
        text = f"We met {phrase}, remember?"
        expected = question_window(text, said, DateSlack(0, 0))
        assert expected is not None and told_window(text, said) == expected, phrase


@pytest.mark.parametrize("question, asked, sunday", [
    ("What did we do this Easter?", ASKED, datetime(2024, 3, 31)),
    ("Who visited over Easter this year?", ASKED, datetime(2024, 3, 31)),
    ("Where were we last Easter?", ASKED, datetime(2024, 3, 31)),         # over by late April
    ("Where were we last Easter?", datetime(2024, 3, 20), datetime(2023, 4, 9)),  # 2024's not begun yet
    ("What did we do this past Easter?", ASKED, datetime(2024, 3, 31)),
    ("Where will we be next Easter?", ASKED, datetime(2025, 4, 20)),
    ("Where will we be next Easter?", datetime(2024, 3, 20), datetime(2024, 3, 31)),
    ("What did we cook at Easter last year?", ASKED, datetime(2023, 4, 9)),
    ("What happened at Easter 2019?", ASKED, datetime(2019, 4, 21)),
    ("What happened at Easter of 2019?", None, datetime(2019, 4, 21)),    # a year named: no day asked needed
])
def test_easter_is_its_long_weekend_of_the_year_its_words_name(question, asked, sunday):
    window = question_window(question, asked, SLACK)
    assert window is not None and (window.start, window.stop) == _days(
        datetime.fromordinal(sunday.toordinal() - 2), datetime.fromordinal(sunday.toordinal() + 1), DAY)


@pytest.mark.parametrize("question", ["When was Easter Island settled?", "Who led the Easter Rising?",
                                      "What do we eat at Easter?"])
def test_easter_that_names_no_year_or_the_island_is_no_window(question):
    assert question_window(question, ASKED, SLACK) is None
