"""The kinds whose answer is spread over months (``en_users_aggregates``, ``zh_users_aggregates``): one user's
chat in which they tell, one at a time and weeks apart, of several things of one kind they did (dishes they
cooked, sports they tried, books they read, concerts they went to, courses they took), each in the first person
in one of several wordings that never name the kind, among other people's doings of the same kinds in the same
words, chatter about the same people, places and sports, and a few off-topic lectures.

A question asks for all of them ("Which books have I read?", "How many concerts have I been to?"); every
statement of that kind by the user is evidence, so a prompt answers only when it holds them all (LoCoMo's
multi-hop aggregation, "What activities does Melanie partake in?", in one user's memory). Nothing the product
was tuned on has this shape: the question's word for the kind ("books", "concerts") is in none of the evidence,
and the other people's doings are told in the same words.

Its own file because the table of kinds (values, wordings, questions) is all this kind needs beyond the
sources' names and the chatter of ``pools``.
"""

from __future__ import annotations

import random

from benchmarks.dev_material.pools import _EN, _ZH
from benchmarks.dev_material.updates import _lists, chat_sessions, user_months

# kind: (values, the user's wordings, another person's wordings, (list question, its paraphrase), count question)
_EN_KINDS = {
    "cooked": (["shakshuka", "chicken biryani", "beef wellington", "sourdough bread", "minestrone", "moussaka",
                "lemon tart", "gnocchi", "jambalaya", "pho"],
               ["Cooked {v} for dinner tonight, turned out great.", "Made {v} from scratch this evening.",
                "Tried my hand at {v} today; the kitchen is a mess."],
               ["{p} cooked {v} for the whole team.", "{p} keeps talking about the {v} at that new place."],
               ("Which dishes have I cooked?", "What have I made in the kitchen recently?"),
               "How many different dishes have I cooked?"),
    "sport_tried": (["bouldering", "fencing", "archery", "kayaking", "squash", "curling", "paddleboarding",
                     "ice skating", "judo"],
                    ["Tried {v} for the first time today, my arms are dead.", "Went to a {v} taster session.",
                     "Did my first {v} class this morning."],
                    ["{p} has been doing {v} for years.", "{p} wants to get into {v}."],
                    ("Which sports have I tried?", "What new kinds of exercise have I had a go at?"),
                    "How many new sports have I tried?"),
    "book": (["The Overstory", "Middlemarch", "Project Hail Mary", "The Remains of the Day", "Circe",
              "Station Eleven", "The Name of the Rose", "Pachinko", "Educated", "Piranesi"],
             ["Finished reading {v} last night.", "Just got to the end of {v}, what an ending.",
              "Read {v} on the train this week, couldn't put it down."],
             ["{p} recommended {v}.", "{p} is reading {v} for her book club."],
             ("Which books have I read?", "What have I been reading these past months?"),
             "How many books have I finished?"),
    "concert": (["Coldplay", "Adele", "the Arctic Monkeys", "Norah Jones", "Radiohead", "Billie Eilish",
                 "the Rolling Stones", "Hozier", "Florence and the Machine"],
                ["Saw {v} live last night, what a show.", "Went to the {v} gig yesterday, still buzzing.",
                 "Finally heard {v} play live this weekend."],
                ["{p} got tickets for {v}.", "{p} saw {v} live last year."],
                ("Which concerts have I been to?", "What live music have I seen?"),
                "How many concerts have I been to?"),
    "course": (["pottery", "first aid", "photography", "Spanish", "watercolour painting", "woodworking",
                "public speaking", "calligraphy", "beekeeping"],
               ["Signed up for a {v} course, the first lesson was today.", "My {v} workshop started this week.",
                "Spent the afternoon at a {v} class at the community centre."],
               ["{p} teaches {v} at the community centre.", "{p} is thinking about a {v} course."],
               ("Which courses have I taken?", "What have I been learning in classes?"),
               "How many courses have I signed up for?"),
}
_ZH_KINDS = {
    "cooked": (["红烧排骨", "糖醋里脊", "宫保鸡丁", "水煮鱼", "葱油饼", "蛋黄酥", "咖喱牛腩", "鲜虾云吞", "剁椒鱼头"],
               ["今晚自己做了{v}，味道还不错。", "今天从头到尾做了一锅{v}。", "下午试着做了{v}，厨房一团糟。"],
               ["{p}给全组人做了{v}。", "{p}一直在说那家新店的{v}。"],
               ("我做过哪些菜？", "我最近下厨都做了些什么？"), "我一共做过几道菜？"),
    "sport_tried": (["攀岩", "击剑", "射箭", "皮划艇", "壁球", "冰壶", "桨板", "滑冰", "柔道"],
                    ["今天第一次试了{v}，胳膊都酸了。", "去参加了一次{v}体验课。", "今天上午上了第一节{v}课。"],
                    ["{p}练{v}好多年了。", "{p}想开始学{v}。"],
                    ("我尝试过哪些新运动？", "我都体验过什么新的锻炼方式？"), "我一共尝试过几种新运动？"),
    "book": (["《三体》", "《活着》", "《围城》", "《平凡的世界》", "《百年孤独》", "《追风筝的人》", "《白夜行》", "《红楼梦》", "《人类简史》"],
             ["昨晚读完了{v}。", "终于把{v}看完了，结尾太震撼了。", "这周在地铁上读了{v}，根本停不下来。"],
             ["{p}推荐了{v}。", "{p}的读书会在读{v}。"],
             ("我读过哪些书？", "这几个月我都在看什么书？"), "我一共读完了几本书？"),
    "concert": (["周杰伦", "五月天", "陈奕迅", "林俊杰", "李健", "孙燕姿", "张学友", "朴树", "王菲"],
                ["昨晚去看了{v}的现场，太精彩了。", "昨天去了{v}的演唱会，现在还很兴奋。", "这周末终于听到了{v}的现场。"],
                ["{p}抢到了{v}的票。", "{p}去年看过{v}的现场。"],
                ("我去过哪些演唱会？", "我都看过谁的现场？"), "我一共去过几场演唱会？"),
    "course": (["陶艺", "急救", "摄影", "西班牙语", "水彩画", "木工", "演讲", "书法", "茶艺"],
               ["报了个{v}课，今天上了第一节。", "我的{v}工作坊这周开始了。", "下午在社区中心上了{v}课。"],
               ["{p}在社区中心教{v}。", "{p}在考虑报个{v}课。"],
               ("我上过哪些课？", "我都在课上学了些什么？"), "我一共报了几门课？"),
}


def make_aggregates(src, rng: random.Random, lang: str, *, users: int = 8, sessions: int = 40, kinds: int = 4,
                    others: int = 16, lectures: int = 6) -> list[dict]:
    """``users`` LoCoMo-shape records (``{lang}-aggregates0`` ...), each one user's chat over about ten months:
    of ``kinds`` kinds of doings three or four, each told once in its own session, ``others`` doings of other
    people in the same words, two to four pairs of chatter a session and ``lectures`` long off-topic answers;
    three questions a kind (the list in plain words and paraphrased, the count), asked the day after the last
    session."""
    table = _ZH_KINDS if lang == "zh" else _EN_KINDS
    v = _ZH if lang == "zh" else _EN
    names, lecture_src = _lists(src, lang)
    records = []
    for number in range(users):
        dates, date, people = user_months(rng, names, sessions)
        placed: list[tuple[int, str, str | None]] = []  # (session, text, the kind it tells of the user, or None)
        done: dict[str, list[str]] = {}
        for kind in rng.sample(sorted(table), kinds):
            values, wordings, _, _, _ = table[kind]
            done[kind] = rng.sample(values, rng.randint(3, 4))
            for value, slot in zip(done[kind], rng.sample(range(sessions), len(done[kind]))):
                placed.append((slot, rng.choice(wordings).format(v=value), kind))
        for _ in range(others):
            values, _, other, _, _ = table[rng.choice(sorted(table))]
            placed.append((rng.randrange(sessions), rng.choice(other).format(p=rng.choice(people),
                                                                              v=rng.choice(values)), None))
        conversation, evidence = chat_sessions(rng, v, names, people, dates, placed, lecture_src, lectures)
        qa = []
        for n, (kind, values) in enumerate(done.items()):
            _, _, _, (plain, paraphrase), count = table[kind]
            for question, shape in ((plain if n % 2 == 0 else paraphrase, "template" if n % 2 == 0 else "paraphrase"),
                                    (count, "count")):
                qa.append({"question": question, "answer": ", ".join(values), "evidence": list(evidence[kind]),
                           "category": 1, "kind": f"list-{shape}" if shape != "count" else "count", "attribute": kind,
                           "question_date": date})
        records.append({"sample_id": f"{lang}-aggregates{number}", "conversation": conversation, "qa": qa})
    return records
