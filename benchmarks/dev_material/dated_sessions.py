"""Sessions dated so that every relative time word agrees with the day the questions are asked.

The per-user kinds with ``_dated`` in their name (``en_users_events_dated``, ``zh_users_events_dated``) are the
material of their undated kinds with each pair of turns said only on a day where its time word names what it
names on ``ASKED`` (given to every question as ``question_date``): "last month" / 上个月 only in April, "last
Friday" only in the week asked. A table of time words gives, for each (as told, its paraphrase), the first day
it may be said on; ``date_sessions`` re-dates a record's conversation from it.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from benchmarks.dev_material.pools import make_users

# The questions are asked on a Thursday, so that "last Friday" and "on Friday last week" name the same day
# (19 April) from every day of that week before it, and the sessions run from FIRST up to the day before.
ASKED = datetime(2024, 4, 25, 10, 0)
FIRST = datetime(2024, 3, 1)
ASKED_WEEK = datetime(2024, 4, 22)  # the first day a word of the week asked names what it names on ASKED
ASKED_MONTH = datetime(2024, 4, 1)  # the same for a word of the month asked ("last month": March)

# (as told, its paraphrase, the first day it may be said on)
TimesDated = list[tuple[str, str, datetime]]

# ``pools._ZH_EVENTS``' time words, dated: 上个月 only in April (March); the others name a year, a season or a
# festival of a year (spring, summer and autumn 2023; winter 2023; New Year, May Day and National Day 2024; the
# Spring Festival of 2022; March 2025) from any day of March and April 2024 alike.
ZH_TIMES_DATED = [("去年春天", "去年春季", FIRST), ("去年夏天", "去年暑期", FIRST), ("去年秋天", "去年秋季", FIRST),
                  ("去年冬天", "去年冬季", FIRST), ("今年元旦", "今年新年", FIRST), ("今年五一", "今年劳动节", FIRST),
                  ("今年国庆", "今年十一", FIRST), ("前年春节", "前年过年", FIRST), ("上个月", "上月", ASKED_MONTH),
                  ("明年三月", "明年3月", FIRST)]


def _said_from(text: str, table: TimesDated) -> datetime:
    """The first day ``text`` may be said on: the latest first day of the dated time words it holds."""
    return max([first for told, _, first in table if told in text], default=FIRST)


def date_sessions(record: dict, rng: random.Random, table: TimesDated) -> None:
    """Re-date one record's conversation in place: each (user, assistant) pair gets a day from the first its
    time words allow (``table``) up to the day before ``ASKED``, the pairs in the order of their days are
    cut into sessions of 4-8 as ``make_pool`` cuts them, each session dated on the last day of its pairs (a
    day every one of them allows) at a time of day, several a day in order; the turns are numbered again and
    the evidence follows them; every question gets ``ASKED`` as its ``question_date``."""
    conversation = record["conversation"]
    numbers = sorted(int(key.split("_")[1]) for key in conversation if key.endswith("_date_time"))
    pairs = [session[i:i + 2] for n in numbers for session in [conversation.pop(f"session_{n}")]
             for i in range(0, len(session), 2)]
    for n in numbers:
        del conversation[f"session_{n}_date_time"]
    last = (ASKED - FIRST).days - 1
    days = [rng.randint((_said_from(" ".join(t["text"] for t in pair), table) - FIRST).days, last) for pair in pairs]
    order = sorted(range(len(pairs)), key=lambda i: days[i])  # stable: the pairs' own shuffled order within a day
    cuts: list[list[int]] = []
    start = 0
    while start < len(order):
        size = rng.randint(4, 8)
        cuts.append(order[start:start + size])
        start += size
    session_days = [max(days[i] for i in cut) for cut in cuts]
    minutes: list[int] = []
    for day in sorted(set(session_days)):
        minutes += sorted(rng.sample(range(8 * 60, 22 * 60), session_days.count(day)))
    renamed: dict[str, str] = {}
    for number, (cut, day, minute) in enumerate(zip(cuts, session_days, minutes), 1):
        when = FIRST + timedelta(days=day, minutes=minute)
        conversation[f"session_{number}_date_time"] = (f"{when.hour % 12 or 12}:{when.minute:02d} "
                                                       f"{'pm' if when.hour >= 12 else 'am'} on {when.day} "
                                                       f"{when:%B}, {when.year}")
        turns = [turn for i in cut for turn in pairs[i]]
        for index, turn in enumerate(turns, 1):
            renamed[turn["dia_id"]] = f"D{number}:{index}"
            turn["dia_id"] = renamed[turn["dia_id"]]
        conversation[f"session_{number}"] = turns
    for qa in record["qa"]:
        qa["evidence"] = [renamed[e] for e in qa["evidence"]]
        qa["question_date"] = ASKED.strftime("%Y/%m/%d (%a) %H:%M")


def make_zh_users_dated(src, rng: random.Random, **shape) -> list[dict]:
    """``pools.make_users`` (Chinese) with its events' times from ``ZH_TIMES_DATED``, each record's sessions dated
    by ``date_sessions``: ``zh_users_events_dated``."""
    records = make_users(src, rng, times=[(told, paraphrase) for told, paraphrase, _ in ZH_TIMES_DATED], **shape)
    for record in records:
        date_sessions(record, rng, ZH_TIMES_DATED)
    return records
