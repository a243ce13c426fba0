"""Chinese words: jieba, loaded once with the relative time words its dictionary lacks, and one keyword form
for each time word and weekday however it is written (上月 / 上个月, 上个星期五 / 上周五). ``core/text.py`` reads
Chinese runs through these; the triples tagger and the working-memory filters load the same dictionary."""

from __future__ import annotations

import functools
import logging
import re

from agent_memory.core.extras import import_lazily

# Relative time words jieba's dictionary lacks: without them "上月" (last month) becomes 上 (a
# stopword) + 月, and the bare 月 matches every dated statement ("9月28日"), so a question about
# "上月" is answered by keyword with whatever holds a date. Tagged "t" (time) for the POS tagger.
# Changing this list changes the stored keyword terms: bump SPARSE_FORMAT (agent_memory/core/sparse.py).
TIME_WORDS = ("上月", "下月", "次月", "这个月", "那个月", "这周", "这个星期", "本年", "后年",
              "上季度", "下季度", "这周末", "下周末", "上上周", "上礼拜", "上个礼拜", "这礼拜", "下礼拜", "这星期",
              "上个周末", "这个周末", "下个周末", "本周末")

# One keyword term per meaning for Chinese time words written two ways, as English words are stemmed:
# "上月" and "上个月" are one month, "秋季" and "秋天" one season, so a question in one wording finds
# a statement in the other by keyword too (jieba keeps each of these whole). 十一 (the October holiday)
# is left alone: it is also the number eleven. Changing this table changes the stored keyword terms:
# bump SPARSE_FORMAT (agent_memory/core/sparse.py).
TIME_WORD_FORMS = {
    "上月": "上个月", "下月": "下个月", "本月": "这个月",
    "上星期": "上周", "上个星期": "上周", "上礼拜": "上周", "上个礼拜": "上周",
    "本周": "这周", "这个星期": "这周", "这星期": "这周", "这礼拜": "这周",
    "下星期": "下周", "下个星期": "下周", "下礼拜": "下周",
    "上个周末": "上周末", "这个周末": "这周末", "本周末": "这周末", "下个周末": "下周末",
    "上个季度": "上季度", "下个季度": "下季度",
    "本年": "今年",
    "春季": "春天", "夏季": "夏天", "秋季": "秋天", "冬季": "冬天",
    "暑期": "暑假", "过年": "春节", "劳动节": "五一", "国庆节": "国庆",
    "中秋节": "中秋", "端午节": "端午", "元宵节": "元宵", "清明节": "清明", "圣诞节": "圣诞",
}


# A weekday is one keyword term however it is written: 上个星期五, 上礼拜五 and 上周五 are 上周五, 星期天 and
# 礼拜日 are 周日, 这个周六 and 本周六 are 这周六. jieba cuts these unevenly (上周五 whole, 上个周五 as 上 / 个 /
# 周五, 上个礼拜天 as 上个礼拜 / 天去), so the phrase is read by this pattern before jieba sees the rest of
# the run. Where a character of the phrase makes a common word with its neighbour outside it (jieba's
# dictionary count at least WEEKDAY_WORD_COUNT), the word wins: in 上周一起 the 一 is 一起 ("together last
# week"), in 早上周五 the 上 is 早上 (the bare 周五 is still read).
# Changing this rule changes the stored keyword terms: bump SPARSE_FORMAT (agent_memory/core/sparse.py).
_WEEKDAY_PREFIX = {"上上": "上上", "上": "上", "下": "下", "这": "这", "本": "这"}  # as written → in the term
_WEEKDAY_UNITS = ("周", "星期", "礼拜")
_WEEKDAY_DAYS = "一二三四五六日天"
# One pattern and one spellings table (weekday_spellings) from the same three tables; 上上 before 上.
_WEEKDAY = re.compile(f"(?:(?P<prefix>{'|'.join(sorted(_WEEKDAY_PREFIX, key=len, reverse=True))})个?)?"
                      f"(?P<unit>{'|'.join(_WEEKDAY_UNITS)})(?P<day>[{_WEEKDAY_DAYS}])")
WEEKDAY_WORD_COUNT = 1000


def _weekday_form(prefix: str | None, day: str) -> str:
    return f"{_WEEKDAY_PREFIX.get(prefix or '', '')}周{'日' if day == '天' else day}"


def weekday_spellings() -> dict[str, tuple[str, ...]]:
    """Every spelling _WEEKDAY reads as each weekday term (the term itself first)."""
    out: dict[str, list[str]] = {}
    for prefix in ("", *_WEEKDAY_PREFIX):
        for counter in ("", "个") if prefix else ("",):
            for unit in _WEEKDAY_UNITS:
                for day in _WEEKDAY_DAYS:
                    form = _weekday_form(prefix, day)
                    out.setdefault(form, [form]).append(prefix + counter + unit + day)
    return {form: tuple(dict.fromkeys(ways)) for form, ways in out.items()}


def _common_word(pair: str) -> bool:
    return len(pair) == 2 and load_jieba().dt.FREQ.get(pair, 0) >= WEEKDAY_WORD_COUNT


def _weekdays(run: str) -> list[tuple[int, int, str]]:
    """(start, end, term) of each weekday phrase of a Chinese run that reads as one (see _WEEKDAY)."""
    found = []
    for match in _WEEKDAY.finditer(run):
        if _common_word(run[match.end() - 1:match.end() + 1]):
            continue  # 上周一起: the day is a word's first character
        start, prefix = match.start(), match.group("prefix")
        if prefix and _common_word(run[start - 1:start + 1] if start else ""):
            start, prefix = match.start("unit"), None  # 早上周五: the prefix ends a word
        found.append((start, match.end(), _weekday_form(prefix, match.group("day"))))
    return found


@functools.lru_cache(maxsize=1)
def load_jieba():
    """jieba, initialized once with TIME_WORDS: every segmenter (keyword terms, POS tags) uses it."""
    jieba = import_lazily("jieba")
    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    for word in TIME_WORDS:
        jieba.add_word(word, tag="t")
    return jieba


@functools.lru_cache(maxsize=1)
def load_posseg():
    """jieba's part-of-speech segmenter over the shared dictionary (``load_jieba``: time words included), so that
    the entities it tags and the keyword terms agree; loaded on first use (its dictionaries take seconds, and
    English never needs them)."""
    load_jieba()
    return import_lazily("jieba.posseg")


def cjk_words(run: str) -> list[str]:
    """jieba's words of a Chinese run, as written (no part-of-speech tagging: ten times faster)."""
    return [t for t in load_jieba().lcut(run) if t.strip()]


def keyword_cjk_words(run: str) -> list[str]:
    """cjk_words, with each weekday phrase (_WEEKDAY) one word in its one form: keyword terms read runs so."""
    out: list[str] = []
    start = 0
    for begin, end, term in _weekdays(run):
        out += cjk_words(run[start:begin])
        out.append(term)
        start = end
    return out + cjk_words(run[start:]) if start else cjk_words(run)
