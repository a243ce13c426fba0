"""The group-chat kinds (``zh_group``, ``en_group``): friends chatting, each telling things about themselves
in the first person, so that only the speaker says whose fact a turn holds.

Its own file because nothing else here has several named speakers: the pools are one user and an
assistant. LoCoMo is this kind in English with two speakers ("What is Caroline's identity?" is answered by a
turn of Caroline's that never names her); ``zh_group`` is the same in Chinese, where a name in a question
is written without spaces around it, and ``en_group`` in English with four speakers.
"""

from __future__ import annotations

import random

from benchmarks.dev_material.pools import _EN, _MONTHS, _ZH, _stamp
from benchmarks.dev_material.sources import Sources, chinese_names, english_names

# attribute → (what the friend says, the question in the statement's words, the question paraphrased)
_FACTS = {
    "sport": ("我最喜欢的运动是{sport}。", "{p}最喜欢的运动是什么？", "{p}平时爱做什么锻炼？"),
    "food": ("我最喜欢的食物是{food}。", "{p}最喜欢的食物是什么？", "{p}最爱吃什么？"),
    "pet": ("我家的猫叫{pet}。", "{p}家的猫叫什么？", "{p}养的那只猫名字是什么？"),
    "hometown": ("我的老家在{city}。", "{p}的老家在哪里？", "{p}是哪座城市的人？"),
    "work": ("我现在在{org}上班。", "{p}现在在哪里上班？", "{p}的工作单位是什么？"),
    "birthday": ("我的生日是{m}月{d}日。", "{p}的生日是哪天？", "{p}是几月几号出生的？"),
    "trip": ("我上次旅行去的是{city}。", "{p}上次旅行去的是哪里？", "{p}最近一次出去玩去了哪座城市？"),
}
# Chat that names the others and the same kinds of things, so that neither a name nor a topic word in a
# turn says whose fact it holds.
_CHAT = ["{q}，周末一起去{city}吗？", "好啊，叫上{q}一起。", "{q}上次推荐的{food}真不错。", "哈哈，{q}又迟到了。",
         "我最近在练{sport}，{q}要不要一起？", "{q}家的猫好可爱，叫什么来着？", "听说{q}要去{city}出差。",
         "{q}，你的{sport}练得怎么样了？", "下次聚餐吃{food}吧，{q}肯定喜欢。", "{q}生日快到了，我们准备点什么？"]
_REPLIES = ["好呀！", "哈哈哈", "可以可以。", "我也想去。", "没问题。", "真的吗？", "太好了！", "周六可以。"]
_EN_FACTS = {
    "sport": ("My favourite sport is {sport}.", "What is {p}'s favourite sport?", "How does {p} like to keep fit?"),
    "food": ("My favourite food is {food}.", "What is {p}'s favourite food?", "What does {p} love to eat most?"),
    "pet": ("Our cat is called {pet}.", "What is {p}'s cat called?", "What name did {p} give the family kitty?"),
    "hometown": ("I grew up in {city}.", "Where did {p} grow up?", "Which town is {p} from?"),
    "work": ("I work at {org} now.", "Where does {p} work now?", "What is {p}'s workplace?"),
    "birthday": ("My birthday is {month} {d}.", "When is {p}'s birthday?", "On what date was {p} born?"),
    "trip": ("My last trip was to {city}.", "Where did {p} go on the last trip?", "Which town did {p} travel to last?"),
}
_EN_CHAT = ["{q}, want to go to {city} this weekend?", "Sure, let's bring {q} along.", "The {food} {q} recommended was great.",
            "Haha, {q} is late again.", "I've been practising {sport}, {q}, want to join?", "{q}, your cat is so cute, what's its name again?",
            "I heard {q} is off to {city} for work.", "{q}, how is your {sport} going?", "Let's have {food} next time, {q} will love it.",
            "{q}'s birthday is coming up, what should we get?"]
_EN_REPLIES = ["Sounds good!", "Haha", "Sure.", "Count me in.", "No problem.", "Really?", "Great!", "Saturday works."]


def make_group_chats(src: Sources, rng: random.Random, *, lang: str = "zh", groups: int = 6, friends: int = 4,
                     chats: int = 120, questions: int = 24) -> list[dict]:
    """``groups`` LoCoMo-shape records, each one group's chat: every friend states every fact of
    ``_FACTS`` (``_EN_FACTS``) once, in their own words, among ``chats`` lines of chatter and replies;
    ``questions`` ask for one friend's fact each by name, half in the statement's words, half paraphrased."""
    if lang == "zh":
        zh = chinese_names(src.articles())
        names = sorted({n for n in zh.people if len(n) in (2, 3)})
        cities, orgs = zh.cities, zh.orgs or [f"{c}大学" for c in zh.cities]
        v, facts_of, chat_lines, replies = _ZH, _FACTS, _CHAT, _REPLIES
    else:
        en = english_names(src.paragraphs())
        names = en.firsts  # friends call each other by their first names
        cities, orgs = [c for c, _ in en.cities], en.universities or [f"{c} College" for c, _ in en.cities]
        v, facts_of, chat_lines, replies = _EN, _EN_FACTS, _EN_CHAT, _EN_REPLIES
    records = []
    for group in range(groups):
        members = rng.sample(names, friends)
        facts: list[tuple[str, str, str, str, str]] = []  # (speaker, text, question, paraphrase, attribute)
        for p in members:
            for attr, (said, q1, q2) in facts_of.items():
                fill = {"p": p, "sport": rng.choice(v["sports"]), "food": rng.choice(v["foods"]),
                        "pet": rng.choice(v["pets"]), "city": rng.choice(cities), "org": rng.choice(orgs),
                        "m": (m := rng.randint(1, 12)), "month": _MONTHS[m - 1], "d": rng.randint(1, 28)}
                facts.append((p, said.format(**fill), q1.format(**fill), q2.format(**fill), attr))
        lines: list[tuple[str, str, int | None]] = [(p, text, i) for i, (p, text, *_r) in enumerate(facts)]
        for _ in range(chats):
            speaker, other = rng.sample(members, 2)
            fill = {"q": other, "city": rng.choice(cities), "food": rng.choice(v["foods"]),
                    "sport": rng.choice(v["sports"])}
            lines.append((speaker, rng.choice(chat_lines).format(**fill), None))
            lines.append((rng.choice([m for m in members if m != speaker]), rng.choice(replies), None))
        rng.shuffle(lines)

        conversation: dict = {"speaker_a": members[0], "speaker_b": members[1]}
        where: dict[int, str] = {}
        number, start = 0, 0
        while start < len(lines):
            number += 1
            size = rng.randint(6, 12)
            conversation[f"session_{number}_date_time"] = _stamp(number)
            rows = []
            for t_index, (speaker, text, fact) in enumerate(lines[start:start + size], 1):
                rows.append({"speaker": speaker, "dia_id": f"D{number}:{t_index}", "text": text})
                if fact is not None:
                    where[fact] = f"D{number}:{t_index}"
            conversation[f"session_{number}"] = rows
            start += size
        qa = []
        for n, index in enumerate(rng.sample(range(len(facts)), min(questions, len(facts)))):
            speaker, text, q1, q2, attr = facts[index]
            phrased = "template" if n % 2 == 0 else "paraphrase"
            qa.append({"question": q1 if phrased == "template" else q2, "answer": f"{speaker}: {text}",
                       "evidence": [where[index]], "category": 4, "kind": f"said-{phrased}", "attribute": attr})
        records.append({"sample_id": f"{lang}-group{group}", "conversation": conversation, "qa": qa})
    return records
