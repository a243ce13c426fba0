"""The windows of Chinese dates and time phrases (``when.question_window`` reads a Chinese question or turn
through ``chinese_window``)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from agent_memory.core.chinese_words import TIME_WORD_FORMS
from agent_memory.core.text import chinese_number, has_cjk
from agent_memory.retrieval.time_windows import (
    DateSlack,
    Window,
    ago_window,
    calendar_unit,
    day_back,
    day_window,
    month_window,
    season,
    span_window,
    year_window,
)

# The same windows for a question written in Chinese: dates (2023年5月8日, 2023年5月, 2023年夏天), days
# (昨天, 三天前), spans (最近两周, 上个月) and a year's parts (去年夏天, 今年国庆, 前年春节, 明年三月).
# Festivals of the lunar calendar are given the range of days they can fall on in any year (the
# Spring Festival always falls between 21 January and 20 February): a window is a ranking signal,
# not a filter, and a few days too wide cost less than a table of lunar dates.

_ZH_NUM = r"(\d{1,2}|[零〇一二两三四五六七八九十]{1,3})"
_ZH_YEAR_WORDS = {"大前年": -3, "前年": -2, "去年": -1, "今年": 0, "明年": 1, "后年": 2}
# The seasons are the English ones (season); the other parts of a year are ranges of days:
# (first month, first day), (last month, last day).
_ZH_SEASONS = {"春天": "spring", "夏天": "summer", "秋天": "autumn", "冬天": "winter"}
_ZH_PARTS = {
    "暑假": ((7, 1), (8, 31)), "寒假": ((1, 10), (2, 28)),
    "元旦": ((1, 1), (1, 3)), "新年": ((1, 1), (2, 20)), "春节": ((1, 21), (2, 27)),
    "元宵": ((2, 4), (3, 6)), "清明": ((4, 4), (4, 6)), "五一": ((5, 1), (5, 5)),
    "端午": ((5, 28), (6, 25)), "七夕": ((7, 31), (8, 29)), "中秋": ((9, 7), (10, 7)),
    "国庆": ((10, 1), (10, 7)), "十一": ((10, 1), (10, 7)), "圣诞": ((12, 24), (12, 26)),
}
# The other spellings of these (春季, 暑期, 过年, 劳动节) are the keyword terms' table, which gives each one
# form: one list of what is written two ways. A form followed by 节 (中秋节) is read by the form itself.
for _table in (_ZH_SEASONS, _ZH_PARTS):
    _table.update({word: _table[form] for word, form in TIME_WORD_FORMS.items()
                   if form in _table and not word.startswith(form)})
_HOLIDAYS = {"暑假", "寒假"}  # school holidays (any spelling): a month's slack, as a season has
_ZH_YEAR = r"((?:19|20)\d\d年|" + "|".join(_ZH_YEAR_WORDS) + ")"
# A year, then a day, a month, or a part of the year (longest names first: 十一月 is a month, not 国庆).
_ZH_YEAR_PART = re.compile(_ZH_YEAR + r"的?(?:" + _ZH_NUM + r"月(?:" + _ZH_NUM + r"[日号])?|("
                           + "|".join(sorted([*_ZH_PARTS, *_ZH_SEASONS], key=len, reverse=True)) + r"))?(?!代)")
_ZH_MONTH_DAY = re.compile(r"(?<![\d年])" + _ZH_NUM + r"月" + _ZH_NUM + r"[日号]")
_ZH_DAY = re.compile(r"(大前天|前天|昨天|昨日|今天|今日)")
_ZH_DAYS_BACK = {"大前天": 3, "前天": 2, "昨天": 1, "昨日": 1, "今天": 0, "今日": 0}
_ZH_UNIT_DAYS = {"天": 1, "日": 1, "周": 7, "星期": 7, "礼拜": 7, "月": 30, "年": 365}
_ZH_AGO = re.compile(r"(\d{1,2}|[一二两三四五六七八九十]{1,3}|几|半)个?(天|日|周|星期|礼拜|月|年)(?:以前|之前|前)")
_ZH_SPAN = re.compile(r"(?:最近|过去|近)(\d{1,2}|[一二两三四五六七八九十]{1,3}|几)个?(天|周|星期|礼拜|月|年)")
# 上个周末 and 这个周六 are 上周末 and 这周六 (as the keyword terms read them): 个 may stand before 周 too.
_ZH_CALENDAR = re.compile(r"(上个?月|这个?月|本月|上个?(?:星期|礼拜|周)|这个?(?:星期|礼拜|周)|本周)")


def _zh_int(word: str) -> int:
    """A count in a time phrase: ``chinese_number``, and 几 ("a few") three."""
    return 3 if word == "几" else chinese_number(word)


def _zh_year_part(m: re.Match, asked_on: datetime | None, slack: DateSlack) -> Window | None:
    year_word, month, day, part = m.group(1), m.group(2), m.group(3), m.group(4)
    if year_word.endswith("年") and year_word[:-1].isdigit():
        year = int(year_word[:-1])
    elif asked_on is None:
        return None
    else:
        year = asked_on.year + _ZH_YEAR_WORDS[year_word]
    try:
        if month and day:
            return day_window(year, _zh_int(month), _zh_int(day), m.group(0), slack.day)
        if month:
            return month_window(year, _zh_int(month), m.group(0), slack)
    except ValueError:  # 13月
        return None
    if part in _ZH_SEASONS:
        return season(year, _ZH_SEASONS[part], m.group(0), slack)
    if part:
        (m1, d1), (m2, d2) = _ZH_PARTS[part]
        after = slack.month if TIME_WORD_FORMS.get(part, part) in _HOLIDAYS else slack.day
        return Window(datetime(year, m1, d1), datetime(year, m2, d2) + timedelta(days=1 + after), m.group(0))
    return year_window(year, m.group(0), slack)


def _zh_calendar(phrase: str, day: datetime, slack: DateSlack) -> Window:
    """上个月 / 这个月 / 上周 / 这周: calendar months and weeks, as "last month" and "this week" are."""
    return calendar_unit(phrase.startswith("上"), "month" if phrase.endswith("月") else "week", day, phrase, slack)


def chinese_window(question: str, asked_on: datetime | None, slack: DateSlack) -> Window | None:
    """The window of a Chinese date or time phrase (see the block's comment); relative ones count from
    ``asked_on`` and need it. A bare month and day (5月8日) is their last occurrence up to the day asked."""
    if not has_cjk(question):
        return None
    if (m := _ZH_YEAR_PART.search(question)) and (window := _zh_year_part(m, asked_on, slack)) is not None:
        return window
    if asked_on is None:
        return None
    day = asked_on.replace(hour=0, minute=0, second=0, microsecond=0)
    if m := _ZH_MONTH_DAY.search(question):
        month, dom = _zh_int(m.group(1)), _zh_int(m.group(2))
        year = day.year if (month, dom) <= (day.month, day.day) else day.year - 1
        return day_window(year, month, dom, m.group(0), slack.day)
    if m := _ZH_DAY.search(question):
        return day_back(day, _ZH_DAYS_BACK[m.group(1)], m.group(0))
    if m := _ZH_AGO.search(question):
        unit = _ZH_UNIT_DAYS[m.group(2)]
        back = unit // 2 if m.group(1) == "半" else _zh_int(m.group(1)) * unit
        return ago_window(day, back, unit, m.group(0))
    if m := _ZH_SPAN.search(question):
        return span_window(day, _zh_int(m.group(1)) * _ZH_UNIT_DAYS[m.group(2)], m.group(0))
    if m := _ZH_CALENDAR.search(question):
        return _zh_calendar(m.group(1), day, slack)
    return None
