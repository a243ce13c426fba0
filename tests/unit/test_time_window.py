"""The time window a question names, and the timestamps it is matched against."""

from datetime import datetime

import pytest

from agent_memory.retrieval.config import RetrievalConfig
from agent_memory.retrieval.when import DateSlack, absolute_window, parse_stamp, question_window

ASKED = datetime(2022, 4, 12, 22, 57)
SLACK = DateSlack(RetrievalConfig().time_after_day, RetrievalConfig().time_after_month)


@pytest.mark.parametrize("stamp, expected", [
    ("2023/02/12 (Sun) 14:44", datetime(2023, 2, 12, 14, 44)),
    ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56)),
    ("2024-01-31T09:00:00+00:00", datetime(2024, 1, 31, 9, 0)),
])
def test_timestamps_of_each_transcript_format_parse(stamp, expected):
    assert parse_stamp(stamp) == expected


@pytest.mark.parametrize("stamp", ["", "   ", "no date here at all"])
def test_a_stamp_without_a_date_is_none(stamp):
    assert parse_stamp(stamp) is None


def test_a_point_in_the_past_gets_a_margin_around_it():
    window = question_window("I cooked something for my friend a couple of days ago. What was it?", ASKED, SLACK)
    assert window.phrase == "a couple of days ago"
    assert window.holds(datetime(2022, 4, 10, 23, 24))
    assert not window.holds(datetime(2022, 4, 5))
    assert not window.holds(datetime(2022, 4, 12, 20))


def test_months_ago_is_wider_than_days_ago():
    window = question_window("What did I do with Rachel on the Wednesday two months ago?", ASKED, SLACK)
    assert window.holds(datetime(2022, 2, 2)) and window.holds(datetime(2022, 2, 25))
    assert not window.holds(datetime(2022, 4, 1))


@pytest.mark.parametrize("question, first_day", [
    ("What trips did I take in the past three months?", datetime(2022, 1, 12)),
    ("Which events did I join during the past month?", datetime(2022, 3, 13)),
    ("What did I buy in the last week?", datetime(2022, 4, 5)),
    ("What did I cook over the past week?", datetime(2022, 4, 5)),
    ("What did I read this week?", datetime(2022, 4, 11)),  # asked on a Tuesday: the week began on Monday
    ("Which films did I see this month?", datetime(2022, 4, 1)),
    ("最近两周买了什么？", datetime(2022, 3, 29)),  # Chinese: tests/unit/test_time_window_chinese.py
    ("过去三个月去过哪些城市？", datetime(2022, 1, 12)),
    ("这个月看了哪些电影？", datetime(2022, 4, 1)),
    ("这周和谁吃过饭？", datetime(2022, 4, 11)),
])
def test_a_span_runs_to_the_day_asked(question, first_day):
    window = question_window(question, ASKED, SLACK)
    assert window.start == first_day
    assert window.holds(datetime(2022, 4, 12, 23))
    assert not window.holds(datetime(2022, 4, 13, 1))


@pytest.mark.parametrize("english, chinese", [
    ("What did I buy last week?", "上周买了什么？"), ("What did I read this week?", "这周读了什么？"),
    ("Where did I go last month?", "上个月去了哪里？"), ("What did I see this month?", "这个月看了什么？"),
])
def test_last_week_and_this_month_are_calendar_units_in_either_language(english, chinese):
    """"I went camping last week", said on a Tuesday, tells of the week before (Monday to Sunday), as 上周
    does; not of the seven days up to that Tuesday."""
    window = question_window(english, ASKED, SLACK)
    assert (window.start, window.stop) == (question_window(chinese, ASKED, SLACK).start,
                                           question_window(chinese, ASKED, SLACK).stop)


def test_last_week_month_and_year_are_the_ones_before_the_day_asked():
    week = question_window("What did I buy last week?", ASKED, SLACK)  # asked on Tuesday 12 April 2022
    assert week.start == datetime(2022, 4, 4) and week.holds(datetime(2022, 4, 10, 20))
    assert not week.holds(datetime(2022, 4, 3, 20))
    month = question_window("Where did I go last month?", ASKED, SLACK)
    assert month.start == datetime(2022, 3, 1) and month.holds(datetime(2022, 3, 31, 12))
    year = question_window("What did John do to help his community last year?", ASKED, SLACK)
    assert year.start == datetime(2021, 1, 1) and year.holds(datetime(2021, 12, 31))
    assert not year.holds(datetime(2022, 3, 1))


def test_yesterday_is_one_day():
    window = question_window("What did I eat yesterday?", ASKED, SLACK)
    assert window.holds(datetime(2022, 4, 11, 12)) and not window.holds(datetime(2022, 4, 12, 1))


@pytest.mark.parametrize("question, inside, outside", [
    ("What painting did Melanie show on October 13, 2023?", datetime(2023, 10, 13, 19), datetime(2023, 10, 20)),
    ("What did Maria mention on 31 July, 2023?", datetime(2023, 7, 31, 10), datetime(2023, 7, 20)),
    ("What happened on 2023-05-02?", datetime(2023, 5, 3), datetime(2023, 5, 9)),
    ("What did Nate share in November 2022?", datetime(2022, 11, 30), datetime(2022, 10, 31)),
    ("What charity event did John organize in 2024?", datetime(2024, 6, 1), datetime(2023, 12, 31)),
])
def test_a_date_in_the_question_names_its_days_and_a_little_after(question, inside, outside):
    window = absolute_window(question, SLACK)
    assert window.holds(inside), window
    assert not window.holds(outside), window


def test_a_date_needs_no_question_date_and_relative_phrases_do():
    assert question_window("What did I do on 3 June, 2023?", None, SLACK) is not None
    assert question_window("What did I cook two days ago?", None, SLACK) is None


@pytest.mark.parametrize("question", [
    "What is Caroline's favourite book?",
    "May I ask what happened last time?",
    "How many days did I spend in Hawaii?",
    "What did she do on the 31st?",
])
def test_questions_without_a_time_phrase_have_no_window(question):
    assert question_window(question, ASKED, SLACK) is None


def test_an_impossible_date_is_ignored():
    assert absolute_window("What happened on 31 February, 2023?", SLACK) is None


@pytest.mark.parametrize("question, asked, inside, outside", [
    # A season names its three months (winter runs into the next year), and a week past them.
    ("What state did Joanna visit in summer 2021?", None, datetime(2021, 7, 4), datetime(2021, 5, 20)),
    ("What happened in the fall of 2020?", None, datetime(2020, 11, 30), datetime(2021, 1, 5)),
    ("Where did we ski in the winter of 2021?", None, datetime(2022, 1, 20), datetime(2021, 11, 15)),
    # "last": the latest one over before the day asked; "this": the one of the year asked.
    ("What did I do last summer?", datetime(2026, 12, 4), datetime(2026, 7, 4), datetime(2025, 7, 4)),
    ("What did I do last summer?", datetime(2026, 7, 4), datetime(2025, 7, 4), datetime(2026, 6, 15)),
    ("What are my plans this summer?", datetime(2026, 3, 1), datetime(2026, 8, 1), datetime(2025, 8, 1)),
    ("Where did we ski last winter?", datetime(2026, 1, 15), datetime(2025, 1, 10), datetime(2026, 1, 10)),
    ("Where are we skiing this winter?", datetime(2026, 1, 15), datetime(2026, 1, 10), datetime(2025, 1, 10)),
])
def test_a_season_names_its_months(question, asked, inside, outside):
    window = question_window(question, asked, SLACK)
    assert window.holds(inside), window
    assert not window.holds(outside), window


def test_a_season_without_a_year_or_a_near_word_names_none():
    assert question_window("When did Caroline go to a pride parade during the summer?", ASKED, SLACK) is None
    assert question_window("What did I do last summer?", None, SLACK) is None  # relative: needs the day asked
