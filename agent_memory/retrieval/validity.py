"""Current and past facts: which of a subject's facts a question means, and how the prompt dates them.

A graph fact carries when it was said (``valid_from``) and, once a newer fact of the same
functional relation replaced it, until when (``valid_to``; see agent_memory/core/updates.py).
Without a time in the question, current facts come first and superseded ones after them;
a question about the past ("where did she live in March?") puts first the facts valid in
the window it names. Nothing is filtered out: the prompt marks superseded facts as such.
"""

from __future__ import annotations

import re
from datetime import datetime

from agent_memory.core.records import Triple
from agent_memory.core.text import chinese_number, has_cjk
from agent_memory.retrieval.types import Decision
from agent_memory.retrieval.when import _MONTH, DateSlack, Window, _month, parse_stamp, question_window

# "in March", "during May", "since June" without a year: the last such month up to the day asked (facts
# only: the passages' time signal reads a month with its year, agent_memory/retrieval/when.py).
_MONTH_ONLY = re.compile(rf"\b(?:in|during|since|by|until|of|back in)\s+{_MONTH}\b(?!\.?,?\s+(?:19|20)\d\d)",
                         re.IGNORECASE)


# 三月 / 3月 / 十二月 alone (no year before it, no day after it, not 两个月 or 几月): the same, in Chinese.
_ZH_MONTH_ONLY = re.compile(r"(?<![\d年〇零一二两三四五六七八九十个几])(十[一二]?|[一二三四五六七八九]|1[0-2]|[1-9])月"
                            r"(?![\d〇零一二三四五六七八九十]+[日号])")


def _month_named(question: str) -> tuple[int, str] | None:
    if match := _MONTH_ONLY.search(question):
        return _month(match.group(1)), match.group(0)
    if has_cjk(question) and (match := _ZH_MONTH_ONLY.search(question)):
        return chinese_number(match.group(1)), match.group(0)
    return None


def month_window(question: str, asked_on: datetime | None) -> Window | None:
    named = _month_named(question)
    if named is None or asked_on is None:
        return None
    month, phrase = named
    year = asked_on.year if month <= asked_on.month else asked_on.year - 1
    stop = datetime(year + (month == 12), month % 12 + 1, 1)
    return Window(datetime(year, month, 1), stop, phrase)


def fact_window(question: str, question_date: str | None, slack: DateSlack) -> Window | None:
    asked_on = parse_stamp(question_date) if question_date else datetime.now()
    return question_window(question, asked_on, slack) or month_window(question, asked_on)


def _valid_during(fact: Triple, window: Window) -> bool:
    start = parse_stamp(fact.valid_from) if fact.valid_from else None
    stop = parse_stamp(fact.valid_to) if fact.valid_to else None
    if start is None:
        return False
    return start < window.stop and (stop is None or stop > window.start)


def order_facts(facts: list[Triple], question: str, question_date: str | None,
                decisions: list[Decision], slack: DateSlack, enabled: bool = True) -> list[Triple]:
    """Facts valid in the question's window first, else current facts first; the order within each
    part is the graph route's. Stable, and a no-op when no fact is dated or when not ``enabled``
    (the config's ``current_facts_first``)."""
    if not enabled or not any(f.valid_from for f in facts):
        return facts
    window = fact_window(question, question_date, slack)
    if window is not None:
        inside = [f for f in facts if _valid_during(f, window)]
        if inside:
            decisions.append(Decision("facts", window.phrase, "window",
                                      f"{len(inside)} facts valid {window.start:%Y-%m-%d} to "
                                      f"{window.last_day:%Y-%m-%d} first"))
            return inside + [f for f in facts if not _valid_during(f, window)]
    current = [f for f in facts if not f.superseded]
    if len(current) < len(facts):
        decisions.append(Decision("facts", "superseded", "after",
                                  f"{len(facts) - len(current)} superseded facts after the current ones"))
    return current + [f for f in facts if f.superseded]


def _day(stamp: str) -> str:
    when = parse_stamp(stamp) if stamp else None
    return f"{when:%Y-%m-%d}" if when else ""


def fact_dates(fact: Triple) -> str:
    """" (2024-03-02)" for a current fact, " (2024-03-02 to 2024-06-20, superseded)" for a replaced one."""
    start, stop = _day(fact.valid_from), _day(fact.valid_to)
    if stop:
        return f" ({start or '?'} to {stop}, superseded)"
    return f" ({start})" if start else ""
