"""The dated kind (``zh_dated``): a year of one user's Chinese chat in which the same activities recur, so
that only the time a question names tells one outing from another.

Its own file because it is the one kind whose questions carry the day they are asked (``qa.question_date``,
as LongMemEval's do) and name a time relative to it ("我上个月和谁去爬山了？", "去年秋天在哪个城市看的电影？").
The generator decides which outing a phrase means with its own calendar arithmetic (months, seasons), and asks
only where exactly one outing of that activity falls in the phrase's months, a week clear of its edges.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from benchmarks.dev_material.sources import Sources, chinese_names

_ACTIVITIES = ["爬山", "看电影", "吃火锅", "打羽毛球", "逛书店", "看展览", "听音乐会", "露营"]
_SAID = ["今天和{p}去{city}{act}了，挺开心的。", "昨天和{p}在{city}{act}，玩得不错。", "刚和{p}在{city}{act}回来。"]
# ``late=True`` (``zh_dated_late``): outings told days or weeks after they happened, by the time they happened
# ("上个月…"), so the day a turn was said and the day it tells of may fall in different months.
_SAID_LATE = {"上周和{p}去{city}{act}了，一直忘了说。": "week", "上个月和{p}在{city}{act}，挺开心的。": "month",
              "三天前和{p}在{city}{act}。": 3, "前天和{p}去{city}{act}了。": 2}
_CHAT = ["最近工作有点忙。", "明天要早起。", "周末想在家休息。", "今天天气不错。", "晚上吃什么好呢？", "这周有点累。"]
_REPLIES = ["听起来不错！", "好的，记下了。", "注意休息。", "那挺好的。"]
_ASK = {"who": "和谁", "where": "在哪个城市"}
_SEASONS = {"春天": (3, 4, 5), "夏天": (6, 7, 8), "秋天": (9, 10, 11)}
_YEAR_WORDS = {0: "今年", -1: "去年"}


def stamp(when: datetime) -> str:
    """LoCoMo's session date format ("7:30 pm on 1 May, 2023")."""
    return f"{when.hour % 12 or 12}:{when.minute:02d} {'pm' if when.hour >= 12 else 'am'} on {when.day} " \
           f"{when:%B}, {when.year}"


def session_dates(rng: random.Random, first: datetime, span_days: int, sessions: int,
                  late_minutes: int) -> tuple[list[datetime], datetime]:
    """``sessions`` session times over ``span_days`` from ``first`` plus up to 20 days, each up to ``late_minutes``
    past its hour, in order; and the time the questions are asked, 10 am the day after the last."""
    start = first + timedelta(days=rng.randint(0, 20))
    days = sorted(rng.sample(range(0, span_days), sessions))
    dates = [start + timedelta(days=d, minutes=rng.randint(0, late_minutes)) for d in days]
    return dates, (dates[-1] + timedelta(days=1)).replace(hour=10, minute=0)


def _months(asked: datetime) -> list[tuple[str, set[tuple[int, int]]]]:
    """(phrase, the (year, month)s it names) for the phrases a question may use, asked on ``asked``."""
    last = (asked.replace(day=1) - timedelta(days=1))
    out = [("上个月", {(last.year, last.month)})]
    for offset, word in _YEAR_WORDS.items():
        year = asked.year + offset
        for month in range(1, 13):
            if (year, month) < (asked.year, asked.month):
                out.append((f"{word}{month}月", {(year, month)}))
        for season, months in _SEASONS.items():
            named = {(year, m) for m in months}
            if max(named) < (asked.year, asked.month):
                out.append((f"{word}{season}", named))
    return out


def _inside(when: datetime, months: set[tuple[int, int]], margin: int) -> bool:
    return all((d.year, d.month) in months for d in (when - timedelta(days=margin), when + timedelta(days=margin)))


def _near(when: datetime, months: set[tuple[int, int]], margin: int) -> bool:
    return any((d.year, d.month) in months for d in (when - timedelta(days=margin), when, when + timedelta(days=margin)))


def _happened(said: datetime, back: str | int, rng: random.Random) -> datetime:
    """The day an outing told late happened: a day of the calendar week or month before ``said``, or N days back."""
    if back == "week":
        monday = said - timedelta(days=said.weekday() + 7)
        return monday + timedelta(days=rng.randint(0, 6))
    if back == "month":
        last = said.replace(day=1) - timedelta(days=1)
        return last.replace(day=rng.randint(1, last.day))
    return said - timedelta(days=int(back))


def make_dated(src: Sources, rng: random.Random, *, users: int = 6, sessions: int = 70, outings: int = 40,
               questions: int = 24, late: bool = False) -> list[dict]:
    """``users`` LoCoMo-shape records: one user's chat over about a year (``sessions`` dated sessions), with
    ``outings`` told as they happen among chatter (``late``: days or weeks after, by their own time), and
    questions asked the day after the last session."""
    zh = chinese_names(src.articles())
    people = sorted({n for n in zh.people if len(n) in (2, 3)})
    records = []
    for user in range(users):
        dates, asked = session_dates(rng, datetime(2023, 5, 1, 19, 30), 380, sessions, 120)
        slots = rng.sample(range(sessions), outings)
        told: list[dict] = []  # an outing: session, activity, companion, city, the day it happened
        for slot in slots:
            if late:
                said = rng.choice(sorted(_SAID_LATE))
                happened = _happened(dates[slot], _SAID_LATE[said], rng)
            else:
                said = rng.choice(_SAID)
                happened = dates[slot] - timedelta(days=1) if said.startswith("昨天") else dates[slot]
            told.append({"session": slot, "act": rng.choice(_ACTIVITIES), "p": rng.choice(people),
                         "city": rng.choice(zh.cities), "said": said, "when": happened})
        conversation: dict = {"speaker_a": "小林", "speaker_b": "助手"}
        where: dict[int, str] = {}
        by_session = {o["session"]: i for i, o in enumerate(told)}
        for number, when in enumerate(dates, 1):
            conversation[f"session_{number}_date_time"] = stamp(when)
            rows: list[tuple[str, str, int | None]] = []
            for _ in range(rng.randint(1, 3)):
                rows += [("小林", rng.choice(_CHAT), None), ("助手", rng.choice(_REPLIES), None)]
            if (index := by_session.get(number - 1)) is not None:
                o = told[index]
                at = rng.randrange(0, len(rows) + 1, 2)
                rows[at:at] = [("小林", o["said"].format(p=o["p"], city=o["city"], act=o["act"]), index),
                               ("助手", rng.choice(_REPLIES), None)]
            conversation[f"session_{number}"] = []
            for t_index, (speaker, text, outing) in enumerate(rows, 1):
                conversation[f"session_{number}"].append({"speaker": speaker, "dia_id": f"D{number}:{t_index}",
                                                          "text": text})
                if outing is not None:
                    where[outing] = f"D{number}:{t_index}"
        qa = []
        phrases = _months(asked)
        for index in rng.sample(range(len(told)), len(told)):
            o = told[index]
            # The phrases that name this outing's months, a week clear of their edges, and no other outing of
            # the same activity within a week of them: the question has one answer.
            fitting = [(phrase, months) for phrase, months in phrases if _inside(o["when"], months, 7)
                       and not any(other is not o and other["act"] == o["act"] and _near(other["when"], months, 7)
                                   for other in told)]
            if not fitting:
                continue
            phrase, _ = rng.choice(fitting)
            ask = rng.choice(sorted(_ASK))
            question = f"我{phrase}是{_ASK[ask]}{o['act']}的？"
            qa.append({"question": question, "answer": o["p"] if ask == "who" else o["city"],
                       "evidence": [where[index]], "category": 2, "kind": f"dated-{ask}",
                       "question_date": asked.strftime("%Y/%m/%d (%a) %H:%M")})
            if len(qa) >= questions:
                break
        records.append({"sample_id": f"zh-dated{'-late' if late else ''}{user}", "conversation": conversation,
                        "qa": qa})
    return records
