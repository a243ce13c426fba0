"""The kinds that ask for a recommendation a standing preference decides (``en_users_preferences``,
``zh_users_preferences``): one user's months of chat in which, once and in passing, they tell of a preference or
constraint of their own (they went vegetarian, they are allergic to sesame, a knee injury, night shifts, a dog
that can't be left alone, no more planes), among other people's preferences of the same domain told by the user
("My friend Ana went vegan last year."), chatter and a few off-topic lectures.

Months later the user asks for a recommendation whose right answer depends on it, without naming it ("Can you
suggest a recipe for dinner tonight?"), half in other words; its evidence is the user's statement alone and its
answer the preference told there. LongMemEval's single-session-preference shape in one user's memory. Nothing the
product was tuned on has this shape: the question shares no content word with its evidence (no two Han characters
in a row, in Chinese), so only meaning links them, and the other people's preferences of the same domain are the
distractors nearest in meaning.

Its own file because the table of domains (statements, values, questions) is all this kind needs beyond the
sources' names and the sessions of ``updates.chat_sessions``.
"""

from __future__ import annotations

import random

from benchmarks.dev_material.pools import _EN, _ZH
from benchmarks.dev_material.updates import _lists, chat_sessions, user_months

# domain: (the user's statements, said in passing, values fitting each, (question, its paraphrase), other people's
# statements). Values are distinct across a language's table (none inside another), so a value is said only where
# it was told; no statement shares a content word with its domain's questions.
_EN_DOMAINS = {
    "diet": (["I went {v} last spring, by the way, and I'm sticking with it.",
              "Oh, I've been {v} for a few months now, feeling great on it."], ["vegetarian", "vegan", "pescatarian"],
             ("Can you suggest a recipe for dinner tonight?", "What should I cook this evening?"),
             ["My friend {p} went {v} last year.", "{p} has been {v} since college."]),
    "allergy": (["Found out I'm allergic to {v}, so that's fun.",
                 "Turns out I react badly to {v}; my doctor confirmed it last week."],
                ["peanuts", "shellfish", "sesame"],
                ("What should I order at the Thai place on Friday?",
                 "Which dishes would you recommend when we go out for Thai food?"),
                ["{p} is allergic to {v}.", "{p} can't go near {v}, apparently."]),
    "injury": (["Still nursing a {v} from last winter, the physio says patience.",
                "That {v} of mine flared up again, so I'm taking it easy."],
               ["knee injury", "sprained ankle", "slipped disc"],
               ("Can you put together a workout plan for me?", "Which exercises would you recommend to get in shape?"),
               ["{p} is off work with a {v}.", "{p} has been limping around with a {v}."]),
    "music": (["Honestly, {v} is all I've had on repeat lately.", "I've been getting really into {v} this year."],
              ["jazz", "heavy metal", "bluegrass"],
              ("What should I listen to on my commute?", "Got any album picks for the drive to work?"),
              ["{p} only listens to {v}.", "My friend {p} dragged me to a {v} gig."]),
    "travel": (["I don't do {v} anymore, not after that awful trip.",
                "Never again with {v}; I had a panic attack on the last one."], ["planes", "ferries", "night buses"],
               ("How should I get to Barcelona for the conference in March?",
                "What's the best way for me to reach Barcelona for that March conference?"),
               ["{p} refuses to take {v}.", "{p} swore off {v} years ago."]),
    "caffeine": (["I quit {v} in January and I'm not going back.",
                  "Forty days without {v} now, and the headaches have finally stopped."],
                 ["coffee", "green tea", "energy drinks"],
                 ("How do I stay awake for my late study session tonight?",
                  "Any tips for keeping alert through an all-nighter?"),
                 ["{p} lives on {v}.", "{p} is trying to cut down on {v}."]),
    "budget": (["Saving hard for a deposit, so I'm capping my fun money at {v} a month.",
                "New rule until the flat is bought: no more than {v} a month on going out."],
               ["fifty pounds", "eighty pounds", "a hundred pounds"],
               ("Where should I take my girlfriend for her birthday?",
                "Any ideas for celebrating my partner's birthday?"),
               ["{p} is trying to live on {v} a week.", "{p} set a budget of {v} for the whole trip."]),
    "reading": (["I've been devouring {v} lately, can't get enough of it.",
                 "Give me {v} any day, that's my kind of thing."],
                ["science fiction", "true crime", "poetry"],
                ("What should I read next?", "Any book recommendations for my week off?"),
                ["{p} only reads {v}.", "{p} lent me a pile of {v}."]),
    "schedule": (["I'm on {v} at the hospital now, so my days are all over the place.",
                  "Switched to {v} last month, my sleep is a mess."],
                 ["night shifts", "early shifts", "weekend shifts"],
                 ("When's a good time to book a dentist appointment?", "What's the best slot for my dentist visit?"),
                 ["{p} has worked {v} for years.", "{p} just got put on {v}."]),
    "pet": (["Adopted a {v} who panics if left alone for more than an hour.",
             "My new {v} howls the whole time I'm out; the neighbours have complained."],
            ["rescue greyhound", "border collie", "dachshund"],
            ("Could you plan a full day out for me this Saturday?", "Any ideas for a long day trip on Saturday?"),
            ["{p} just got a {v}.", "{p}'s {v} chewed through a sofa."]),
    "climate": (["I really can't cope with {v}, it wipes me out.", "Honestly, {v} and I have never got along."],
                ["the heat", "big crowds", "heights"],
                ("Where should I go for my summer holiday?", "Which destination would you pick for my August trip?"),
                ["{p} can't stand {v}.", "{p} hates {v}, always has."]),
    "screen": (["I'm hooked on {v}, can't get enough of them.", "Lately it's nothing but {v} for me in the evenings."],
               ["Korean dramas", "nature documentaries", "stand-up specials"],
               ("What should I watch this weekend?", "Any show you'd recommend for a lazy Sunday?"),
               ["{p} binges {v} every night.", "{p} keeps sending me {v}."]),
}
_ZH_DOMAINS = {
    "diet": (["我从去年春天起改吃{v}了，一直坚持着。", "顺便说下，我吃{v}快一年了，感觉身体轻松不少。"], ["素食", "纯素", "蛋奶素"],
             ("今晚做点什么菜好？", "晚饭有什么推荐的做法吗？"), ["我朋友{p}去年开始吃{v}了。", "{p}吃{v}好几年了。"]),
    "allergy": (["我前阵子查出来对{v}过敏，以后得小心了。", "医生说我{v}过敏，沾一点都不行。"], ["花生", "虾蟹", "芒果"],
                ("周五去吃泰国菜，点什么好？", "下馆子吃东南亚菜的话，你建议我点哪几道？"), ["{p}对{v}过敏。", "{p}一碰{v}就起疹子。"]),
    "injury": (["我{v}的老伤又犯了，医生让我悠着点。", "上回滑雪把{v}伤了，到现在还没好利索。"], ["膝盖", "腰椎", "肩袖"],
               ("帮我排个健身计划吧？", "想练练身体，你觉得该从哪些运动入手？"),
               ["{p}的{v}受过伤，医生不让他剧烈运动。", "{p}去年做了{v}手术。"]),
    "music": (["最近单曲循环的全是{v}，别的都听不进去。", "说真的，我现在就迷{v}，一听就上头。"], ["爵士乐", "重金属", "民谣"],
              ("上下班路上听点什么好？", "开车通勤的时候，有没有歌单可以推荐？"), ["{p}只听{v}。", "{p}约我下个月去看{v}的现场。"]),
    "travel": (["我现在死活不{v}了，上回吓出阴影了。", "{v}我是真怕了，上次差点没缓过来。"], ["坐飞机", "坐船", "坐夜车"],
               ("下个月去厦门开会，怎么过去比较好？", "去厦门参加那个会，你建议我走哪条路线？"),
               ["{p}从来不{v}。", "{p}说这辈子再也不{v}了。"]),
    "caffeine": (["我年初把{v}戒了，现在一口都不喝。", "戒{v}第四十天了，头总算不疼了。"], ["咖啡", "奶茶", "浓茶"],
                 ("今晚要熬夜复习，怎么提神比较好？", "通宵赶工的时候，有什么办法不犯困？"), ["{p}一天都离不开{v}。", "{p}最近也在戒{v}。"]),
    "budget": (["我在攒首付，每个月娱乐开销最多{v}，多一分都不花。", "给自己定了规矩，房子买下来之前，一个月玩乐就{v}的预算。"],
               ["两千块", "一千五百块", "八百块"], ("女朋友生日快到了，带她去哪儿庆祝好？", "对象过生日，有什么安排的点子吗？"),
               ["{p}每个月只给自己留{v}零花钱。", "{p}说这趟旅行总共只花{v}。"]),
    "reading": (["最近在啃{v}，一本接一本停不下来。", "我这人就好{v}这口，别的看不进去。"], ["科幻小说", "推理小说", "历史传记"],
                ("放假想带几本书在路上翻翻，有啥推荐？", "下周去海边度假，带什么书读合适？"), ["{p}只看{v}。", "{p}送了我一套{v}。"]),
    "schedule": (["我现在在医院上{v}，作息全乱套了。", "换成{v}一个多月了，睡觉都不规律。"], ["夜班", "早班", "周末班"],
                 ("想约个牙医，几点去比较合适？", "去看牙挑什么时段最方便？"), ["{p}上了好几年{v}了。", "{p}刚被排到{v}。"]),
    "pet": (["我家新来的{v}离不开人，单独待一小时就拆家。", "领养了只{v}，我一出门它就叫个不停，邻居都投诉了。"], ["边牧", "柯基", "哈士奇"],
            ("帮我安排一整天的周六行程吧？", "这礼拜六想在外面玩一整天，怎么安排？"), ["{p}刚养了只{v}。", "{p}家的{v}把沙发咬坏了。"]),
    "climate": (["我这人特别{v}，一到那种地方就浑身难受。", "说实话我{v}得很，这毛病改不了。"], ["怕热", "怕晒", "恐高"],
                ("八月想出去度个假，去哪儿合适？", "暑假旅游你推荐什么目的地？"), ["{p}特别{v}。", "{p}从小就{v}。"]),
    "screen": (["最近下班回家就追{v}，根本停不下来。", "我现在就爱看{v}，别的都没兴趣。"], ["韩剧", "纪录片", "脱口秀"],
               ("周末在家闲着，看点什么好？", "有没有适合躺沙发上消磨时间的片子？"), ["{p}天天追{v}。", "{p}一直安利我看{v}。"]),
}


def make_preferences(src, rng: random.Random, lang: str, *, users: int = 8, sessions: int = 40, kinds: int = 6,
                     lectures: int = 6, changed: bool = False) -> list[dict]:
    """``users`` LoCoMo-shape records (``{lang}-preferences0`` ...), each one user's chat over about ten months: of
    ``kinds`` domains their own preference told once, each in its own session; one or two other people's
    preferences of each domain, never the user's; two to four pairs of chatter a session and ``lectures`` long
    off-topic answers. Two questions a domain (in plain words and paraphrased), asked the day after the last
    session. ``changed`` (``{lang}_users_preferences_changed``): each preference told twice, months apart, with
    another value the second time ("I've been vegan for a few months now" after "I went vegetarian last spring"):
    the evidence and the answer are the later one, the earlier one the distractor nearest in words (in a domain where
    both can hold, a second allergy, the earlier is not wrong, only not asked for)."""
    table = _ZH_DOMAINS if lang == "zh" else _EN_DOMAINS
    v = _ZH if lang == "zh" else _EN
    names, lecture_src = _lists(src, lang)
    records = []
    for number in range(users):
        dates, date, people = user_months(rng, names, sessions)
        domains = rng.sample(sorted(table), kinds)
        given: dict[str, str] = {}  # domain: the value the user told of themselves
        placed: list[tuple[int, str, str | None]] = []
        # Each preference in a session of its own, said once, as a user mentions such a thing in passing.
        for domain, slot in zip(domains, rng.sample(range(sessions), kinds)):
            statements, values, _, other = table[domain]
            given[domain] = rng.choice(values)
            told = [given[domain]]
            if changed:  # told first with another value, in an earlier session than the one that holds now
                earlier = rng.choice([x for x in values if x != given[domain]])
                first, slot = sorted(rng.sample(range(sessions), 2))
                placed.append((first, rng.choice(statements).format(v=earlier), None))
                told.append(earlier)
            placed.append((slot, rng.choice(statements).format(v=given[domain]), domain))
            # Other people's preferences of the same domain, never a value the user told of themselves.
            left = [x for x in values if x not in told]
            for value in rng.sample(left, min(len(left), rng.randint(1, 2))):
                placed.append((rng.randrange(sessions), rng.choice(other).format(p=rng.choice(people), v=value), None))
        conversation, told_at = chat_sessions(rng, v, names, people, dates, placed, lecture_src, lectures)
        qa = []
        for domain in domains:
            plain, paraphrase = table[domain][2]
            for question, shape in ((plain, "template"), (paraphrase, "paraphrase")):
                qa.append({"question": question, "answer": given[domain], "evidence": told_at[domain], "category": 4,
                           "kind": f"preference-{shape}", "attribute": domain, "question_date": date})
        name = "preferences-changed" if changed else "preferences"
        records.append({"sample_id": f"{lang}-{name}{number}", "conversation": conversation, "qa": qa})
    return records
