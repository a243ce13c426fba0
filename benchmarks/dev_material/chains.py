"""The ``chains`` kind: HotpotQA-shape questions that need 3 or 4 encyclopedia paragraphs.

Its own file because the entity pages (people, companies, cities) and the paths through them share
nothing with the pooled memories but the names in ``sources``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from benchmarks.dev_material.sources import Sources, _unique, _unique_names, english_names

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
