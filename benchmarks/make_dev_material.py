"""Generate development material of kinds the four development files do not cover (issue 12).

Nothing here is copied into the repository: the files are generated, deterministically from a seed, out of
the development files in ``../shared/eval`` (names, titles and paragraphs), into ``--out``.

Kinds (each file in a format ``agent-memory eval`` reads):

- ``chains.jsonl`` (HotpotQA shape): questions that need 3 or 4 encyclopedia paragraphs. Entity pages of
  people, companies and cities (names recombined from the HotpotQA titles, cities with their real regions
  taken from the HotpotQA paragraphs) state templated relations: a person works for a company and is
  married to another person, a company was founded by a person and is headquartered in a city, a city lies
  in a region. A question names only the first entity ("In which region is the head office of the company
  that employs X's spouse?"); every page on the path is evidence. Distractors: the other facts on the same
  pages, colleagues' pages, other companies of the same city, and real HotpotQA paragraphs.
- ``zh_pool.json`` (LoCoMo shape with ``documents``): one tenant holding thousands of short Chinese
  statements about people ("<人>的<事件>的地点是<城市>", "<人>的生日是<日期>", ...; names and places
  from CMRC), most as notes (documents), some said in daily-life chat; pooled with long off-topic turns
  (an assistant reciting CMRC articles), chat turns that mention the same people and places, English
  LoCoMo turns and HotpotQA paragraphs. A question asks for one statement (its evidence), half in the
  template's words, half paraphrased.
- ``en_pool.json``: the same in English (names from HotpotQA, CMRC articles as the foreign documents).
- ``zh_events.json``: the Chinese pool with statements about nameless events (group, time, activity).
- ``zh_users.json`` (LoCoMo shape, one record per user): several users, each its own tenant holding ONE
  user's daily memory: the pool's statements about a few people (events, birthdays, pets, food ...) all
  said in chat turns, chat about the same people and places around them, a few off-topic lectures, no
  documents; a few hundred messages and ~30 questions per user, half in the template's words.
- ``zh_users_mixed.json``: the same with fewer people and 20 nameless events per user beside them.
- ``zh_users_events.json``: the harder per-user variant (issue 34: the plain and mixed sets sit at the
  ceiling for dense too): 3 people and 60 nameless events per user, told apart only by group, time and
  activity, and 150 chat pairs about them; about 500 messages and 30 questions per user.

    python benchmarks/make_dev_material.py --out reports/devmat
    agent-memory --data-dir /tmp/dm/chains eval reports/devmat/chains.jsonl --budget 500,1000 --out reports/devmat
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_SOURCE = Path(__file__).resolve().parents[1].parent / "shared" / "eval"

# ---- the development files ------------------------------------------------------------------------------


@dataclass
class Sources:
    hotpot: list[dict]
    cmrc: dict
    locomo: list[dict]

    @classmethod
    def read(cls, folder: Path) -> Sources:
        hotpot = [json.loads(line) for line in (folder / "hotpotqa_dev250.jsonl").read_text("utf-8").splitlines()
                  if line.strip()]
        cmrc = json.loads((folder / "cmrc2018_trial.json").read_text("utf-8"))
        locomo = json.loads((folder / "locomo_dev.json").read_text("utf-8"))
        return cls(hotpot, cmrc, locomo)

    def paragraphs(self) -> dict[str, str]:
        """HotpotQA title → paragraph (first text seen), in file order."""
        out: dict[str, str] = {}
        for rec in self.hotpot:
            for ctx in rec["contexts"]:
                out.setdefault(ctx["title"], ctx["paragraph_text"])
        return out

    def articles(self) -> list[tuple[str, str]]:
        """CMRC (title, paragraph) pairs, one per article title."""
        out: dict[str, str] = {}
        for art in self.cmrc["data"]:
            for para in art["paragraphs"]:
                out.setdefault(art["title"], para["context"])
        return list(out.items())


_NAME = re.compile(r"^[A-Z][a-z]+(?: [A-Z][a-z]+){1,2}$")
_PERSONISH = re.compile(r"\(born|\bborn\b|\(\d{4}|\bis an? (?:[A-Z][a-z]+ )?(?:actor|actress|singer|politician|writer|"
                        r"footballer|player|musician|director|author|journalist|producer|rapper|comedian)\b")
_CITY_REGION = re.compile(r"\b(?:in|of|near) ([A-Z][a-z]+(?: [A-Z][a-z]+)?), ([A-Z][a-z]+(?: [A-Z][a-z]+)?)\b")


@dataclass
class EnglishNames:
    firsts: list[str]
    lasts: list[str]
    taken: set[str]
    cities: list[tuple[str, str]]  # (city, region)
    universities: list[str]


def english_names(paragraphs: dict[str, str]) -> EnglishNames:
    people = [t for t, x in paragraphs.items() if _NAME.match(t) and _PERSONISH.search(x[:250])]
    firsts = sorted({p.split()[0] for p in people})
    lasts = sorted({p.split()[-1] for p in people})
    pairs: Counter = Counter()
    for text in paragraphs.values():
        for m in _CITY_REGION.finditer(text):
            pairs[(m.group(1), m.group(2))] += 1
    regions = Counter(region for _, region in pairs)
    name_words = set(firsts) | set(lasts)
    cities: dict[str, str] = {}
    for (city, region), _ in sorted(pairs.items()):
        if (regions[region] >= 2 and city != region and city not in regions and city not in paragraphs
                and not set(city.split()) & name_words and not set(region.split()) & name_words):
            cities.setdefault(city, region)
    universities = sorted(t for t in paragraphs if re.fullmatch(r"[A-Z][A-Za-z .&']+ (University|College)", t))
    return EnglishNames(firsts, lasts, set(paragraphs), sorted(cities.items()), universities)


_SURNAMES = set("王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁"
                "任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤")


@dataclass
class ChineseNames:
    people: list[str]
    cities: list[str]
    orgs: list[str]


def chinese_names(articles: list[tuple[str, str]]) -> ChineseNames:
    import jieba
    import jieba.posseg as pseg

    jieba.setLogLevel(logging.WARNING)
    text = "\n".join(body for _, body in articles)
    nr, ns, nt = Counter(), Counter(), Counter()
    for word, flag in pseg.cut(text):
        if flag == "nr" and 2 <= len(word) <= 3 and word[0] in _SURNAMES:
            nr[word] += 1
        elif flag == "ns" and 2 <= len(word) <= 3:
            ns[word] += 1
        elif flag == "nt" and re.search(r"(大学|学院|公司|银行|医院|电台|电视|集团|中学)$", word):
            nt[word] += 1
    # A city is a place name the articles write as one ("<name>市"): jieba also tags common nouns and
    # regions as places ("城市", city itself; "巴士", "长约"), and a statement whose place is the word
    # "city" matches every "哪个城市" question word for word.
    cities = sorted(w for w in ns if f"{w}市" in text and not (w.endswith("市") and w[:-1] in ns))
    return ChineseNames(sorted(nr), cities, sorted(nt))


# ---- chains: 3- and 4-paragraph questions over entity pages -----------------------------------------------

_OCCUPATIONS = ["engineer", "accountant", "architect", "chemist", "translator", "economist", "photographer",
                "surgeon", "geologist", "lawyer", "statistician", "pharmacist", "civil servant", "product designer"]
_INDUSTRY = {"Records": "record label", "Press": "publishing", "Foods": "food processing", "Labs": "research",
             "Motors": "automotive", "Pharmaceuticals": "pharmaceutical", "Software": "software",
             "Airways": "aviation", "Textiles": "textile", "Logistics": "logistics", "Insurance": "insurance",
             "Instruments": "precision instruments", "Brewing": "brewing", "Energy": "energy"}
_PRODUCTS = ["industrial sensors", "budget travel guides", "frozen dumplings", "folk music reissues",
             "electric scooters", "cough syrups", "payroll software", "cargo drones", "wool blankets",
             "seismographs", "craft lager", "solar inverters", "term life policies", "freight scheduling"]
_TOPICS = ["a long-running amateur astronomy blog", "restoring vintage motorcycles", "competitive chess",
           "volunteer work with refugees", "a podcast about urban planning", "marathon running",
           "a collection of rare maps", "community theatre", "beekeeping", "translating poetry"]
_FEATURES = ["its river port", "a large annual food festival", "its nineteenth-century railway station",
             "a botanical garden", "its textile mills", "a minor-league baseball team", "its old town hall",
             "a university hospital", "its covered market", "a jazz festival held every summer"]


@dataclass
class Person:
    name: str
    born: int
    birth_city: str
    occupation: str
    employer: str = ""
    since: int = 0
    spouse: str = ""
    founded: list[str] = field(default_factory=list)
    school: str = ""
    hobby: str = ""


@dataclass
class Company:
    name: str
    industry: str
    year: int
    city: str
    founder: str = ""
    product: str = ""
    staff: int = 0


def _unique(make: Callable[[], str], n: int, taken: set[str]) -> list[str]:
    """Up to ``n`` distinct names from ``make`` that are not ``taken`` (fewer when it repeats itself)."""
    out: list[str] = []
    seen = set(taken)
    for _ in range(50 * n):
        if len(out) >= n:
            break
        name = make()
        if name not in seen:
            seen.add(name)
            out.append(name)
    return out


def _unique_names(rng: random.Random, firsts: list[str], lasts: list[str], n: int, taken: set[str]) -> list[str]:
    return _unique(lambda: f"{rng.choice(firsts)} {rng.choice(lasts)}", n, taken)


def _person_page(p: Person, rng: random.Random) -> str:
    last = p.name.split()[-1]
    a = "an" if p.occupation[0] in "aeiou" else "a"
    lead = rng.choice([f"{p.name} (born {p.born}) is {a} {p.occupation} from {p.birth_city}.",
                       f"{p.name} is {a} {p.occupation} who was born in {p.birth_city} in {p.born}."])
    work = rng.choice([f"{last} has worked for {p.employer} since {p.since}.",
                       f"Since {p.since}, {last} has been employed by {p.employer}.",
                       f"{last} joined {p.employer} in {p.since} and still works there."])
    spouse = rng.choice([f"{last} is married to {p.spouse}.", f"{last} married {p.spouse} in {p.since + rng.randint(-6, 6)}.",
                         f"{last}'s spouse is {p.spouse}."])
    extra = [f"{last} studied at {p.school}." if p.school else "", f"Outside work, {last} is known for {p.hobby}."]
    extra += [f"In {rng.randint(1975, 2015)}, {last} founded {c}, but left it a few years later." for c in p.founded]
    sentences = [lead, work, spouse, *[e for e in extra if e]]
    body = sentences[1:]
    rng.shuffle(body)
    return " ".join([sentences[0], *body])


def _company_page(c: Company, rng: random.Random) -> str:
    a = "an" if c.industry[0] in "aeiou" else "a"
    lead = rng.choice([f"{c.name} is {a} {c.industry} company founded in {c.year} by {c.founder}.",
                       f"{c.name} is {a} {c.industry} company. It was founded by {c.founder} in {c.year}."])
    seat = rng.choice([f"The company is headquartered in {c.city}.", f"Its head office is in {c.city}.",
                       f"{c.name} is based in {c.city}, where its headquarters are."])
    more = f"It employs about {c.staff:,} people and is best known for its {c.product}."
    return " ".join([lead, seat, more])


def _city_page(city: str, region: str, companies: list[str], rng: random.Random) -> str:
    lead = rng.choice([f"{city} is a city in {region}.", f"{city} is a city located in {region}."])
    pop = f"It had a population of {rng.randint(8, 900) * 1000 + rng.randint(0, 999):,} at the last census."
    known = f"The city is known for {rng.choice(_FEATURES)}."
    firms = f"Companies based in {city} include {', '.join(companies[:3])}." if companies else ""
    return " ".join(s for s in [lead, pop, known, firms] if s)


def make_chains(src: Sources, rng: random.Random, *, people: int = 480, companies: int = 140,
                background: int = 500, per_kind: int = 45) -> list[dict]:
    """HotpotQA-shape records: questions over 3- or 4-page paths, every page of the path supporting."""
    paragraphs = src.paragraphs()
    names = english_names(paragraphs)
    cities = names.cities
    region_of = dict(cities)
    person_names = _unique_names(rng, names.firsts, names.lasts, people, names.taken)
    company_names = _unique(lambda: f"{rng.choice(names.lasts)} {rng.choice(sorted(_INDUSTRY))}", companies,
                            set(names.taken) | set(person_names))
    comps = {n: Company(n, _INDUSTRY[n.split()[-1]], rng.randint(1950, 2012), rng.choice(cities)[0],
                        product=rng.choice(_PRODUCTS), staff=rng.randint(40, 20000)) for n in company_names}
    persons = {n: Person(n, rng.randint(1950, 1995), rng.choice(cities)[0], rng.choice(_OCCUPATIONS),
                         school=rng.choice(names.universities) if names.universities and rng.random() < 0.5 else "",
                         hobby=rng.choice(_TOPICS)) for n in person_names}
    for p in persons.values():
        p.employer = rng.choice(company_names)
        p.since = max(p.born + 22, rng.randint(1985, 2020))
    order = list(person_names)
    rng.shuffle(order)
    for a, b in zip(order[0::2], order[1::2]):
        persons[a].spouse, persons[b].spouse = b, a
    founders = [n for n in order if persons[n].spouse]
    for index, c in enumerate(comps.values()):
        founder = founders[index % len(founders)]
        if persons[founder].employer == c.name:  # a founder who left: works for another company now
            persons[founder].employer = company_names[(company_names.index(c.name) + 1) % len(company_names)]
        c.founder = founder
        persons[founder].founded.append(c.name)
    in_city: dict[str, list[str]] = {}
    for c in comps.values():
        in_city.setdefault(c.city, []).append(c.name)
    pages = {n: _person_page(p, rng) for n, p in persons.items()}
    pages.update({n: _company_page(c, rng) for n, c in comps.items()})
    used_cities = sorted({c.city for c in comps.values()} | {p.birth_city for p in persons.values()})
    pages.update({city: _city_page(city, region_of[city], in_city.get(city, []), rng) for city in used_cities})
    real = [t for t in paragraphs if t not in pages]
    rng.shuffle(real)
    pages.update({t: paragraphs[t] for t in sorted(real[:background])})

    def employer_city(name: str) -> str:
        return comps[persons[name].employer].city

    kinds = {
        "3-hop": [
            lambda p: ([p, persons[p].employer, employer_city(p)], region_of[employer_city(p)], rng.choice([
                f"In which region is the head office of the company that {p} works for?",
                f"{p}'s employer is headquartered in a city. Which state or country is that city in?",
                f"The company employing {p} has its headquarters in which region?"])),
            lambda p: ([p, persons[p].spouse, persons[persons[p].spouse].employer],
                       employer_city(persons[p].spouse), rng.choice([
                           f"In which city is the employer of {p}'s spouse headquartered?",
                           f"Where is the company that {p}'s husband or wife works for based?"])),
            lambda c: ([c, comps[c].founder, persons[comps[c].founder].birth_city],
                       region_of[persons[comps[c].founder].birth_city], rng.choice([
                           f"In which region was the founder of {c} born?",
                           f"The person who founded {c} comes from a city in which state or country?"])),
        ],
        "4-hop": [
            lambda p: ([p, persons[p].spouse, persons[persons[p].spouse].employer, employer_city(persons[p].spouse)],
                       region_of[employer_city(persons[p].spouse)], rng.choice([
                           f"In which state or country is the headquarters of the company employing {p}'s spouse?",
                           f"{p}'s spouse works for a company. Which region is that company's head office in?"])),
            lambda c: ([c, comps[c].founder, persons[comps[c].founder].employer,
                        employer_city(comps[c].founder)], region_of[employer_city(comps[c].founder)], rng.choice([
                            f"The founder of {c} now works for another company. In which region is that "
                            "company headquartered?",
                            f"Which state or country is home to the head office of the current employer of "
                            f"the person who founded {c}?"])),
        ],
    }
    records = []
    for hops, makers in kinds.items():
        for index, maker in enumerate(makers):
            pool = sorted(persons if maker.__code__.co_varnames[0] == "p" else comps)  # starts at a person or a company
            rng.shuffle(pool)
            for start in pool[:per_kind]:
                path, answer, question = maker(start)
                if len(set(path)) < len(path):
                    continue
                distract = [n for n in pool if n not in path][:2]
                colleagues = [q for q in persons if persons[q].employer in path and q not in path][:2]
                neighbours = [c for city in path if city in in_city for c in in_city[city] if c not in path][:2]
                filler = rng.sample(real[:background], 3)
                titles = list(dict.fromkeys(path + distract + colleagues + neighbours + filler))
                contexts = [{"title": t, "paragraph_text": pages[t], "is_supporting": t in path} for t in titles]
                rng.shuffle(contexts)
                records.append({"question_id": f"{hops}-{index}-{len(records)}", "question_text": question,
                                "type": hops, "path": path, "answers_objects": [{"spans": [answer]}],
                                "contexts": contexts})
    covered = {c["title"] for r in records for c in r["contexts"]}
    rest = [t for t in pages if t not in covered]
    for index, title in enumerate(rest):  # every page is in the store
        records[index % len(records)]["contexts"].append(
            {"title": title, "paragraph_text": pages[title], "is_supporting": False})
    return records


# ---- pooled memory of templated statements ----------------------------------------------------------------

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
    "attributes": {
        "place": ("{e}的地点是{city}。", "{e}的地点是哪里？", "{e2}是在哪个城市办的？"),
        "size": ("{e}的人数是{n}人。", "{e}的人数是多少？", "{e2}一共去了几个人？"),
        "lead": ("{e}的负责人是{p}。", "{e}的负责人是谁？", "{e2}是谁张罗的？"),
    },
    "chat": ["{e}挺好玩的，{city}的风景不错。", "还在想{e}要不要叫上{p}。", "{e}的照片我还没整理完。",
             "{p}说{e}订的酒店在{city}，离车站很近。"],
}
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]


def _event_statements(rng: random.Random, n: int, cities: list[str], people: list[str]
                      ) -> list[tuple[str, str, str, str]]:
    """``n`` distinct events, each with two of its attributes stated."""
    combos = [(g, t, a) for g in _ZH_EVENTS["groups"] for t in _ZH_EVENTS["times"] for a in _ZH_EVENTS["activities"]]
    out = []
    for (g, g2), (t, t2), (a, a2) in rng.sample(combos, min(n, len(combos))):
        event, event2 = f"{g}{t}的{a}", f"{g2}{t2}那次{a2}"
        for attr in rng.sample(sorted(_ZH_EVENTS["attributes"]), 2):
            fill = {"e": event, "e2": event2, "city": rng.choice(cities), "n": rng.randint(5, 80),
                    "p": rng.choice(people)}
            text, q1, q2 = (t.format(**fill) for t in _ZH_EVENTS["attributes"][attr])
            out.append((text, q1, q2, attr))
    return out


def _stamp(day: int) -> str:
    """LoCoMo's session date format, one day apart from 1 March 2024."""
    month, dom = divmod(day, 28)
    return f"{1 + day % 11}:{day % 6}0 pm on {1 + dom} {_MONTHS[(2 + month) % 12]}, {2024 + (2 + month) // 12}"


def make_pool(src: Sources, rng: random.Random, lang: str, *, people: int = 170, questions: int = 240,
              turn_share: float = 0.25, lectures: int = 100, chats: int = 250, foreign_docs: int = 80,
              locomo_sessions: int = 5, events: int = 0, mixed: bool = False) -> list[dict]:
    """One LoCoMo-shape record (one tenant): conversation sessions plus ``documents``; questions ask for one
    statement each. ``events`` > 0 (Chinese only): statements about that many nameless events (group, time and
    activity) in place of the statements about people; with ``mixed``, beside them (and chat about both)."""
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
        statements, chat_lines = statements + _event_statements(rng, events, cities, people_used), [
            *v["chat"], *_ZH_EVENTS["chat"]]
    elif events:
        statements, chat_lines = _event_statements(rng, events, cities, people_used), _ZH_EVENTS["chat"]
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
            fill["e"] = "".join(rng.choice(_ZH_EVENTS[k])[0] for k in ("groups", "times")) + "的" + rng.choice(
                _ZH_EVENTS["activities"])[0]
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
               chats: int = 60, lectures: int = 8, events: int = 0) -> list[dict]:
    """``users`` LoCoMo-shape records, each one user's Chinese daily memory (``make_pool`` per user, drawn
    one after another from ``rng``): every statement said in chat (no notes, no foreign documents, no
    English sessions), so a store is a few hundred short messages, as an assistant's memory of one person
    is, rather than one pooled tenant of thousands. ``events`` > 0: that many nameless events (group, time,
    activity) beside the statements about people, and chat about both."""
    records = []
    for user in range(users):
        record = make_pool(src, rng, "zh", people=people, questions=questions, turn_share=1.0, lectures=lectures,
                           chats=chats, foreign_docs=0, locomo_sessions=0, events=events, mixed=True)[0]
        record["sample_id"] = f"zh-user{user}"
        records.append(record)
    return records


# ---- entry point ----------------------------------------------------------------------------------------


def generate(source: Path, out: Path, seed: int, kinds: list[str]) -> dict[str, Path]:
    src = Sources.read(source)
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    if "chains" in kinds:
        path = out / "chains.jsonl"
        records = make_chains(src, random.Random(seed))
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
        written["chains"] = path
    for lang in ("zh", "en"):
        if lang in kinds:
            path = out / f"{lang}_pool.json"
            path.write_text(json.dumps(make_pool(src, random.Random(seed), lang), ensure_ascii=False),
                            encoding="utf-8")
            written[lang] = path
    if "zh_events" in kinds:
        path = out / "zh_events.json"
        pool = make_pool(src, random.Random(seed), "zh", events=520, questions=180, chats=150, lectures=80,
                         locomo_sessions=3)
        pool[0]["sample_id"] = "zh-events"
        path.write_text(json.dumps(pool, ensure_ascii=False), encoding="utf-8")
        written["zh_events"] = path
    if "zh_users" in kinds:
        path = out / "zh_users.json"
        path.write_text(json.dumps(make_users(src, random.Random(seed)), ensure_ascii=False), encoding="utf-8")
        written["zh_users"] = path
    for kind, (tenant, shape) in _USER_VARIANTS.items():
        if kind in kinds:
            path = out / f"{kind}.json"
            records = make_users(src, random.Random(seed), **shape)
            for record in records:
                record["sample_id"] = record["sample_id"].replace("zh-user", tenant)
            path.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
            written[kind] = path
    return written


# The per-user variants beside the plain zh_users: (their tenants' prefix, make_users arguments).
_USER_VARIANTS = {
    "zh_users_mixed": ("zh-mixed", {"people": 5, "events": 20}),
    "zh_users_events": ("zh-events-user", {"people": 3, "events": 60, "chats": 150}),
}


def breakdown(dataset: Path, questions: Path) -> dict[str, dict[str, float]]:
    """Soft recall per system and kind of question from an eval run's per-question JSON lines: a pool's
    ``qa.kind`` (note/said × template/paraphrase); for chains, each page's presence by its place on the path
    ("3-hop:hop2") and whether the answer is in the prompt."""
    kind_of: dict[str, str] = {}
    paths: dict[str, list[str]] = {}
    if dataset.suffix == ".json":
        for rec in json.loads(dataset.read_text("utf-8")):
            for index, qa in enumerate(rec["qa"]):
                kind_of[f"{rec['sample_id']}:q{index}"] = qa.get("kind", "all")
    else:
        for line in dataset.read_text("utf-8").splitlines():
            rec = json.loads(line)
            kind_of[rec["question_id"]] = rec.get("type", "all")
            paths[rec["question_id"]] = rec.get("path", [])
    sums: dict[str, dict[str, list[float]]] = {}
    for line in questions.read_text("utf-8").splitlines():
        row = json.loads(line)
        kind = kind_of.get(row["qid"], row.get("category", "all"))
        into = sums.setdefault(row["system"], {})
        for key in (kind, "all"):
            into.setdefault(key, []).append(row["soft"])
        present = dict(zip(row["evidence"], row["present"]))
        for hop, title in enumerate(paths.get(row["qid"], []), 1):
            into.setdefault(f"{kind}:hop{hop}", []).append(float(present.get(title, False)))
        if "answer_in_prompt" in row:
            into.setdefault("answer in prompt", []).append(float(row["answer_in_prompt"]))
    return {system: {k: round(sum(v) / len(v), 3) for k, v in sorted(kinds.items())}
            for system, kinds in sums.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="the development files' folder")
    parser.add_argument("--out", type=Path, default=Path("reports/devmat"))
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--kinds", default="chains,zh,en,zh_events",
                        help="comma list of chains, zh, en, zh_events, zh_users, zh_users_mixed, zh_users_events")
    parser.add_argument("--breakdown", nargs=2, type=Path, metavar=("DATASET", "QUESTIONS_JSONL"),
                        help="print soft recall per system and kind of question for an eval run, and exit")
    args = parser.parse_args(argv)
    if args.breakdown:
        for system, kinds in breakdown(*args.breakdown).items():
            print(system, json.dumps(kinds))
        return 0
    written = generate(args.source, args.out, args.seed, [k.strip() for k in args.kinds.split(",") if k.strip()])
    for kind, path in written.items():
        print(f"{kind}: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
