"""The pooled-memory kinds: one tenant of templated statements (``zh``, ``en``, ``zh_events``) and the
per-user memories built from the same pool (``zh_users`` and its variants).

Its own file because the statement templates, the chat around them and the LoCoMo-shape record they are
written into are what every pool and per-user kind shares, and nothing the chains use.
"""

from __future__ import annotations

import random
import re

from benchmarks.dev_material.sources import Sources, _unique_names, chinese_names, english_names

_ZH = {
    "events": ["婚礼", "生日聚会", "毕业典礼", "乔迁宴", "同学聚会", "读书会", "摄影展", "订婚宴", "钢琴演奏会", "退休欢送会"],
    "foods": ["红烧肉", "小笼包", "麻婆豆腐", "酸菜鱼", "北京烤鸭", "煎饼果子", "螺蛳粉", "担担面", "叉烧包", "羊肉泡馍"],
    "pets": ["豆豆", "团子", "咪咪", "花卷", "可乐", "年糕", "布丁", "球球", "雪球", "大黄"],
    "sports": ["羽毛球", "游泳", "乒乓球", "瑜伽", "登山", "篮球", "网球", "跑步"],
    "attributes": {
        "birthday": ("{p}的生日是{m}月{d}日。", "{p}的生日是哪天？", "{p}是几月几号出生的？"),
        "hometown": ("{p}的家乡是{city}。", "{p}的家乡是哪里？", "{p}老家在哪座城市？"),
        "work": ("{p}的工作单位是{org}。", "{p}的工作单位是什么？", "{p}在哪儿上班？"),
        "pet": ("{p}的宠物猫叫{pet}。", "{p}的宠物猫叫什么？", "{p}家养的那只猫名字是什么？"),
        "food": ("{p}最喜欢的食物是{food}。", "{p}最喜欢的食物是什么？", "{p}最爱吃什么？"),
        "sport": ("{p}最喜欢的运动是{sport}。", "{p}最喜欢的运动是什么？", "{p}平时爱做什么锻炼？"),
        "place": ("{p}的{event}的地点是{city}。", "{p}的{event}的地点是哪里？", "{p}的{event}在哪个城市办？"),
        "time": ("{p}的{event}的时间是{m}月{d}日。", "{p}的{event}的时间是什么时候？", "{p}的{event}定在哪一天？"),
    },
    "say": ["对了，{s}", "记一下：{s}", "刚想起来，{s}", "{s}别忘了。"],
    "ack": ["好的，记下了。", "收到，我记住了。", "好的，已经记录。"],
    "chat": ["周末和{p}去{city}逛了逛，还吃了{food}。", "{p}最近在忙{event}的事情，听说要请很多朋友。",
             "我跟{p}约好下个月一起去{city}玩。", "{p}说{city}的{food}比别处好吃多了。",
             "今天在地铁上碰到{p}了，聊了半天{sport}。", "{p}问我要不要一起去参加{event}，我还没想好。"],
    "reply": ["听起来不错！", "那挺好的，玩得开心。", "要不要我帮你记一下时间？", "好的，有需要再告诉我。"],
    "ask": ["帮我整理一下关于“{t}”的资料。", "给我讲讲{t}吧。", "我想了解一下{t}。"],
    "user": "小林", "assistant": "助手",
}
_EN = {
    "events": ["wedding", "birthday party", "graduation ceremony", "housewarming party", "class reunion",
               "book club meeting", "photo exhibition", "engagement dinner", "piano recital", "retirement party"],
    "foods": ["lasagna", "pad thai", "fish tacos", "mushroom risotto", "beef stew", "ramen", "falafel", "paella",
              "dumplings", "shepherd's pie"],
    "pets": ["Biscuit", "Pepper", "Mochi", "Luna", "Ziggy", "Noodle", "Waffles", "Clover", "Pickles", "Juniper"],
    "sports": ["badminton", "swimming", "table tennis", "yoga", "hiking", "basketball", "tennis", "rowing"],
    "attributes": {
        "birthday": ("{p}'s birthday is {month} {d}.", "When is {p}'s birthday?", "On what date was {p} born?"),
        "hometown": ("{p}'s hometown is {city}.", "What is {p}'s hometown?", "Which town did {p} grow up in?"),
        "work": ("{p}'s workplace is {org}.", "What is {p}'s workplace?", "Where does {p} have a job?"),
        "pet": ("{p}'s pet cat is called {pet}.", "What is {p}'s pet cat called?",
                "What name did {p} give the family kitty?"),
        "food": ("{p}'s favourite food is {food}.", "What is {p}'s favourite food?", "What does {p} love to eat most?"),
        "sport": ("{p}'s favourite sport is {sport}.", "What is {p}'s favourite sport?",
                  "How does {p} like to keep fit?"),
        "place": ("The venue of {p}'s {event} is {city}.", "What is the venue of {p}'s {event}?",
                  "In which town will {p}'s {event} be held?"),
        "time": ("The date of {p}'s {event} is {month} {d}.", "What is the date of {p}'s {event}?",
                 "On which day is {p}'s {event} taking place?"),
    },
    "say": ["Oh, one more thing. {s}", "Note this down. {s}", "Just remembered something. {s}", "{s} Don't forget."],
    "ack": ["Okay, noted.", "Got it, I'll remember that.", "Sure, saved."],
    "chat": ["Went to {city} with {p} at the weekend and had some {food}.",
             "{p} is busy with the {event} lately, apparently lots of friends are invited.",
             "I agreed with {p} to visit {city} together next month.",
             "{p} says the {food} in {city} beats anything else.",
             "Bumped into {p} on the train today and we talked about {sport} for ages.",
             "{p} asked whether I want to come to the {event}; I haven't decided."],
    "reply": ["Sounds lovely!", "That's nice, have fun.", "Want me to note the time?", "Sure, tell me if you need anything."],
    "ask": ["Can you put together some background on {t}?", "Tell me about {t}.", "I'd like to learn about {t}."],
    "user": "Lin", "assistant": "Assistant",
}
# Nameless events: a group, a time and an activity, each shared by many events; only the combination tells
# one from another. Paraphrases swap every part for a synonym.
_ZH_EVENTS = {
    "groups": [("部门", "部门里"), ("公司", "单位"), ("高中同学", "高中同学们"), ("大学室友", "大学寝室"),
               ("家族", "家里亲戚"), ("社区", "小区"), ("羽毛球队", "羽毛球队友"), ("合唱团", "合唱团的人"),
               ("研究生同学", "读研时的同学"), ("老同事", "以前的同事")],
    "times": [("去年春天", "去年春季"), ("去年夏天", "去年暑期"), ("去年秋天", "去年秋季"), ("去年冬天", "去年冬季"),
              ("今年元旦", "今年新年"), ("今年五一", "今年劳动节"), ("今年国庆", "今年十一"),
              ("前年春节", "前年过年"), ("上个月", "上月"), ("明年三月", "明年3月")],
    "activities": [("聚餐", "吃饭"), ("团建", "团队活动"), ("旅行", "出游"), ("年会", "年终聚会"), ("露营", "野营"),
                   ("徒步", "远足"), ("音乐会", "演出"), ("运动会", "比赛"), ("摄影展", "影展"), ("读书会", "读书分享")],
    "event": ("{g}{t}的{a}", "{g2}{t2}那次{a2}"),  # an event's name, and its paraphrase
    "attributes": {
        "place": ("{e}的地点是{city}。", "{e}的地点是哪里？", "{e2}是在哪个城市办的？"),
        "size": ("{e}的人数是{n}人。", "{e}的人数是多少？", "{e2}一共去了几个人？"),
        "lead": ("{e}的负责人是{p}。", "{e}的负责人是谁？", "{e2}是谁张罗的？"),
    },
    "chat": ["{e}挺好玩的，{city}的风景不错。", "还在想{e}要不要叫上{p}。", "{e}的照片我还没整理完。",
             "{p}说{e}订的酒店在{city}，离车站很近。"],
}
# Time words the events above never use, for a check that keyword terms which join two spellings of a time
# word (agent_memory/core/text.py TIME_WORD_FORMS, written from the six pairs above that it joins) hold on
# spellings nobody measured them on: common pairs of the language, eight of them joined by that table and
# three not when it was written (十一 is also a number; 年底 / 年末 is not in it; 上个周末 joined it after
# this set's first run lost a question to it). The events keep their groups and activities; only the times
# differ (make_users(times=...)).
UNSEEN_TIMES = [("上个星期", "上礼拜"), ("这个月", "本月"), ("下个月", "下月"), ("去年中秋", "去年中秋节"),
                ("今年端午", "今年端午节"), ("今年清明", "今年清明节"), ("去年圣诞节", "去年圣诞"),
                ("前年暑假", "前年暑期"), ("前年国庆节", "前年十一"), ("去年年底", "去年年末"), ("上周末", "上个周末")]
# Weekdays, for the keyword terms' weekday rule (agent_memory/core/text.py _WEEKDAY: 上个星期五 is 上周五):
# each pair names one day two ways, neither spelling used by another kind. Written with the rule, so a set
# made from these shows what the rule does end to end, not that it holds on spellings nobody looked at.
WEEKDAY_TIMES = [("上周五", "上个星期五"), ("上周一", "上礼拜一"), ("上个周三", "上星期三"), ("这周六", "这个星期六"),
                 ("本周日", "这周天"), ("下周二", "下个礼拜二"), ("下周四", "下星期四"), ("上周日", "上个礼拜天"),
                 ("这周五", "本周五"), ("下个周六", "下礼拜六")]
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]


def _event_statements(rng: random.Random, n: int, cities: list[str], people: list[str],
                      times: list[tuple[str, str]], table: dict) -> list[tuple[str, str, str, str]]:
    """``n`` distinct events of ``table`` (``_ZH_EVENTS`` or its English counterpart), each with two of its
    attributes stated."""
    combos = [(g, t, a) for g in table["groups"] for t in times for a in table["activities"]]
    name, name2 = table["event"]
    out = []
    for (g, g2), (t, t2), (a, a2) in rng.sample(combos, min(n, len(combos))):
        event, event2 = name.format(g=g, t=t, a=a), name2.format(g2=g2, t2=t2, a2=a2)
        for attr in rng.sample(sorted(table["attributes"]), 2):
            fill = {"e": event, "e2": event2, "city": rng.choice(cities), "n": rng.randint(5, 80),
                    "p": rng.choice(people)}
            text, q1, q2 = (t.format(**fill) for t in table["attributes"][attr])
            out.append((text, q1, q2, attr))
    return out


def _stamp(day: int) -> str:
    """LoCoMo's session date format, one day apart from 1 March 2024."""
    month, dom = divmod(day, 28)
    return f"{1 + day % 11}:{day % 6}0 pm on {1 + dom} {_MONTHS[(2 + month) % 12]}, {2024 + (2 + month) // 12}"


def make_pool(src: Sources, rng: random.Random, lang: str, *, people: int = 170, questions: int = 240,
              turn_share: float = 0.25, lectures: int = 100, chats: int = 250, foreign_docs: int = 80,
              locomo_sessions: int = 5, events: int = 0, mixed: bool = False,
              times: list[tuple[str, str]] | None = None, event_table: dict | None = None) -> list[dict]:
    """One LoCoMo-shape record (one tenant): conversation sessions plus ``documents``; questions ask for one
    statement each. ``events`` > 0: statements about that many nameless events (group, time and activity) of
    ``event_table`` (``_ZH_EVENTS`` unless given; ``users_en.EN_EVENTS`` for English) in place of the
    statements about people; with ``mixed``, beside them (and chat about both). ``times``: the events'
    (time, its paraphrase) pairs, the table's own unless given."""
    table = _ZH_EVENTS if event_table is None else event_table
    times = table["times"] if times is None else times
    v = _ZH if lang == "zh" else _EN
    articles = src.articles()
    paragraphs = src.paragraphs()
    if lang == "zh":
        zh = chinese_names(articles)
        names = list(zh.people)
        surnames = sorted({n[0] for n in names})
        givens = sorted({n[1:] for n in names})
        for _ in range(people * 2):
            names.append(rng.choice(surnames) + rng.choice(givens))
        names = sorted(set(names))
        cities, orgs = zh.cities, zh.orgs or [f"{c}大学" for c in zh.cities]
        lecture_src = [(t, body) for t, body in articles]
        foreign = [(t, paragraphs[t]) for t in sorted(paragraphs)]
    else:
        en = english_names(paragraphs)
        names = _unique_names(rng, en.firsts, en.lasts, people * 2, en.taken)
        cities = [c for c, _ in en.cities]
        orgs = en.universities + [t for t in sorted(paragraphs) if re.search(r"\b(Company|Corporation|Records|Media|"
                                                                            r"Bank|Hospital|Group)\b", t)]
        titles = sorted(paragraphs)
        lecture_src = [(t, paragraphs[t] + " " + paragraphs[titles[(i * 7 + 3) % len(titles)]])
                       for i, t in enumerate(titles)]
        foreign = [(t, body) for t, body in articles]
    rng.shuffle(names)
    people_used = names[:people]

    # Statements: every person gets most attributes and two events (place and time each).
    statements: list[tuple[str, str, str, str]] = []  # (text, template question, paraphrase, attribute)
    for p in people_used:
        attrs = ["birthday", "hometown", "work", *rng.sample(["pet", "food", "sport"], 2)]
        for attr in attrs:
            m, d = rng.randint(1, 12), rng.randint(1, 28)
            fill = {"p": p, "m": m, "d": d, "month": _MONTHS[m - 1], "city": rng.choice(cities),
                    "org": rng.choice(orgs), "pet": rng.choice(v["pets"]), "food": rng.choice(v["foods"]),
                    "sport": rng.choice(v["sports"])}
            text, q1, q2 = (t.format(**fill) for t in v["attributes"][attr])
            statements.append((text, q1, q2, attr))
        for event in rng.sample(v["events"], 2):
            for attr in ("place", "time"):
                m, d = rng.randint(1, 12), rng.randint(1, 28)
                fill = {"p": p, "event": event, "m": m, "d": d, "month": _MONTHS[m - 1], "city": rng.choice(cities)}
                text, q1, q2 = (t.format(**fill) for t in v["attributes"][attr])
                statements.append((text, q1, q2, attr))
    if events and mixed:
        statements, chat_lines = statements + _event_statements(rng, events, cities, people_used, times, table), [
            *v["chat"], *table["chat"]]
    elif events:
        statements, chat_lines = _event_statements(rng, events, cities, people_used, times, table), table["chat"]
    else:
        chat_lines = v["chat"]
    rng.shuffle(statements)

    documents: list[dict] = []
    said: list[tuple[int, str]] = []  # statements said in chat: (index, turn text)
    where: dict[int, str] = {}  # statement index → evidence id (document id or dia_id, filled below)
    for index, (text, *_rest) in enumerate(statements):
        if rng.random() < turn_share:
            said.append((index, rng.choice(v["say"]).format(s=text)))
        else:
            where[index] = f"N{len(documents)}"
            documents.append({"id": f"N{len(documents)}", "title": "", "text": text})
    rng.shuffle(foreign)
    documents += [{"id": f"F{i}", "title": t, "text": body} for i, (t, body) in enumerate(foreign[:foreign_docs])]

    # Daily-life sessions: statements said in passing and chat about the same people, places, food, events.
    user, assistant = v["user"], v["assistant"]
    turns: list[tuple[str, str, int | None]] = []  # (speaker, text, statement index)
    for index, text in said:
        turns += [(user, text, index), (assistant, rng.choice(v["ack"]), None)]
    for _ in range(chats):
        fill = {"p": rng.choice(people_used), "city": rng.choice(cities), "food": rng.choice(v["foods"]),
                "event": rng.choice(v["events"]), "sport": rng.choice(v["sports"])}
        if events:
            g, t, a = rng.choice(table["groups"])[0], rng.choice(times)[0], rng.choice(table["activities"])[0]
            fill["e"] = table["event"][0].format(g=g, t=t, a=a)
        turns += [(user, rng.choice(chat_lines).format(**fill), None), (assistant, rng.choice(v["reply"]), None)]
    pairs = [turns[i:i + 2] for i in range(0, len(turns), 2)]
    rng.shuffle(pairs)
    # Off-topic lectures: the user asks about an article, the assistant recites it (long turns).
    rng.shuffle(lecture_src)
    lecture_pairs = [[(user, rng.choice(v["ask"]).format(t=t), None), (assistant, body, None)]
                     for t, body in lecture_src[:lectures]]
    sessions: list[list[tuple[str, str, int | None]]] = []
    while pairs or lecture_pairs:
        session: list[tuple[str, str, int | None]] = []
        for _ in range(rng.randint(4, 8)):
            source = lecture_pairs if lecture_pairs and (rng.random() < 0.3 or not pairs) else pairs
            if source:
                session += source.pop()
        sessions.append(session)

    conversation: dict = {"speaker_a": user, "speaker_b": assistant}
    number = 0
    for number, session in enumerate(sessions, 1):
        conversation[f"session_{number}_date_time"] = _stamp(number)
        rows = []
        for t_index, (speaker, text, statement) in enumerate(session, 1):
            dia = f"D{number}:{t_index}"
            rows.append({"speaker": speaker, "dia_id": dia, "text": text})
            if statement is not None:
                where[statement] = dia
        conversation[f"session_{number}"] = rows
    # English conversation from LoCoMo's first record (its own speakers and dates kept).
    locomo = src.locomo[0]["conversation"]
    for k in range(1, locomo_sessions + 1):
        if f"session_{k}" not in locomo:
            break
        number += 1
        conversation[f"session_{number}_date_time"] = locomo.get(f"session_{k}_date_time", "")
        conversation[f"session_{number}"] = [{"speaker": t["speaker"], "dia_id": f"D{number}:{i}", "text": t["text"]}
                                             for i, t in enumerate(locomo[f"session_{k}"], 1)]

    qa = []
    asked = rng.sample(range(len(statements)), min(questions, len(statements)))
    for n, index in enumerate(asked):
        text, q1, q2, attr = statements[index]
        phrased = "template" if n % 2 == 0 else "paraphrase"
        kind = "note" if where[index].startswith("N") else "said"
        qa.append({"question": q1 if phrased == "template" else q2, "answer": text, "evidence": [where[index]],
                   "category": 4, "kind": f"{kind}-{phrased}", "attribute": attr})
    return [{"sample_id": f"{lang}-pool", "conversation": conversation, "documents": documents, "qa": qa}]


def make_users(src: Sources, rng: random.Random, *, users: int = 6, people: int = 8, questions: int = 30,
               chats: int = 60, lectures: int = 8, events: int = 0, times: list[tuple[str, str]] | None = None,
               lang: str = "zh", event_table: dict | None = None) -> list[dict]:
    """``users`` LoCoMo-shape records, each one user's daily memory in ``lang`` (``make_pool`` per user,
    drawn one after another from ``rng``): every statement said in chat (no notes, no foreign documents, no
    LoCoMo sessions), so a store is a few hundred short messages, as an assistant's memory of one person
    is, rather than one pooled tenant of thousands. ``events`` > 0: that many nameless events (group, time,
    activity) of ``event_table`` beside the statements about people, and chat about both, their times from
    ``times``. English (``users_en.make_en_users``) passes its own event table."""
    records = []
    for user in range(users):
        record = make_pool(src, rng, lang, people=people, questions=questions, turn_share=1.0, lectures=lectures,
                           chats=chats, foreign_docs=0, locomo_sessions=0, events=events, mixed=True,
                           times=times, event_table=event_table)[0]
        record["sample_id"] = f"{lang}-user{user}"
        records.append(record)
    return records
