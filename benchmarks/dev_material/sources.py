"""The development files the generated material is drawn from, and the names drawn out of them.

Its own file because every family of kinds (chains, pools) reads the same files and recombines the same
names: HotpotQA people, cities with their regions and universities; CMRC people, cities and organisations.
"""

from __future__ import annotations

import json
import logging
import random
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


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
