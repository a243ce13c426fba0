"""The time window of a question written in Chinese: dates, days and a year's parts (spans beside the
English ones in tests/unit/test_time_window.py)."""

from datetime import datetime

import pytest

from agent_memory.retrieval.config import RetrievalConfig
from agent_memory.retrieval.when import DateSlack, question_window
from agent_memory.retrieval.when_chinese import chinese_window

ASKED = datetime(2022, 4, 12, 22, 57)  # a Tuesday
SLACK = DateSlack(RetrievalConfig().time_after_day, RetrievalConfig().time_after_month)


@pytest.mark.parametrize("question, phrase, inside, outside", [
    ("我昨天吃了什么？", "昨天", datetime(2022, 4, 11, 12), datetime(2022, 4, 12, 1)),
    ("前天和谁见面了？", "前天", datetime(2022, 4, 10, 9), datetime(2022, 4, 11, 9)),
    ("三天前我去了哪里？", "三天前", datetime(2022, 4, 9, 18), datetime(2022, 4, 12, 8)),
    ("两个月前买的那本书叫什么？", "两个月前", datetime(2022, 2, 2), datetime(2022, 4, 1)),
    ("半年前搬家是哪一天？", "半年前", datetime(2021, 10, 12), datetime(2022, 3, 1)),
])
def test_a_day_or_a_point_in_the_past_counts_back_from_the_day_asked(question, phrase, inside, outside):
    window = question_window(question, ASKED, SLACK)
    assert window.phrase == phrase
    assert window.holds(inside), window
    assert not window.holds(outside), window


@pytest.mark.parametrize("asked, question, inside, outside", [
    # Last calendar month and week, and a few days past their end (memory is written after the event).
    (ASKED, "上个月的聚餐是谁张罗的？", datetime(2022, 3, 15), datetime(2022, 2, 28)),
    (ASKED, "上月那次演出在哪里？", datetime(2022, 3, 1), datetime(2022, 4, 12)),
    (ASKED, "上周去哪儿玩了？", datetime(2022, 4, 5), datetime(2022, 4, 2)),
    (ASKED, "上个周末去哪儿玩了？", datetime(2022, 4, 9), datetime(2022, 4, 2)),   # as 上周末
    (ASKED, "上个周五那次聚餐在哪？", datetime(2022, 4, 8), datetime(2022, 4, 2)),  # as 上周五
    (ASKED, "这个周六有空吗？", datetime(2022, 4, 11), datetime(2022, 4, 10)),      # as 这周六
    (ASKED, "去年夏天的摄影展在哪里？", datetime(2021, 7, 15), datetime(2021, 5, 20)),
    (ASKED, "去年暑期那次远足是谁张罗的？", datetime(2021, 8, 1), datetime(2022, 7, 1)),
    (ASKED, "去年冬天我们去哪里滑雪了？", datetime(2022, 1, 15), datetime(2021, 11, 15)),
    (ASKED, "今年国庆去了哪个城市？", datetime(2022, 10, 3), datetime(2022, 9, 28)),
    (ASKED, "部门里今年十一那次比赛是谁张罗的？", datetime(2022, 10, 5), datetime(2022, 11, 15)),
    (ASKED, "今年十一月有什么安排？", datetime(2022, 11, 15), datetime(2022, 10, 3)),
    (ASKED, "前年春节那次聚餐一共去了几个人？", datetime(2020, 1, 25), datetime(2021, 1, 25)),
    (ASKED, "今年五一去爬山了吗？", datetime(2022, 5, 2), datetime(2022, 4, 28)),
    (ASKED, "明年3月的年会在哪里办？", datetime(2023, 3, 10), datetime(2022, 3, 10)),
    (ASKED, "去年发生了什么大事？", datetime(2021, 6, 1), datetime(2022, 1, 10)),
    (ASKED, "5月8号我在做什么？", datetime(2021, 5, 8, 20), datetime(2022, 5, 8, 20)),
    # A date needs no day asked.
    (None, "2023年5月8日发生了什么？", datetime(2023, 5, 8, 19), datetime(2023, 5, 20)),
    (None, "2023年5月去了哪里？", datetime(2023, 5, 30), datetime(2023, 4, 30)),
    (None, "2021年夏天在哪里实习？", datetime(2021, 7, 1), datetime(2021, 9, 20)),
    (None, "2019年读了哪些书？", datetime(2019, 12, 31), datetime(2018, 12, 31)),
])
def test_a_year_and_its_parts_count_from_the_year_asked_and_a_date_from_itself(asked, question, inside, outside):
    window = question_window(question, asked, SLACK)
    assert window is not None, question
    assert window.holds(inside), window
    assert not window.holds(outside), window


@pytest.mark.parametrize("question", ["上个月的聚餐是谁张罗的？", "去年夏天的摄影展在哪里？", "我昨天吃了什么？"])
def test_a_relative_phrase_needs_the_day_asked(question):
    assert question_window(question, None, SLACK) is None


@pytest.mark.parametrize("question", [
    "李希烈最爱吃什么？",
    "十一个人去了吗？",          # eleven people, not the National Day
    "1990年代流行什么音乐？",     # a decade is not a year
    "罗保铭是几月几号出生的？",   # asks for a date, names none
    "2月30日是什么日子？",       # no such day
    "What did I eat yesterday?",  # English: when.py's other patterns, not these
])
def test_phrases_that_name_no_window(question):
    assert chinese_window(question, ASKED, SLACK) is None


def test_a_turn_tells_the_window_its_own_words_name():
    """told_window is question_window counted from the day a turn was said, without slack, passing over texts
    that name no time."""
    from agent_memory.retrieval.when import told_window

    exact = DateSlack(0, 0)
    said = datetime(2023, 4, 10, 19, 0)
    for text in ["上个月给朋友小王做了咖喱羊肉。", "上周和小王去爬山了", "I went hiking yesterday.", "三天前去了杭州",
                 "Sunday was fun", "今晚做了汤", "We met on 3 May, 2023.", "nothing dated here", "", "十一月"]:
        assert told_window(text, said) == question_window(text, said, exact), text
    assert told_window("nothing dated here", said) is None
    march = told_window("上个月给朋友小王做了咖喱羊肉。", said)
    assert (march.start, march.stop) == (datetime(2023, 3, 1), datetime(2023, 4, 1))


def test_told_window_reads_every_phrase_question_window_reads():
    """Every phrase question_window reads, in either language, gets past told_window's substring tests: the
    Chinese ones are built from when.py's own tables, so a phrase added there without a piece fails here."""
    from agent_memory.retrieval import when, when_chinese

    said = datetime(2023, 4, 10, 19, 0)
    exact = DateSlack(0, 0)
    phrases = [*when._DAY_WORDS, "two weeks ago", "past three months", "this week", "in 2019", "2023-10-13",
               "13 October 2023", "October 13, 2023", "in November 2022", "summer 2021", "last summer",
               *when_chinese._ZH_DAYS_BACK, "三天前", "两个月前", "半年前", "最近两周", "过去三个月", "上个月", "这个月",
               "本月", "上周", "上个周", "上个星期", "上礼拜", "这周", "这个周", "本周", "5月8日", "2023年5月8日", "2023年5月", "2023年"]
    phrases += [f"{year}{part}" for year in when_chinese._ZH_YEAR_WORDS for part in [*when_chinese._ZH_PARTS, *when_chinese._ZH_SEASONS, "3月"]]
    for phrase in phrases:
        text = f"We met {phrase}, remember?" if phrase.isascii() else f"我们{phrase}见过"
        expected = question_window(text, said, exact)
        assert expected is not None, phrase
        assert when.told_window(text, said) == expected, phrase
