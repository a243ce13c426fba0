"""The sentence that names a linked page, compared with the question (link_sentence_match)."""

from agent_memory.core.text import keyword_set
from agent_memory.retrieval.pages import naming_sentence_overlap


def test_the_sentence_naming_the_page_shares_the_question_s_relation():
    text = ("Haripur Platt is a photographer who was born in Chennai in 1980. Platt's spouse is Alex Crate. "
            "Since 2006, Platt has been employed by Avakian Pharmaceuticals.")
    asked = keyword_set("The company employing Haripur Platt has its headquarters in which region?")
    assert naming_sentence_overlap(text, "Avakian Pharmaceuticals", asked, "Haripur Platt") == 1  # employ
    assert naming_sentence_overlap(text, "Alex Crate", asked, "Haripur Platt") == 0
    assert naming_sentence_overlap(text, "Chennai", asked, "Haripur Platt") == 0
    # The passage's own title and the name itself do not count.
    assert naming_sentence_overlap("Haripur Platt knows Haripur Platt.", "Haripur Platt", asked) == 0


def test_chinese_sentences_are_split_and_segmented():
    text = "星海科技是一家软件公司。星海科技的总部设在杭州。它赞助了东方足球队。"
    asked = keyword_set("星海科技的总部在哪个城市？")
    assert naming_sentence_overlap(text, "杭州", asked, "星海科技") == 1  # 总部
    assert naming_sentence_overlap(text, "东方足球队", asked, "星海科技") == 0
