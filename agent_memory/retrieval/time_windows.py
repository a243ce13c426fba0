"""Windows of time a phrase names, and the calendar arithmetic that builds them (``when.py`` reads English
phrases and dates, ``when_chinese.py`` Chinese ones; both build their windows here).

A window is a reranker signal, not a filter: memory is written after the event, so a window runs a little
past what it names (``DateSlack``), and a turn without a time still competes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

# Seasons are meteorological, northern: the first month of each.
SEASON_FIRST_MONTH = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}


@dataclass(frozen=True)
class DateSlack:
    """Memory is written after the event: a date's window runs a little past it, by these many days
    after a day and after a month or year (the config's time_after_day and time_after_month)."""

    day: int
    month: int


EXACT = DateSlack(0, 0)  # a window of exactly the days named


@dataclass(frozen=True)
class Window:
    """The times [start, stop) and the phrase that set them (shown in the debug dump)."""

    start: datetime
    stop: datetime
    phrase: str

    def holds(self, when: datetime) -> bool:
        return self.start <= when < self.stop

    def within(self, other: "Window") -> bool:
        return other.start <= self.start and self.stop <= other.stop

    @property
    def last_day(self) -> datetime:
        return self.stop - timedelta(microseconds=1)



def day_window(year: int, month: int, day: int, phrase: str, after: int) -> Window | None:
    try:
        when = datetime(year, month, day)
    except ValueError:
        return None
    return Window(when - timedelta(days=1), when + timedelta(days=after + 1), phrase)


def month_window(year: int, month: int, phrase: str, slack: DateSlack) -> Window:
    """A calendar month and ``slack.month`` days past it (ValueError for a month that is none)."""
    start = datetime(year, month, 1)
    return Window(start, datetime(year + (month == 12), month % 12 + 1, 1) + timedelta(days=slack.month), phrase)


def year_window(year: int, phrase: str, slack: DateSlack) -> Window:
    return Window(datetime(year, 1, 1), datetime(year + 1, 1, 1) + timedelta(days=slack.month), phrase)


def ago_window(day: datetime, back: int, unit: int, phrase: str) -> Window:
    """A point ``back`` days before ``day``, with a margin of a third of its distance (at least a day, at
    most a ``unit``): "two months ago" is rarely exactly sixty days."""
    margin = min(max(1, round(back / 3)), unit)
    centre = day - timedelta(days=back)
    return Window(centre - timedelta(days=margin), centre + timedelta(days=margin + 1), phrase)


def span_window(day: datetime, back: int, phrase: str) -> Window:
    """``back`` days before ``day`` up to the end of ``day``."""
    return Window(day - timedelta(days=back), day + timedelta(days=1), phrase)


def day_back(day: datetime, back: int, phrase: str) -> Window:
    """The one day ``back`` days before ``day`` (0: that day)."""
    return Window(day - timedelta(days=back), day - timedelta(days=back - 1), phrase)



def season(year: int, name: str, phrase: str, slack: DateSlack) -> Window:
    """The three months of the season ``name`` (English: spring, summer, autumn or fall, winter) in ``year`` (winter:
    December into the next year's February)."""
    first = SEASON_FIRST_MONTH[name.lower()]
    last = month_window(year + (first + 2 > 12), (first + 1) % 12 + 1, phrase, slack)
    return Window(datetime(year, first, 1), last.stop, phrase)


def calendar_unit(last: bool, unit: str, day: datetime, phrase: str, slack: DateSlack) -> Window:
    """The calendar week (Monday first), month or year before the one of ``day`` (``last``), with the slack
    of memory written after it; or this one, from its start up to the end of ``day``."""
    if last:
        return units_back(unit, 1, day, phrase, slack)
    start = {"week": week_start(day), "month": day.replace(day=1), "year": day.replace(month=1, day=1)}[unit]
    return Window(start, day + timedelta(days=1), phrase)


def week_start(day: datetime) -> datetime:
    return day - timedelta(days=day.weekday())


def units_back(unit: str, back: int, day: datetime, phrase: str, slack: DateSlack) -> Window:
    """The calendar week (Monday first), month or year ``back`` before the one of ``day`` ("last week": 1, "the
    week before last" and "two weeks ago": 2), with the slack of memory written after it."""
    if unit == "week":
        start = week_start(day) - timedelta(weeks=back)
        return Window(start, start + timedelta(days=7 + slack.day), phrase)
    if unit == "month":
        months = day.year * 12 + day.month - 1 - back
        return month_window(months // 12, months % 12 + 1, phrase, slack)
    return year_window(day.year - back, phrase, slack)
