"""The kinds of facts that change (``en_users_updates``, ``zh_users_updates``): one user's months of chat in
which their own circumstances change and change again (where they live, where they work, their car, diet,
sport, phone, manager, instrument), each change told once in the first person in one of several wordings,
among other people's changes in the same words, chatter about the same places and a few off-topic lectures.

A question asks what holds now ("Where do I live now?", "我现在住在哪里？"; evidence: the latest change) or
what held before the latest ("Where did I live before Leeds?"; evidence: the change before it). Every question
is asked the day after the last session (``qa.question_date``). Nothing the product was tuned on has this
shape: the older values are told in the same words as the latest, so neither meaning nor keywords tell which
is current; only when a turn was said does.

Its own file because the attribute table (values, wordings, questions) is all this kind needs beyond the
sources' names, and no other kind uses it.
"""

from __future__ import annotations

import random
import re
from datetime import datetime
from typing import Hashable

from benchmarks.dev_material.dated import session_dates, stamp
from benchmarks.dev_material.pools import _EN, _ZH
from benchmarks.dev_material.sources import Sources, _unique_names, chinese_names, english_names

# attribute: (values or a source list's name, the user's wordings, another person's wording,
# (question in plain words, its paraphrase), the question about the value before the latest)
_EN_ATTRIBUTES = {
    "home": ("cities", ["I just moved to {v}.", "We've finally settled into our new flat in {v}.",
                        "Home is {v} now, the boxes are all unpacked."],
             "My friend {p} just moved to {v}.", ("Where do I live now?", "Which city is my home these days?"),
             "Where did I live before {v}?"),
    "job": ("orgs", ["I started a new job at {v} today.", "First week at {v} is done, the team is nice.",
                     "I accepted the offer from {v}; I begin on Monday."],
            "{p} got a job at {v}.", ("Where do I work now?", "Who is my current employer?"),
            "Where did I work before {v}?"),
    "car": (["Honda Civic", "Toyota Corolla", "Ford Focus", "Tesla Model 3", "Volkswagen Golf", "Mazda 3",
             "Kia Niro", "Subaru Outback", "Volvo XC40", "Nissan Leaf"],
            ["I bought a {v} yesterday.", "Picked up my new {v} from the dealer.",
             "Traded in my old car for a {v}."],
            "{p} is selling their {v}.", ("What car do I drive now?", "Which car do I have at the moment?"),
            "What did I drive before the {v}?"),
    "diet": (["vegetarian", "vegan", "keto", "pescatarian", "gluten-free", "low-carb", "paleo"],
             ["I've gone {v} this month.", "Trying a {v} diet from now on.",
              "Switched to eating {v}; feeling good so far."],
             "{p} has gone {v}.", ("What diet am I following now?", "How am I eating these days?"),
             "What diet was I on before going {v}?"),
    "sport": ("sports", ["I signed up for {v} lessons.", "I've taken up {v}, twice a week.",
                         "These days I spend my evenings on {v}."],
              "{p} has taken up {v}.", ("Which sport am I doing now?", "What do I do for exercise these days?"),
              "Which sport did I do before {v}?"),
    "phone": (["iPhone 15", "Pixel 8", "Galaxy S23", "OnePlus 11", "Xperia 5", "Fairphone 5", "Moto G84"],
              ["Got a new phone, a {v}.", "My {v} arrived today.", "Switched phones, I'm on a {v} now."],
              "{p} just bought a {v}.", ("What phone do I use now?", "Which handset do I have these days?"),
              "Which phone did I have before the {v}?"),
    "manager": ("people", ["My new manager is {v}.", "{v} took over as my boss today.", "I report to {v} now."],
                "{p}'s new manager is {v}.", ("Who is my manager now?", "Who do I report to these days?"),
                "Who was my manager before {v}?"),
    "instrument": (["piano", "guitar", "violin", "cello", "drums", "saxophone", "ukulele", "flute"],
                   ["I started {v} lessons this week.", "Practising the {v} every evening now.",
                    "I'm learning to play the {v}."],
                   "{p} is learning the {v}.", ("Which instrument am I learning now?",
                                               "What instrument do I practise these days?"),
                   "Which instrument was I learning before the {v}?"),
}
_ZH_ATTRIBUTES = {
    "home": ("cities", ["我刚搬到{v}了。", "我们在{v}租了套房子，总算安顿下来了。", "现在家安在{v}了，箱子都拆完了。"],
             "我朋友{p}刚搬到{v}。", ("我现在住在哪里？", "我现在的家在哪个城市？"), "我搬到{v}之前住在哪里？"),
    "job": ("orgs", ["我今天开始在{v}上班了。", "在{v}的第一周结束了，同事都挺好。", "我接了{v}的录用通知，下周一入职。"],
            "{p}找到了{v}的工作。", ("我现在在哪里工作？", "我现在的东家是哪家单位？"), "我去{v}之前在哪里工作？"),
    "car": (["比亚迪汉", "特斯拉Model 3", "丰田卡罗拉", "本田雅阁", "大众帕萨特", "蔚来ET5", "理想L7", "小鹏P7"],
            ["我昨天买了一辆{v}。", "新车{v}提回来了。", "把旧车卖了，换了辆{v}。"],
            "{p}在卖他的{v}。", ("我现在开的是什么车？", "我现在的座驾是哪款？"), "买{v}之前我开的是什么车？"),
    "diet": (["素食", "生酮饮食", "轻断食", "低碳水饮食", "地中海饮食", "无麸质饮食"],
             ["我这个月开始吃{v}了。", "打算以后坚持{v}。", "最近改成{v}，感觉还不错。"],
             "{p}开始吃{v}了。", ("我现在在坚持哪种饮食？", "我最近吃饭是什么路子？"), "改成{v}之前我是哪种饮食？"),
    "sport": ("sports", ["我报了{v}课。", "我最近迷上了{v}，一周两次。", "这阵子晚上都去练{v}。"],
              "{p}最近开始练{v}。", ("我现在在练什么运动？", "我最近靠什么锻炼身体？"), "练{v}之前我在练什么运动？"),
    "phone": (["iPhone 15", "华为Mate 60", "小米14", "OPPO Find X7", "vivo X100", "荣耀Magic6"],
              ["换了新手机，{v}。", "我的{v}今天到货了。", "手机换成{v}了。"],
              "{p}刚买了{v}。", ("我现在用的是什么手机？", "我最近用哪款手机？"), "换{v}之前我用的是什么手机？"),
    "manager": ("people", ["我的新领导是{v}。", "今天起{v}当我的上司了。", "我现在向{v}汇报。"],
                "{p}的新领导是{v}。", ("我现在的领导是谁？", "我现在向谁汇报工作？"), "{v}之前我的领导是谁？"),
    "instrument": (["钢琴", "吉他", "小提琴", "大提琴", "架子鼓", "萨克斯", "尤克里里", "古筝"],
                   ["这周开始学{v}了。", "现在每天晚上练{v}。", "我报了个{v}班。"],
                   "{p}在学{v}。", ("我现在在学什么乐器？", "我最近在练哪种乐器？"), "学{v}之前我在学什么乐器？"),
}


def _lists(src: Sources, lang: str) -> tuple[dict[str, list[str]], list[tuple[str, str]]]:
    """The named lists values are drawn from (cities, orgs, people, sports) and the off-topic lectures."""
    if lang == "zh":
        articles = src.articles()
        zh = chinese_names(articles)
        names = {"cities": zh.cities, "orgs": zh.orgs or [f"{c}大学" for c in zh.cities],
                 "people": sorted({n for n in zh.people if len(n) in (2, 3)}), "sports": _ZH["sports"]}
        return names, articles
    paragraphs = src.paragraphs()
    en = english_names(paragraphs)
    people = _unique_names(random.Random(0), en.firsts, en.lasts, 200, en.taken)
    orgs = en.universities + [t for t in sorted(paragraphs) if re.search(r"\b(Company|Corporation|Records|Media|"
                                                                        r"Bank|Hospital|Group)\b", t)]
    names = {"cities": [c for c, _ in en.cities], "orgs": orgs, "people": people, "sports": _EN["sports"]}
    return names, sorted(paragraphs.items())


def _values(pool: str | list[str], names: dict[str, list[str]]) -> list[str]:
    """An attribute's values: its own list, or the named list of the sources' names it draws from."""
    return names[pool] if isinstance(pool, str) else pool


def make_updates(src: Sources, rng: random.Random, lang: str, *, users: int = 8, sessions: int = 40,
                 attributes: int = 6, others: int = 10, lectures: int = 6) -> list[dict]:
    """``users`` LoCoMo-shape records (``{lang}-updates0`` ...), each one user's chat over about ten months:
    ``attributes`` of their circumstances each change two to four times (the first value is where they
    start), ``others`` changes of other people in the same words, two to four pairs of chatter a session and
    ``lectures`` long off-topic answers; questions asked the day after the last session."""
    table = _ZH_ATTRIBUTES if lang == "zh" else _EN_ATTRIBUTES
    v = _ZH if lang == "zh" else _EN
    names, lecture_src = _lists(src, lang)
    records = []
    for number in range(users):
        dates, date, people = user_months(rng, names, sessions)
        # What is said in which session: (session, speaker text, the (attribute, step) it tells, or None).
        placed: list[tuple[int, str, tuple[str, int] | None]] = []
        changes: dict[str, list[str]] = {}
        for attr in rng.sample(sorted(table), attributes):
            pool, wordings, _, _, _ = table[attr]
            values = _values(pool, names)
            candidates = [x for x in values if x not in people]
            steps = min(rng.randint(2, 4), len(candidates), sessions - 1)
            if steps < 2:  # a small source: too few values for a change
                continue
            changes[attr] = rng.sample(candidates, steps)
            slots = sorted(rng.sample(range(sessions - 1), steps))  # the last session tells no change
            for step, slot in enumerate(slots):
                placed.append((slot, rng.choice(wordings).format(v=changes[attr][step]), (attr, step)))
        for _ in range(others):
            attr = rng.choice(sorted(table))
            pool, _, other, _, _ = table[attr]
            values = _values(pool, names)
            placed.append((rng.randrange(sessions), other.format(p=rng.choice(people), v=rng.choice(values)), None))
        conversation, told_at = chat_sessions(rng, v, names, people, dates, placed, lecture_src, lectures)
        where = {told: dias[-1] for told, dias in told_at.items()}  # each change is told once
        qa = []
        for n, (attr, values) in enumerate(changes.items()):
            _, _, _, (plain, paraphrase), before = table[attr]
            latest = len(values) - 1
            qa.append({"question": plain if n % 2 == 0 else paraphrase, "answer": values[latest],
                       "evidence": [where[(attr, latest)]], "category": 4,
                       "kind": f"now-{'template' if n % 2 == 0 else 'paraphrase'}", "attribute": attr,
                       "question_date": date})
            qa.append({"question": before.format(v=values[latest]), "answer": values[latest - 1],
                       "evidence": [where[(attr, latest - 1)]], "category": 2, "kind": "before", "attribute": attr,
                       "question_date": date})
        records.append({"sample_id": f"{lang}-updates{number}", "conversation": conversation, "qa": qa})
    return records


def user_months(rng: random.Random, names: dict[str, list[str]], sessions: int) -> tuple[list[datetime], str, list[str]]:
    """One user's calendar and acquaintances, as every per-user kind draws them: ``sessions`` dates over about ten
    months from June 2023, the questions' date (the day after the last session, as LoCoMo writes dates) and the
    people their chatter names."""
    dates, asked = session_dates(rng, datetime(2023, 6, 1, 19, 0), 300, sessions, 150)
    people = rng.sample(names["people"], min(12, len(names["people"]) // 2))
    return dates, asked.strftime("%Y/%m/%d (%a) %H:%M"), people


def chat_sessions(rng: random.Random, v: dict, names: dict[str, list[str]], people: list[str], dates: list[datetime],
                  placed: list[tuple[int, str | tuple[str, str], Hashable | None]], lecture_src: list[tuple[str, str]],
                  lectures: int) -> tuple[dict, dict[Hashable, list[str]]]:
    """One user's sessions on ``dates`` (``v``: a language's chatter, ``pools._EN`` / ``_ZH``): two to four pairs of
    chatter each, every ``placed`` statement (session, text, its tag or None) among them followed by the assistant's
    acknowledgement, and ``lectures`` long off-topic answers. A placed (user's words, assistant's answer) pair is
    said as it stands, the tag on the assistant's turn (``recalls``: what the assistant told the user). Returns the
    LoCoMo-shape conversation and, per tag, the dialog IDs that told it, in order."""
    user, assistant = v["user"], v["assistant"]
    conversation: dict = {"speaker_a": user, "speaker_b": assistant}
    told_at: dict[Hashable, list[str]] = {}
    talks = rng.sample(lecture_src, min(lectures, len(lecture_src)))
    lecture_at = {rng.randrange(len(dates)): talk for talk in talks}
    for index, when in enumerate(dates):
        rows: list[tuple[str, str, Hashable | None]] = []
        for _ in range(rng.randint(2, 4)):
            fill = {"p": rng.choice(people), "city": rng.choice(names["cities"]), "food": rng.choice(v["foods"]),
                    "event": rng.choice(v["events"]), "sport": rng.choice(v["sports"])}
            rows += [(user, rng.choice(v["chat"]).format(**fill), None), (assistant, rng.choice(v["reply"]), None)]
        for slot, text, tag in placed:
            if slot == index:
                at = rng.randrange(0, len(rows) + 1, 2)
                if isinstance(text, tuple):  # no acknowledgement drawn: the other kinds' draws stay as they were
                    rows[at:at] = [(user, text[0], None), (assistant, text[1], tag)]
                else:
                    rows[at:at] = [(user, text, tag), (assistant, rng.choice(v["ack"]), None)]
        if index in lecture_at:
            title, body = lecture_at[index]
            rows += [(user, rng.choice(v["ask"]).format(t=title), None), (assistant, body, None)]
        session = index + 1
        conversation[f"session_{session}_date_time"] = stamp(when)
        conversation[f"session_{session}"] = []
        for t_index, (speaker, text, tag) in enumerate(rows, 1):
            dia = f"D{session}:{t_index}"
            conversation[f"session_{session}"].append({"speaker": speaker, "dia_id": dia, "text": text})
            if tag is not None:
                told_at.setdefault(tag, []).append(dia)
    return conversation, told_at
