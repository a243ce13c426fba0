"""The rules of knowledge updates: which facts chain, and which stamps are dates."""

from __future__ import annotations

from datetime import datetime

import pytest

from agent_memory.core.updates import FUNCTIONAL_RELATIONS, iso_stamp, relation_group, validity_changes
from agent_memory.ingest.upkeep import stamped_expiry
from agent_memory.retrieval.validity import month_window
from agent_memory.retrieval.when import parse_stamp


def _row(key, subject_key, subject, relation, obj, when, object_key=None):
    return {"key": key, "subject_key": subject_key, "subject": subject, "relation": relation,
            "object_key": object_key or obj, "object": obj, "valid_from": when, "valid_to": "", "superseded_by": ""}


def test_one_name_typed_two_ways_is_one_subject():
    """spaCy typed Maria NORP in 'Maria lives in Berlin' and ORG in 'Maria moved to Paris': two entity keys."""
    rows = [_row("r1", "maria/norp", "Maria", "live in", "Berlin", "2024-03-10T10:00:00"),
            _row("r2", "maria/org", "Maria", "move to", "Paris", "2024-06-15T10:00:00")]
    assert validity_changes(rows, FUNCTIONAL_RELATIONS) == [
        {"subject_key": "maria/norp", "key": "r1", "valid_to": "2024-06-15T10:00:00", "superseded_by": "r2"}]


def test_one_object_typed_two_ways_is_no_move():
    rows = [_row("r1", "maria", "Maria", "live in", "Paris", "2024-03-10T10:00:00", object_key="paris/gpe"),
            _row("r2", "maria", "Maria", "live in", "Paris", "2024-06-15T10:00:00", object_key="paris/org")]
    assert validity_changes(rows, FUNCTIONAL_RELATIONS) == []


@pytest.mark.parametrize("relation, group", [("住", "residence"), ("搬到", "residence"), ("居住", "residence"),
                                             ("定居", "residence"), ("加入", "employer"), ("就职", "employer")])
def test_the_chinese_extractors_verbs_are_functional(relation, group):
    assert relation_group(relation, FUNCTIONAL_RELATIONS) == group


def test_a_chinese_move_supersedes_the_older_home():
    rows = [_row("r1", "wang", "小王", "住", "北京", "2024-03-10T10:00:00"),
            _row("r2", "wang", "小王", "搬到", "上海", "2024-06-15T10:00:00")]
    assert [c["key"] for c in validity_changes(rows, FUNCTIONAL_RELATIONS)] == ["r1"]


@pytest.mark.parametrize("stamp", ["version 3", "Tuesday", "14:30", "room 12 floor 3", "8 May"])
def test_a_text_that_names_no_year_is_no_date(stamp):
    """A fuzzy parse filled the rest from today: 'version 3' was the 3rd of this month, a fact's start."""
    assert parse_stamp(stamp) is None
    assert iso_stamp(stamp) == ""


def test_a_stamp_without_its_day_takes_the_first_not_today():
    assert parse_stamp("May 2023") == datetime(2023, 5, 1)
    assert iso_stamp("2023/05/08 (mon) 13:56") == "2023-05-08T13:56:00"


@pytest.mark.parametrize("question, start, phrase", [
    ("小王三月住在哪里？", datetime(2024, 3, 1), "三月"), ("他3月在哪工作？", datetime(2024, 3, 1), "3月"),
    ("十二月呢？", datetime(2023, 12, 1), "十二月"), ("Where did she live in March?", datetime(2024, 3, 1), "in March")])
def test_a_month_without_its_year_is_the_last_one_asked_in_chinese_too(question, start, phrase):
    window = month_window(question, datetime(2024, 8, 1))
    assert window is not None and window.start == start and window.phrase == phrase


@pytest.mark.parametrize("question", ["两个月前他在哪？", "几月搬的？", "上个月呢？", "一个月后"])
def test_a_count_of_months_is_no_month(question):
    assert month_window(question, datetime(2024, 8, 1)) is None


@pytest.mark.parametrize("value, expected", [
    (None, float("inf")), ("", float("inf")), ("soon", float("inf")), (True, float("inf")),
    (float("nan"), float("inf")), (1700000000, 1700000000.0), ("1700000000.5", 1700000000.5),
    ("2020-01-01", 1577836800.0),  # a date alone: its first instant, UTC
    ("2020-01-01T00:00:00+01:00", 1577833200.0)])
def test_an_items_own_expiry_reads_as_unix_seconds(value, expected):
    assert stamped_expiry(value) == expected
