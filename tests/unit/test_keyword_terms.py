"""terms_in: the question's terms a passage holds, as keyword_set would say, without segmenting
the Chinese runs that cannot hold one."""

from __future__ import annotations

import random

import pytest

from agent_memory.core.text import joined_terms, keyword_set, keyword_terms, terms_in

TEXTS = [
    "为什么2008年NBA总决赛被誉为梦幻对决？凯尔特人与湖人再次相遇。",
    "四川大学华西医院是一所综合性医院，位于成都。",
    "Caroline went researching adoption agencies last May; she studies counseling.",
    "混合文本 with English words, running dogs and 3D打印技术 in 2019年.",
    "Ｆｕｌｌｗｉｄｔｈ ＮＢＡ 总决赛 and émigré café 的 故事",
    "",
    "的 了 是 the of and",
    "社区上月的音乐会在9月28日，这个月还有一场。",
    "去年秋季的运动会上个星期才发奖，过年前还有一场。",
    "上个星期五的聚餐在周日补办，这周一直下雨，上周一起去的人不多。",
]
QUESTIONS = [
    "2008年NBA总决赛为什么被称为梦幻对决？",
    "华西医院在哪里？",
    "What did Caroline research in May?",
    "Which 3D打印 technology ran in 2019?",
    "nba 总决赛 café",
    "小区上月那次演出是谁张罗的？",
    "上个月和去年秋天，还有春节那次，谁来了？",
    "上礼拜五那次聚餐和星期天的补办，谁一起去了？",
]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("question", QUESTIONS)
def test_the_terms_a_text_holds_are_keyword_sets(text, question):
    terms = frozenset(keyword_terms(question))
    assert terms_in([text], terms) == [terms & keyword_set(text)]


def test_terms_from_the_text_itself_are_all_found():
    rng = random.Random(3)
    for text in TEXTS:
        own = sorted(keyword_set(text))
        for _ in range(20):
            terms = frozenset(rng.sample(own, min(4, len(own)))) | {"不存在的词", "zebra"}
            assert terms_in([text], terms) == [terms & keyword_set(text)]


def test_a_chinese_term_inside_a_longer_word_is_not_a_match():
    text = "四川大学华西医院是一所综合性医院"
    words = keyword_set(text)
    assert "四川大学" in words and "大学" not in words  # jieba's words of the run
    # "大学" is a piece of the run but not one of its words: the words decide, not the substring
    assert terms_in([text], frozenset({"大学", "医院"})) == [frozenset({"医院"})]


def test_a_known_keyword_set_is_used_instead_of_reading_the_text():
    texts = ["Caroline researched adoption agencies in 2023.", "马超最爱吃的是火锅，他住在成都。", "nothing here"]
    terms = frozenset(keyword_terms("What did Caroline research about adoption? 马超爱吃火锅吗"))
    known = [keyword_set(t) for t in texts]
    stored = [joined_terms(t) for t in texts]
    assert [frozenset(s.split()) for s in stored] == known
    assert terms_in(texts, terms, stored) == terms_in(texts, terms) == [terms & k for k in known]
    # Per text: a stored set wins over the text; None reads the text.
    one = sorted(terms & known[0])[0]
    assert terms_in(texts[:2], terms, [one, None]) == [frozenset({one}), terms & known[1]]
    assert terms_in(texts[:1], terms, [""]) == [frozenset()]


def test_relative_time_words_are_one_term_not_a_bare_month():
    # jieba's dictionary cuts 上月 into 上 (a stopword) + 月, and 月 is in every date ("9月28日")
    assert "上个月" in keyword_terms("小区上月那次演出是谁张罗的？")
    assert "月" not in keyword_terms("上月 下月 次月 这个月")
    assert keyword_set("社区上月的音乐会") & keyword_set("摄影展的时间是12月16日") == frozenset()


@pytest.mark.parametrize(("asked", "said"), [
    ("小区上月那次演出是谁张罗的？", "社区上个月的音乐会的负责人是马子。"),
    ("去年秋季那次出游在哪？", "合唱团去年秋天的出游在洛阳。"),
    ("前年过年那次聚会谁张罗的？", "家里亲戚前年春节的聚会是小李办的。"),
    ("上礼拜的会开了吗", "上周的会改期了"),
    ("今年劳动节去哪了", "今年五一去了杭州"),
    ("小区上个周末那次吃饭是谁张罗的？", "社区上周末的聚餐的负责人是孟广美。"),
    ("本周末有空吗", "这周末去爬山"),
    ("上个季度的销售额是多少", "上季度销售额涨了一成"),
])
def test_a_time_word_written_two_ways_is_one_term(asked, said):
    """A question in one wording finds a statement in the other by keyword, as stemming does for English."""
    shared = keyword_set(asked) & keyword_set(said)
    assert shared - {"去年", "前年", "今年"}, (asked, said)
    assert terms_in([said], keyword_set(asked)) == [shared]


def test_eleven_stays_a_number():
    # 十一 is the October holiday in 今年十一, and the number eleven elsewhere: it keeps its own term
    assert "十一" in keyword_terms("今年十一去哪了") and "国庆" not in keyword_terms("他考了第十一名，十一岁")


def test_the_pos_tagger_reads_the_same_time_words():
    from agent_memory.core.chinese_words import load_posseg

    assert ("上月", "t") in [(w.word, w.flag) for w in load_posseg().cut("上月我们去爬山")]


def test_every_spelling_of_a_time_word_is_one_jieba_word():
    """The table maps whole words: a spelling jieba cut in two (这星期 → 这 + 星期) would never be mapped."""
    from agent_memory.core.chinese_words import TIME_WORD_FORMS, cjk_words

    for word in {*TIME_WORD_FORMS, *TIME_WORD_FORMS.values()}:
        assert word in cjk_words(f"我们{word}去了"), word


@pytest.mark.parametrize(("asked", "said"), [
    ("上周五那次吃饭是谁张罗的？", "上个星期五的聚餐是小李办的。"),
    ("上个周五去哪了", "上礼拜五去了杭州"),
    ("这个周六有空吗", "本周六去爬山"),
    ("下星期一开什么会", "下个周一开年终会"),
    ("上个礼拜天去公园了吗", "上周日去了公园"),
    ("星期天几点起床", "礼拜日八点起床"),
])
def test_a_weekday_written_any_way_is_one_term(asked, said):
    """jieba cuts weekdays unevenly (上周五 whole, 上个周五 as 上 / 个 / 周五): the weekday rule reads them first."""
    shared = keyword_set(asked) & keyword_set(said)
    assert len([t for t in shared if "周" in t]) == 1, (asked, said, shared)
    assert "个" not in keyword_set(asked) | keyword_set(said)
    assert terms_in([said], keyword_set(asked)) == [shared]


@pytest.mark.parametrize(("text", "terms"), [
    ("这周一直很忙", {"这周", "一直"}),        # 一直 (all along), not Monday
    ("上周一起去吃饭", {"上周", "一起"}),      # 一起 (together)
    ("这周天气很好", {"这周", "天气"}),
    ("这周日常工作很多", {"这周", "日常"}),
    ("早上周五去", {"早上", "周五"}),          # 早上 (morning) keeps its 上; the weekday is bare
    ("一个周六的早上", {"一个", "周六"}),
])
def test_a_day_character_that_starts_a_common_word_is_that_word(text, terms):
    got = keyword_set(text)
    assert terms <= got, (text, got)
    assert terms_in([text], frozenset(terms)) == [frozenset(terms)]


def test_the_weekday_rule_leaves_the_metric_words_alone():
    """Only keyword terms read weekdays as one: the evaluation's word coverage still counts jieba's words."""
    from agent_memory.core.text import words

    assert words("上个星期五去吃饭") == ["上", "个", "星期五", "去", "吃饭"]
    assert keyword_terms("上个星期五去吃饭") == ["上周五", "去", "吃饭"]
