"""Dates in memory: parse a turn's timestamp, and the time window a question points at.

"What did I cook a couple of days ago?" asked on 12 April says where to look: turns from about
10 April. The window is a reranker signal, not a filter: people misremember dates, and a turn
without a timestamp must still compete.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from dateutil import parser

_WEEKDAY_TAG = re.compile(r"\((Mon|Tue|Wed|Thu|Fri|Sat|Sun)\w*\)", re.IGNORECASE)
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple": 2, "a couple": 2,
            "a couple of": 2, "couple of": 2, "few": 3, "a few": 3, "several": 4}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}
_COUNT = r"(\d+|a couple of|couple of|a couple|a few|few|several|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_UNIT = r"(day|week|month|year)s?"
# "two months ago", "a couple of days ago"
_AGO = re.compile(rf"\b{_COUNT}\s+{_UNIT}\s+ago\b", re.IGNORECASE)
# "in the past three months", "over the last two weeks", "during the past month"
# "this week" is a span of one unit too.
_SPAN = re.compile(rf"\b(?:past|last|previous|this)\s+(?:{_COUNT}\s+)?{_UNIT}\b", re.IGNORECASE)
_DAY_WORDS = {"yesterday": 1, "today": 0, "day before yesterday": 2}
_DAY = re.compile(r"\b(the day before yesterday|yesterday|today)\b", re.IGNORECASE)
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


@dataclass(frozen=True)
class DateSlack:
    """Memory is written after the event: a date's window runs a little past it, by these many days
    after a day and after a month or year (the config's time_after_day and time_after_month)."""

    day: int
    month: int


@dataclass(frozen=True)
class Window:
    """The times [start, stop) and the phrase that set them (shown in the debug dump)."""

    start: datetime
    stop: datetime
    phrase: str

    def holds(self, when: datetime) -> bool:
        return self.start <= when < self.stop

    @property
    def last_day(self) -> datetime:
        return self.stop - timedelta(microseconds=1)


@functools.lru_cache(maxsize=8192)
def parse_stamp(stamp: str) -> datetime | None:
    """"2023/02/12 (Sun) 14:44", "1:56 pm on 8 May, 2023", ISO dates: the datetime, or None."""
    if not stamp or not stamp.strip():
        return None
    try:
        return parser.parse(_WEEKDAY_TAG.sub(" ", stamp).replace(" on ", " "), fuzzy=True).replace(tzinfo=None)
    except (ValueError, OverflowError):
        return None


def _count(word: str | None) -> int:
    if not word:
        return 1
    word = word.lower()
    return int(word) if word.isdigit() else _NUMBERS.get(word, 1)


def _month(name: str) -> int:
    return next(i for i, m in enumerate(_MONTHS, start=1) if m.startswith(name.lower()[:3]))


def _day_window(year: int, month: int, day: int, phrase: str, after: int) -> Window | None:
    try:
        when = datetime(year, month, day)
    except ValueError:
        return None
    return Window(when - timedelta(days=1), when + timedelta(days=after + 1), phrase)


def absolute_window(question: str, slack: DateSlack) -> Window | None:
    """The days a date in the question names: a day, a month or a year (a little past its end)."""
    if m := _DMY.search(question):
        return _day_window(int(m.group(3)), _month(m.group(2)), int(m.group(1)), m.group(0), slack.day)
    if m := _MDY.search(question):
        return _day_window(int(m.group(3)), _month(m.group(1)), int(m.group(2)), m.group(0), slack.day)
    if m := _ISO.search(question):
        return _day_window(int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(0), slack.day)
    if m := _MY.search(question):
        year, month = int(m.group(2)), _month(m.group(1))
        start = datetime(year, month, 1)
        after = datetime(year + (month == 12), month % 12 + 1, 1)
        return Window(start, after + timedelta(days=slack.month), m.group(0))
    if m := _Y.search(question):
        year = int(m.group(1))
        return Window(datetime(year, 1, 1), datetime(year + 1, 1, 1) + timedelta(days=slack.month), m.group(0))
    return None


def question_window(question: str, asked_on: datetime | None, slack: DateSlack) -> Window | None:
    """The window of days a question's date, or its relative time phrase, points at; or None.

    A date names its own days (see ``absolute_window``). A point in the past ("N units ago")
    gets a margin of a third of its distance (at least a day, at most a unit): "two months ago"
    is rarely exactly sixty days. A span ("past three months", "this week") runs from its start
    to the end of the day asked.
    """
    if (window := absolute_window(question, slack)) is not None:
        return window
    if asked_on is None:
        return None
    day = asked_on.replace(hour=0, minute=0, second=0, microsecond=0)
    if m := _AGO.search(question):
        unit = _UNIT_DAYS[m.group(2).lower()]
        back = _count(m.group(1)) * unit
        margin = min(max(1, round(back / 3)), unit)
        centre = day - timedelta(days=back)
        return Window(centre - timedelta(days=margin), centre + timedelta(days=margin + 1), m.group(0))
    if m := _SPAN.search(question):
        back = _count(m.group(1)) * _UNIT_DAYS[m.group(2).lower()]
        return Window(day - timedelta(days=back), day + timedelta(days=1), m.group(0))
    if m := _DAY.search(question):
        back = _DAY_WORDS[m.group(1).lower()]
        return Window(day - timedelta(days=back), day - timedelta(days=back - 1), m.group(0))
    return None
