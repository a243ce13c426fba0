"""The English per-user kinds (``en_users``, ``en_users_events``, ``en_users_events_dated``): ``pools.make_users``
in English, names, places and workplaces from HotpotQA (as ``en_pool``), the statements about people in
``pools._EN``'s words, and nameless events from the table below, the English counterpart of
``pools._ZH_EVENTS``.

``en_users_events`` dates its sessions one a day from 2 March 2024 and its questions not at all, so its time
words are labels: "last Friday", said on 11 April and asked again on the day an eval runs, names two other
days, and its figure moves with the calendar. ``en_users_events_dated`` is the same material with each time
word said only on days where it names what it names on the day the questions are asked (``ASKED``, given to
every question as ``question_date``), so every relative time word agrees with the sessions' dates.

Its own file because the English event table (groups, time words, activities and the sentences about
them) is all the per-user kinds need beyond what the pools share, and none of the Chinese kinds use it.
"""

from __future__ import annotations

import random

from benchmarks.dev_material.dated_sessions import ASKED_MONTH, ASKED_WEEK, FIRST, date_sessions
from benchmarks.dev_material.pools import make_users
from benchmarks.dev_material.sources import Sources

# Time words: (as told and asked in the template's words, its paraphrase). Relative to when they were said,
# as the Chinese ones are (去年春天 / 去年春季); the paraphrase swaps the spelling, not the time.
EN_TIMES = [("last spring", "in the spring of last year"), ("last summer", "during the summer last year"),
            ("last autumn", "last fall"), ("last winter", "over the winter last year"),
            ("last Friday", "on Friday last week"), ("next March", "in March next year"),
            ("the week before last", "two weeks ago"), ("last month", "the previous month"),
            ("this Easter", "over Easter this year"), ("the year before last", "two years ago")]
# Nameless events: a group, a time and an activity, each shared by many events; only the combination tells
# one from another. Paraphrases swap every part for a synonym ("the dinner with the family last spring" /
# "that meal with my relatives in the spring of last year").
EN_EVENTS = {
    "groups": [("my department", "my team"), ("the whole company", "everyone at work"),
               ("my high school classmates", "my old school friends"),
               ("my college roommates", "the people I shared a dorm with"), ("the family", "my relatives"),
               ("the neighbours", "the people on our street"), ("the badminton team", "my badminton teammates"),
               ("the choir", "the singers from choir"), ("my grad school classmates", "the people from my master's course"),
               ("my former colleagues", "my old workmates")],
    "times": EN_TIMES,
    "activities": [("dinner", "meal"), ("team-building day", "team outing"), ("trip", "getaway"),
                   ("annual party", "year-end do"), ("camping trip", "campout"), ("hike", "walk in the hills"),
                   ("concert", "gig"), ("sports day", "tournament"), ("photo exhibition", "photography show"),
                   ("book club", "reading circle")],
    "event": ("the {a} with {g} {t}", "that {a2} with {g2} {t2}"),  # an event's name, and its paraphrase
    "attributes": {
        "place": ("The venue of {e} is {city}.", "What is the venue of {e}?", "In which city is {e2}?"),
        "size": ("The number of people at {e} is {n}.", "What is the number of people at {e}?",
                 "How many people joined {e2}?"),
        "lead": ("The organiser of {e} is {p}.", "Who is the organiser of {e}?", "Who arranged {e2}?"),
    },
    "chat": ["Really enjoyed {e}; the scenery in {city} was lovely.",
             "Still wondering whether to bring {p} along to {e}.", "I haven't finished sorting the photos from {e}.",
             "{p} says the hotel for {e} is in {city}, close to the station."],
}


# The dated kind's time words, each with the first day it may be said on so that it names, from then up to
# ASKED, what it names on ASKED: a word of the week asked only that week (Monday 22 April on), "last month"
# only in April (March), the words of a year or a season any day from FIRST (winter 2023-24 just past, spring,
# summer and autumn 2023, Easter 2024 on 31 March, March 2025, the year 2022). EN_TIMES' "over the winter last
# year" is "this past winter" here: asked in April 2024 it named either winter.
EN_TIMES_DATED = [("last spring", "in the spring of last year", FIRST),
                  ("last summer", "during the summer last year", FIRST), ("last autumn", "last fall", FIRST),
                  ("last winter", "this past winter", FIRST), ("last Friday", "on Friday last week", ASKED_WEEK),
                  ("next March", "in March next year", FIRST), ("the week before last", "two weeks ago", ASKED_WEEK),
                  ("last month", "the previous month", ASKED_MONTH), ("this Easter", "over Easter this year", FIRST),
                  ("the year before last", "two years ago", FIRST)]


def make_en_users(src: Sources, rng: random.Random, *, dated: bool = False, **shape) -> list[dict]:
    """``make_users`` in English (records ``en-user0`` ...): the same shape arguments, the events (if any)
    from ``EN_EVENTS``, their times ``EN_TIMES`` unless ``times`` is given. ``dated``: the times are
    ``EN_TIMES_DATED``, the sessions dated by ``dated_sessions.date_sessions`` and every question asked on
    ``ASKED``."""
    if not dated:
        return make_users(src, rng, lang="en", event_table=EN_EVENTS, **shape)
    times = [(told, asked) for told, asked, _ in EN_TIMES_DATED]
    records = make_users(src, rng, lang="en", event_table=EN_EVENTS, times=times, **shape)
    for record in records:
        date_sessions(record, rng, EN_TIMES_DATED)
    return records
