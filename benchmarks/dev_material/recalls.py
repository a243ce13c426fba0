"""The kinds that ask for what the assistant said (``en_users_recalls``, ``zh_users_recalls``): one user's months
of chat in which, now and then, they ask the assistant for something concrete in a named situation (a restaurant
for their anniversary in Lisbon, a stretch for their back after long drives, a name for their kitten) and the
assistant answers in its own turn with one recommendation and a short reason that names the situation again;
among the assistant's recommendations of the same type for other situations, other people's recommendations told
by the user ("My friend Ana swears by Epur."), chatter and a few off-topic lectures.

A question names the situation, never the answer ("Which restaurant did you suggest for our anniversary in
Lisbon?"), half in other words; its evidence is the assistant's recommending turn alone. What a user asks an
agent all the time ("what did you tell me?"), and nothing the product was tuned on has this shape: every other
per-user kind's evidence is the user's own turn, and here the same type of thing is recommended for other
situations and by other people, so only the situation tells which recommendation is meant.

Its own file because the table of situations (asks, answers, questions, values) is all this kind needs beyond
the sources' names and the sessions of ``updates.chat_sessions``.
"""

from __future__ import annotations

import random

from benchmarks.dev_material.pools import _EN, _ZH
from benchmarks.dev_material.updates import _lists, chat_sessions, user_months

# type: ([situation: (the user's ask, the assistant's answer, (question, its paraphrase), values fitting the
# answer's reason)], other people's recommendations). Values are distinct across a language's table (none inside
# another), so an answer is said only where the assistant gave it.
_EN_TYPES = {
    "restaurant": ([
        ("Can you suggest a restaurant for our anniversary dinner in Lisbon?",
         "For your anniversary in Lisbon, book {v}; the tasting menu is worth it for a night like that.",
         ("Which restaurant did you suggest for our anniversary in Lisbon?",
          "Where did you tell me to book for the Lisbon anniversary dinner?"), ["Belcanto", "Feitoria", "Epur"]),
        ("We need somewhere in Porto for a colleague's farewell dinner, about twelve of us. Ideas?",
         "For a farewell dinner for twelve in Porto, go to {v}; they take big groups and the grilled fish is superb.",
         ("Which place did you recommend for my colleague's farewell dinner in Porto?",
          "Where did you say we should hold the Porto send-off for my coworker?"),
         ["O Gaveto", "Adega São Nicolau", "Taberna dos Mercadores"]),
        ("My parents are visiting Lisbon next month. Where should I take them for lunch?",
         "Take your parents to {v} for lunch in Lisbon; classic cooking, and nobody rushes you out.",
         ("Where did you suggest I take my parents for lunch in Lisbon?",
          "Which lunch spot did you pick for my mum and dad's visit to Lisbon?"),
         ["Solar dos Presuntos", "O Velho Eurico", "Zé da Mouraria"])],
        ["My friend {p} swears by {v}.", "{p} keeps telling me to try {v}."]),
    "book": ([
        ("I need a novel for the long flight to Tokyo next week. Any idea?",
         "For the long flight to Tokyo, take {v}; it's gripping enough to make the hours vanish.",
         ("Which novel did you recommend for my long flight to Tokyo?",
          "What book did you tell me to read on the plane to Japan?"),
         ["The Count of Monte Cristo", "Lonesome Dove", "The Secret History"]),
        ("My nephew turns ten next month and loves adventure stories. What book should I get him?",
         "Get your nephew a copy of {v}; ten-year-olds who like adventure tear through it.",
         ("Which book did you suggest for my nephew's tenth birthday?",
          "What did you say I should buy my ten-year-old nephew to read?"),
         ["Hatchet", "The Wild Robot", "The Phantom Tollbooth"]),
        ("Our book club wants something short to discuss next time. Any pick?",
         "For your book club, try {v}; it's short, and it will split the room.",
         ("Which book did you suggest for our book club to discuss?",
          "What short title did you pick for the book-club meeting?"),
         ["Small Things Like These", "Convenience Store Woman", "Klara and the Sun"])],
        ["{p} keeps telling me to read {v}.", "{p} says {v} is the best book of the year."]),
    "stretch": ([
        ("Any stretch for my lower back after long drives?",
         "After a long drive, do the {v}; a minute of it loosens the lower back.",
         ("Which stretch did you suggest for my lower back after long drives?",
          "What did you tell me to do for my back when I get out of the car after hours of driving?"),
         ["knee-to-chest stretch", "cat-cow stretch", "child's pose"]),
        ("My wrists ache after typing all day. Is there a stretch for that?",
         "For wrists sore from typing, try the {v}; hold it for thirty seconds every hour.",
         ("Which stretch did you recommend for my wrists after typing all day?",
          "What did you say would help my sore wrists from the keyboard?"),
         ["prayer stretch", "wrist flexor stretch", "tendon glide"]),
        ("My calves are tight after my Sunday runs. What should I stretch?",
         "After the Sunday run, do the {v}; it gets right into tight calves.",
         ("Which stretch did you suggest for my tight calves after Sunday runs?",
          "What did you tell me to do for my legs after the weekend run?"),
         ["wall lunge", "downward dog", "step heel drop"])],
        ["{p} swears by the {v}.", "{p}'s physio told them to do the {v} every day."]),
    "gift": ([
        ("A gift idea for my sister who just started climbing?",
         "Get your sister a {v}; every new climber needs one and she'll use it every session.",
         ("What gift did you suggest for my sister who just started climbing?",
          "What did you say I should buy my sister now that she's into climbing?"),
         ["chalk bag", "climbing brush set", "pair of belay glasses"]),
        ("My dad turns sixty next month and he loves gardening. What should I give him?",
         "For your dad's sixtieth, give him a {v}; a keen gardener will use it for years.",
         ("What present did you recommend for my dad's sixtieth birthday?",
          "What did you tell me to get my father, the gardener, when he turns sixty?"),
         ["hori-hori knife", "garden kneeler", "copper watering can"]),
        ("What can I bring to my neighbour's housewarming?",
         "For your neighbour's housewarming, bring a {v}; it's useful, and nobody has two.",
         ("What did you suggest I bring to my neighbour's housewarming?",
          "Which present did you pick for the new place next door?"),
         ["cast-iron skillet", "walnut cutting board", "herb planter"])],
        ["{p} says a {v} is the best present they ever got.", "{p} thinks a {v} makes a great gift."]),
    "name": ([
        ("What should I name my new kitten? She's grey with white paws.",
         "Call your kitten {v}; it's short, and it suits a grey cat with white paws.",
         ("What name did you suggest for my new kitten?", "What did you say I should call the grey cat I got?"),
         ["Miso", "Pebble", "Smudge"]),
        ("My brother got a puppy and can't decide on a name. Ideas?",
         "For your brother's puppy, how about {v}? Easy to shout across a park.",
         ("What name did you come up with for my brother's puppy?",
          "What did you suggest my brother call his new dog?"), ["Bramble", "Barnaby", "Nutmeg"]),
        ("We bought a little sailboat! What should we call her?",
         "Name the sailboat {v}; it sounds good over the radio.",
         ("What name did you suggest for our sailboat?", "What did you tell us to call the boat we bought?"),
         ["Second Wind", "Wandering Star", "Halcyon"])],
        ["{p} suggested {v} as a name.", "{p} really likes the name {v}."]),
    "film": ([
        ("A film to watch with my parents this weekend?",
         "With your parents this weekend, put on {v}; everyone laughs, whatever their age.",
         ("Which film did you suggest watching with my parents?",
          "What movie did you tell me to put on for my mum and dad?"),
         ["Paddington 2", "The Intouchables", "Little Miss Sunshine"]),
        ("Friends are staying over on Friday and want something scary. What should we watch?",
         "For a scary night in with friends, watch {v}; it's frightening, and fun to shout at together.",
         ("Which film did you recommend for the scary night in with my friends?",
          "What horror movie did you pick for our group when my friends stayed over?"),
         ["The Cabin in the Woods", "A Quiet Place", "The Conjuring"]),
        ("A film for a rainy Sunday on my own?",
         "For a rainy Sunday alone, watch {v}; slow and beautiful, perfect with a blanket.",
         ("Which film did you suggest for a rainy Sunday on my own?",
          "What did you tell me to watch when I'm home alone and it's pouring?"),
         ["Lost in Translation", "Amélie", "Before Sunrise"])],
        ["{p} keeps telling me to watch {v}.", "{p} says {v} is a must-see."]),
}
_ZH_TYPES = {
    "restaurant": ([
        ("下个月结婚纪念日想在杭州吃顿好的，你有推荐的餐厅吗？", "纪念日在杭州的话，就订{v}吧，临湖的位子氛围很好，适合两个人慢慢吃。",
         ("你之前给我推荐的杭州结婚纪念日吃饭的那家餐厅叫什么？", "纪念日去杭州那顿饭，你让我订的是哪家？"), ["楼外楼", "湖滨28", "新新饭店"]),
        ("部门有个同事要走了，想在成都找个地方给他饯行，十来个人，去哪儿好？", "十来个人在成都给同事饯行，去{v}吧，有大包间，川菜地道。",
         ("给同事在成都饯行，你推荐的是哪家馆子？", "你之前说成都那顿欢送饭该去哪家店？"), ["银杏川菜", "大蓉和", "巴国布衣"]),
        ("爸妈下周来杭州玩，中午带他们去哪儿吃比较好？", "带爸妈在杭州吃午饭，{v}挺合适，老杭帮菜，口味清淡，老人吃着舒服。",
         ("你建议我带爸妈在杭州吃午饭去哪家？", "爸妈来杭州那回，你说中午领他们去哪儿吃？"), ["知味观", "奎元馆", "杭州酒家"])],
        ["{p}一直跟我安利{v}。", "{p}说{v}去过一次就忘不了。"]),
    "book": ([
        ("下周要飞乌鲁木齐，五个多小时，推荐本小说路上看？", "飞乌鲁木齐那五个多小时，带本{v}吧，情节抓人，一下就到了。",
         ("我飞乌鲁木齐那趟，你推荐我路上看哪本小说？", "去新疆的航班上，你让我带什么书？"), ["《长安的荔枝》", "《白鹿原》", "《尘埃落定》"]),
        ("侄子刚上三年级，特别喜欢冒险故事，送他什么书好？", "三年级的侄子爱冒险故事，就送{v}，这个年纪的孩子一读就停不下来。",
         ("侄子上三年级，你推荐送他哪本书？", "给爱看冒险故事的侄子挑书，你之前说买哪本？"), ["《皮皮鲁传》", "《鲁滨逊漂流记》", "《海底两万里》"]),
        ("读书会下次要选本不太长的书讨论，你有什么建议？", "读书会的话可以选{v}，篇幅不长，讨论起来话题很多。",
         ("我们读书会要讨论的书，你建议读哪本？", "你之前给读书会挑的那本不太长的书是什么？"), ["《我与地坛》", "《边城》", "《呼兰河传》"])],
        ["{p}一直劝我读{v}。", "{p}说{v}是今年读过最好的一本。"]),
    "stretch": ([
        ("开长途车回来腰特别酸，有什么拉伸动作吗？", "长途开车后腰酸，可以做{v}，一两分钟腰就松下来了。",
         ("你之前教我开长途车后缓解腰酸的拉伸动作是哪个？", "开完长途车腰不舒服，你让我做什么动作？"), ["仰卧抱膝", "猫牛式", "婴儿式"]),
        ("天天敲键盘，手腕酸得不行，有办法拉伸一下吗？", "敲键盘手腕酸，试试{v}，每小时做半分钟就行。",
         ("手腕敲键盘敲酸了，你教我的拉伸是哪个？", "打字打到手腕疼，你让我怎么拉伸？"), ["合掌下压", "反向合十", "腕屈肌拉伸"]),
        ("周日跑完步小腿总是很紧，该怎么拉？", "周日跑完步小腿紧，就做{v}，正好拉到小腿后侧。",
         ("周日跑完步小腿紧，你推荐的拉伸动作是什么？", "跑步后小腿发紧那事，你说该做哪个动作？"), ["扶墙弓步", "台阶压脚跟", "下犬式"])],
        ["{p}每天早上都做{v}，说特别管用。", "{p}的教练让大家多做{v}。"]),
    "gift": ([
        ("我妹刚开始学攀岩，送她点什么好？", "妹妹刚入门攀岩的话，送个{v}吧，新手每次去岩馆都用得上。",
         ("我妹妹刚学攀岩，你建议送她什么？", "给刚入坑攀岩的妹妹挑礼物，你之前说买啥？"), ["镁粉袋", "攀岩刷", "保护眼镜"]),
        ("我爸下个月满六十，他平时最爱养花种菜，送什么好？", "你爸六十大寿又爱种花种菜，送他个{v}，能用好多年。",
         ("我爸六十岁生日，你推荐送他什么？", "给爱种菜的老爸过六十大寿，你之前说送啥好？"), ["园艺工具箱", "自动浇花器", "园艺跪凳"]),
        ("邻居搬新家请我去暖房，带什么礼物合适？", "去邻居家暖房，带个{v}就很好，实用，一般人家里也不会有两个。",
         ("去邻居家暖房，你建议我带什么礼物？", "邻居乔迁请客那次，你说我拿什么去好？"), ["铸铁锅", "实木砧板", "香草盆栽"])],
        ["{p}说送{v}最不会出错。", "{p}今年给朋友送的都是{v}。"]),
    "name": ([
        ("新养了只小猫，灰色的，四个爪子是白的，起个什么名字好？", "灰猫配白爪子，叫{v}怎么样？好记，叫起来也顺口。",
         ("我那只白爪子的小灰猫，你建议起什么名字？", "新养的小灰猫叫啥，你之前出的主意是？"), ["踏雪", "芝麻球", "灰豆"]),
        ("我哥家新来了只小狗，一家人为名字吵半天了，帮忙想一个？", "你哥家的小狗就叫{v}吧，喊起来响亮，全家都能接受。",
         ("我哥家的小狗，你给起的名字是什么？", "哥哥家那只新来的狗，你说叫什么好？"), ["旺财", "元宝", "豆包"]),
        ("家里新买了个扫地机器人，想给它起个名字，有什么好玩的？", "扫地机器人就叫{v}吧，勤勤恳恳，跟它挺配。",
         ("家里的扫地机器人，你建议给它起什么名？", "你之前给我家扫地机器人想的名字是啥？"), ["扫地僧", "阿勤", "小旋风"])],
        ["{p}觉得{v}这个名字好听。", "{p}说以后养狗就叫{v}。"]),
    "film": ([
        ("周末想陪爸妈看部电影，什么片子老少皆宜？", "陪爸妈看的话，选{v}，笑中带泪，两代人都爱看。",
         ("周末陪爸妈看电影，你推荐的是哪部？", "你之前说带爸妈看的那部片子叫啥？"), ["《你好，李焕英》", "《我和我的祖国》", "《人生大事》"]),
        ("周五几个朋友来家里过夜，想看点吓人的？", "朋友们凑一起看恐怖片，推荐{v}，够吓人，一群人看又热闹。",
         ("朋友来家里过夜看恐怖片，你推荐的是哪一部？", "那次想跟朋友看吓人的片子，你说看哪部？"), ["《昆池岩》", "《招魂》", "《寂静之地》"]),
        ("下雨的周日一个人在家，想看部安静点的电影。", "下雨的周日一个人，就看{v}吧，节奏慢，很适合窝在沙发里。",
         ("下雨的周日一个人在家，你推荐我看什么电影？", "一个人宅家的雨天，你说适合看哪部片子？"), ["《海街日记》", "《小森林》", "《情书》"])],
        ["{p}一直劝我去看{v}。", "{p}说{v}值得二刷。"]),
}


def make_recalls(src, rng: random.Random, lang: str, *, users: int = 8, sessions: int = 40, kinds: int = 6,
                 lectures: int = 6) -> list[dict]:
    """``users`` LoCoMo-shape records (``{lang}-recalls0`` ...), each one user's chat over about ten months: of
    ``kinds`` types of recommendation one or two asked about (six to eight in all) and one more situation of the
    type answered but never asked about, each in its own session; one or two other people's recommendations of
    each type; two to four pairs of chatter a session and ``lectures`` long off-topic answers. Two questions an
    asked situation (in plain words and paraphrased), asked the day after the last session."""
    table = _ZH_TYPES if lang == "zh" else _EN_TYPES
    v = _ZH if lang == "zh" else _EN
    names, lecture_src = _lists(src, lang)
    records = []
    for number in range(users):
        dates, date, people = user_months(rng, names, sessions)
        types = rng.sample(sorted(table), kinds)
        twice = set(rng.sample(types, rng.randint(0, min(2, kinds))))  # six to eight asks of six types
        pairs: list[tuple[tuple[str, str], tuple[str, int]]] = []  # ((ask, answer), (type, situation))
        given: dict[tuple[str, int], str] = {}  # (type, situation): the value the assistant gave
        questioned: list[tuple[str, int]] = []
        placed: list[tuple[int, str | tuple[str, str], tuple[str, int] | None]] = []
        for kind in types:
            situations, other = table[kind]
            # The asked situations and one more answered but never asked about: the same type of thing
            # recommended for another situation is the distractor nearest in meaning.
            drawn = rng.sample(range(len(situations)), 3 if kind in twice else 2)
            for index in drawn:
                ask, answer, _, values = situations[index]
                given[(kind, index)] = rng.choice(values)
                pairs.append(((ask, answer.format(v=given[(kind, index)])), (kind, index)))
            questioned += [(kind, index) for index in drawn[:-1]]
            # Other people's recommendations of the same type, never of a value the assistant gave.
            left = [x for _, _, _, values in situations for x in values if x not in given.values()]
            for value in rng.sample(left, rng.randint(1, 2)):
                placed.append((rng.randrange(sessions), rng.choice(other).format(p=rng.choice(people), v=value), None))
        # Each answered situation in a session of its own, as a user asks for one thing at a time.
        for (text, tag), slot in zip(pairs, rng.sample(range(sessions), len(pairs))):
            placed.append((slot, text, tag))
        conversation, told_at = chat_sessions(rng, v, names, people, dates, placed, lecture_src, lectures)
        qa = []
        for kind, index in questioned:
            plain, paraphrase = table[kind][0][index][2]
            for question, shape in ((plain, "template"), (paraphrase, "paraphrase")):
                qa.append({"question": question, "answer": given[(kind, index)], "evidence": told_at[(kind, index)],
                           "category": 4, "kind": f"recall-{shape}", "attribute": kind, "question_date": date})
        records.append({"sample_id": f"{lang}-recalls{number}", "conversation": conversation, "qa": qa})
    return records
