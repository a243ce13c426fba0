"""Dates in memory: parse a turn's timestamp, and the time window a question points at.

"What did I cook a couple of days ago?" asked on 12 April says where to look: turns from about
10 April. The window is a reranker signal, not a filter: people misremember dates, and a turn
without a timestamp must still compete. English phrases and dates are read here, Chinese ones in
``when_chinese.py``; both build their windows with ``time_windows.py``.
"""

from __future__ import annotations

import functools
import re
from datetime import date, datetime, timedelta

from dateutil.easter import easter

from agent_memory.core.updates import parse_dated
from agent_memory.retrieval.time_windows import (
    EXACT,
    SEASON_FIRST_MONTH,
    DateSlack,
    Window,
    ago_window,
    calendar_unit,
    day_back,
    day_window,
    month_window,
    season,
    span_window,
    units_back,
    week_start,
    year_window,
)
from agent_memory.retrieval.when_chinese import chinese_window

_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple": 2, "a couple": 2,
            "a couple of": 2, "couple of": 2, "few": 3, "a few": 3, "several": 4}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}
_COUNT = r"(\d+|a couple of|couple of|a couple|a few|few|several|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_UNIT = r"(day|week|month|year)s?"
# "two months ago", "a couple of days ago"
_AGO = re.compile(rf"\b{_COUNT}\s+{_UNIT}\s+ago\b", re.IGNORECASE)
_VAGUE = {"couple", "a couple", "a couple of", "couple of", "few", "a few", "several"}
# "in the past three months", "over the last two weeks", "during the past month"
_SPAN = re.compile(rf"\b(?:past|last|previous|this)\s+(?:{_COUNT}\s+)?{_UNIT}\b", re.IGNORECASE)
# A bare "last week", "this month", "last year" is a calendar unit, as 上周, 这个月 and 去年 are: "I went camping
# last week", said on a Tuesday, tells of the week before, not of the seven days up to that Tuesday. After
# "the" ("in the last week", "over the last month") it is a span (_SPAN), as is "past week".
_CALENDAR = re.compile(r"(?<!the )\b(last|this)\s+(week|month|year)\b", re.IGNORECASE)
# "the previous month" is "last month" (a count makes a span: "the previous three months"); "the week before
# last" is the calendar week before that.
_PREVIOUS = re.compile(r"\bprevious\s+(week|month|year)\b", re.IGNORECASE)
_BEFORE_LAST = re.compile(r"\b(week|month|year)\s+before\s+last\b", re.IGNORECASE)
_DAY_WORDS = {"yesterday": 1, "today": 0, "the day before yesterday": 2, "day before yesterday": 2}
_DAY = re.compile(r"\b((?:the )?day before yesterday|yesterday|today)\b", re.IGNORECASE)
# Weekdays and weekends, Monday first as the weeks are. "last Friday", "on Friday last week", "Friday of last
# week": the Friday of the calendar week before, as 上周五 is; "the Friday before last" the week before that;
# "this past Friday": the latest Friday before the day asked. "last weekend": the Saturday and Sunday that
# end last week; "this weekend": the ones of this week. A bare "on Friday" is not read: it may be ahead.
_WEEKDAYS = {"monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5, "sunday": 6,
             "weekend": 5}  # the day of the week it is (or begins on), Monday 0
_WEEKDAY = r"(monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend)"
_WEEKDAY_NEAR = re.compile(rf"\b(this\s+past|last|this)\s+{_WEEKDAY}\b", re.IGNORECASE)
_WEEKDAY_LAST_WEEK = re.compile(rf"\b{_WEEKDAY}\s+(?:of\s+)?last\s+week\b|\blast\s+week\s+on\s+{_WEEKDAY}\b",
                                re.IGNORECASE)
_WEEKDAY_BEFORE_LAST = re.compile(rf"\b{_WEEKDAY}\s+before\s+last\b", re.IGNORECASE)
_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december"]
_MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_YEAR = r"((?:19|20)\d\d)"
# "13 October 2023", "31 July, 2023"; "October 13, 2023"; "2023-10-13"
_DMY = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\.?,?\s+{_YEAR}\b", re.IGNORECASE)
_MDY = re.compile(rf"\b{_MONTH}\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+{_YEAR}\b", re.IGNORECASE)
_ISO = re.compile(r"\b((?:19|20)\d\d)-(\d\d)-(\d\d)\b")
# "in November 2022", "January 2024"; "in 2024"
_MY = re.compile(rf"\b{_MONTH}\.?,?\s+{_YEAR}\b", re.IGNORECASE)
_Y = re.compile(rf"\b(?:in|during|of|since|throughout)\s+{_YEAR}\b", re.IGNORECASE)
# Seasons (meteorological, northern): "summer 2021", "the summer of 2021"; "last summer", "this winter".
_SEASON = r"(spring|summer|autumn|fall|winter)"
_SEASON_YEAR = re.compile(rf"\b{_SEASON}\s+(?:of\s+)?{_YEAR}\b", re.IGNORECASE)
_SEASON_NEAR = re.compile(rf"\b(last|this|past)\s+{_SEASON}\b", re.IGNORECASE)
# A season or a month of a year named by a word: "the spring of last year", "summer last year", "next year's
# March", "in March next year"; and "next March" / "last March" (the next one after, the latest one before,
# the month asked). Read before "last year" alone, which would name the whole year.
_YEAR_WORD = {"last": -1, "this": 0, "next": 1}
# "May" only with its capital and "fall" only before "of" ("it may next year", "prices fall next year").
_MONTH_NAMES = r"january|february|march|april|(?-i:May)|june|july|august|september|october|november|december"
_PART = rf"(spring|summer|autumn|winter|fall(?=\s+of\b)|{_MONTH_NAMES})"
_PART_OF_YEAR = re.compile(rf"\b{_PART}\s+(?:of\s+)?(last|this|next)\s+year\b|\b(last|this|next)\s+year's\s+{_PART}\b",
                           re.IGNORECASE)
_NEAR_MONTH = re.compile(rf"(?<!the )\b(last|next)\s+({_MONTH_NAMES})\b", re.IGNORECASE)
# Easter, a movable feast (dateutil's Western computus): its long weekend, Good Friday to Easter Monday. "this
# Easter" / "Easter this year" the year asked's; "last Easter" / "this past Easter" the latest begun before the day
# asked, "next Easter" the first after it; "Easter last year", "Easter 2023". A bare "Easter" is not read: it may
# be ahead, and "Easter Island" or "the Easter Rising" name no time.
_EASTER_NEAR = re.compile(r"\b(this\s+past|this|last|next)\s+easter\b|\beaster\s+(?:of\s+)?(this|last|next)\s+year\b",
                          re.IGNORECASE)
_EASTER_YEAR = re.compile(rf"\beaster\s+(?:of\s+)?{_YEAR}\b", re.IGNORECASE)


@functools.lru_cache(maxsize=8192)
def parse_stamp(stamp: str) -> datetime | None:
    """"2023/02/12 (Sun) 14:44", "1:56 pm on 8 May, 2023", ISO dates: the datetime (as written, its offset
    dropped), or None, also for a text that names no year ("Tuesday", "version 3": see ``parse_dated``)."""
    when = parse_dated(stamp)
    return when.replace(tzinfo=None) if when is not None else None


def said_on(item) -> date | None:
    """The day a stored item was said (its ``timestamp``), or None: a day, not a time, so that a session's turns
    ingested as a transcript (one time for the session) and appended one by one (a time each) stand in the same
    order."""
    when = parse_stamp(item.metadata.get("timestamp") or "")
    return when.date() if when else None


def _count(word: str | None) -> int:
    if not word:
        return 1
    word = word.lower()
    return int(word) if word.isdigit() else _NUMBERS.get(word, 1)


def _month(name: str) -> int:
    return next(i for i, m in enumerate(_MONTHS, start=1) if m.startswith(name.lower()[:3]))


def absolute_window(question: str, slack: DateSlack) -> Window | None:
    """The days a date in the question names: a day, a month or a year (a little past its end)."""
    if m := _DMY.search(question):
        return day_window(int(m.group(3)), _month(m.group(2)), int(m.group(1)), m.group(0), slack.day)
    if m := _MDY.search(question):
        return day_window(int(m.group(3)), _month(m.group(1)), int(m.group(2)), m.group(0), slack.day)
    if m := _ISO.search(question):
        return day_window(int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(0), slack.day)
    if m := _MY.search(question):
        return month_window(int(m.group(2)), _month(m.group(1)), m.group(0), slack)
    if m := _SEASON_YEAR.search(question):
        return season(int(m.group(2)), m.group(1), m.group(0), slack)
    if m := _EASTER_YEAR.search(question):
        return _easter(int(m.group(1)), m.group(0), slack)
    if m := _Y.search(question):
        return year_window(int(m.group(1)), m.group(0), slack)
    return None


def question_window(question: str, asked_on: datetime | None, slack: DateSlack) -> Window | None:
    """The window of days a question's date, or its relative time phrase, points at; or None.

    A date names its own days (see ``absolute_window``). Relative phrases are read as a calendar reads them,
    counted from the day asked: "last week", "the previous month", "two weeks ago", "the year before last" are
    calendar units (``units_back``), "two days ago" is one day, "last Friday" and "last weekend" days of last
    week, "the spring of last year" and "next March" a season or month (``_english_calendar``). A vague count
    ("a couple of days ago", "a few months ago") is a point with a margin of a third of its distance (at least
    a day, at most a unit); a span ("past three months", "in the last week") runs from its start to the end
    of the day asked.
    """
    if (window := absolute_window(question, slack)) is not None:
        return window
    if asked_on is None:
        return chinese_window(question, None, slack)  # its dates that need no day asked
    day = asked_on.replace(hour=0, minute=0, second=0, microsecond=0)
    if (window := _english_calendar(question, day, slack)) is not None:
        return window
    if m := _AGO.search(question):
        count, unit = " ".join(m.group(1).lower().split()), m.group(2).lower()
        if count in _VAGUE:  # "a couple of weeks ago": a point with a margin
            return ago_window(day, _count(count) * _UNIT_DAYS[unit], _UNIT_DAYS[unit], m.group(0))
        if unit == "day":  # "two days ago" is the day before yesterday
            return day_back(day, _count(count), m.group(0))
        return units_back(unit, _count(count), day, m.group(0), slack)  # "two weeks ago": the week before last
    if m := _CALENDAR.search(question):
        return calendar_unit(m.group(1).lower() == "last", m.group(2).lower(), day, m.group(0), slack)
    if m := _SPAN.search(question):
        return span_window(day, _count(m.group(1)) * _UNIT_DAYS[m.group(2).lower()], m.group(0))
    if m := _DAY.search(question):
        return day_back(day, _DAY_WORDS[m.group(1).lower()], m.group(0))
    if m := _SEASON_NEAR.search(question):
        return _near_season(m.group(1).lower(), m.group(2), day, m.group(0), slack)
    return chinese_window(question, asked_on, slack)


# Every phrase question_window reads holds one of these, so a text holding none names no time (most turns)
# and is passed over with substring tests, five times cheaper than one search of a pattern of them all.
_TIME_PIECES = ("day", "week", "month", "year", "ago", "easter", "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug",
                "sep", "oct", "nov", "dec", "spring", "summer", "autumn", "fall", "winter", "19", "20")
# A Chinese phrase holds one of these: a year word or 年 before a part of the year (去年夏天, 今年国庆), 月 in a
# month or 上个月, 天 / 日 in a day (昨天, 三天前), 周 / 星期 / 礼拜 in a week.
_ZH_TIME_CHARS = re.compile("[年月日天周星期礼拜]")


def _may_name_time(text: str) -> bool:
    lowered = text.lower()
    return any(piece in lowered for piece in _TIME_PIECES) or (not text.isascii() and bool(_ZH_TIME_CHARS.search(text)))


@functools.lru_cache(maxsize=8192)  # keyed by the text: a bound on memory too (a turn piece is at most a chunk)
def told_window(text: str, said: datetime) -> Window | None:
    """The window of the time a turn says it tells of ("yesterday", 上个月和…), counted from when it was
    ``said``; None when it names none. No slack: the slack of a question's window is for memory written after
    the event, and a turn that names its time is written by it. Cached: the same turns come back question
    after question."""
    if not _may_name_time(text):
        return None
    return question_window(text, said, EXACT)


def _weekday(name: str, weeks_back: int, day: datetime, phrase: str, slack: DateSlack) -> Window:
    """The weekday ``name`` (a weekend: its Saturday and Sunday) of the calendar week ``weeks_back`` before the
    one of ``day``, with a day's slack."""
    first = week_start(day) - timedelta(weeks=weeks_back) + timedelta(days=_WEEKDAYS[name])
    return Window(first, first + timedelta(days=(2 if name == "weekend" else 1) + slack.day), phrase)


def _easter_sunday(year: int) -> datetime:
    return datetime.combine(easter(year), datetime.min.time())


def _easter(year: int, phrase: str, slack: DateSlack) -> Window:
    """Easter's long weekend of ``year``: Good Friday to Easter Monday, with a day's slack."""
    sunday = _easter_sunday(year)
    return Window(sunday - timedelta(days=2), sunday + timedelta(days=2 + slack.day), phrase)


def _near_easter(which: str, day: datetime, phrase: str, slack: DateSlack) -> Window:
    which = " ".join(which.lower().split())
    sunday = _easter_sunday(day.year)
    if which == "this":
        return _easter(day.year, phrase, slack)
    if which == "next":
        return _easter(day.year + (sunday <= day), phrase, slack)
    begun = sunday - timedelta(days=2) <= day  # last, this past: the latest begun before the day
    return _easter(day.year - (not begun), phrase, slack)


def _english_calendar(question: str, day: datetime, slack: DateSlack) -> Window | None:
    """The English calendar phrases counted from ``day`` that name a day of a week, a unit before last, a
    season or month by its year word, or Easter (see the patterns' comments); None for any other text."""
    if m := _EASTER_NEAR.search(question):
        if m.group(2):
            return _easter(day.year + _YEAR_WORD[m.group(2).lower()], m.group(0), slack)
        return _near_easter(m.group(1), day, m.group(0), slack)
    if m := _WEEKDAY_LAST_WEEK.search(question):
        return _weekday((m.group(1) or m.group(2)).lower(), 1, day, m.group(0), slack)
    if m := _WEEKDAY_BEFORE_LAST.search(question):
        return _weekday(m.group(1).lower(), 2, day, m.group(0), slack)
    if m := _WEEKDAY_NEAR.search(question):
        which, name = " ".join(m.group(1).lower().split()), m.group(2).lower()
        back = {"last": 1, "this": 0}.get(which, int(_WEEKDAYS[name] >= day.weekday()))  # this past: latest before
        return _weekday(name, back, day, m.group(0), slack)
    if m := _BEFORE_LAST.search(question):
        return units_back(m.group(1).lower(), 2, day, m.group(0), slack)
    if m := _PREVIOUS.search(question):
        return units_back(m.group(1).lower(), 1, day, m.group(0), slack)
    if m := _PART_OF_YEAR.search(question):
        part, year = (m.group(1) or m.group(4)).lower(), day.year + _YEAR_WORD[(m.group(2) or m.group(3)).lower()]
        if part in SEASON_FIRST_MONTH:
            return season(year, part, m.group(0), slack)
        return month_window(year, _month(part), m.group(0), slack)
    if m := _NEAR_MONTH.search(question):  # the latest one over before the month asked, or the next after it
        month, last = _month(m.group(2)), m.group(1).lower() == "last"
        year = day.year - (month >= day.month) if last else day.year + (month <= day.month)
        return month_window(year, month, m.group(0), slack)
    return None


def _near_season(which: str, name: str, day: datetime, phrase: str, slack: DateSlack) -> Window:
    """"this summer": the season of the year asked (a winter asked in January or February began the
    December before); "last summer" / "past summer": the latest one over before the day asked."""
    year = day.year - (name.lower() == "winter" and day.month <= 2)
    if which == "this":
        return season(year, name, phrase, slack)
    while season(year, name, phrase, EXACT).stop > day:
        year -= 1
    return season(year, name, phrase, slack)
