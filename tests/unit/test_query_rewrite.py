"""Follow-up questions rewritten with the session's recent turns (offline rules)."""

from __future__ import annotations

from agent_memory.core.records import MemoryItem
from agent_memory.retrieval.config import RetrievalConfig
from agent_memory.retrieval.rewrite import QueryRewriter, names, rule_rewrite


def turn(speaker: str, text: str, i: int = 0) -> MemoryItem:
    return MemoryItem(id=f"t{i}-{speaker}", tenant="t", source_id=f"s/{i}", kind="turn", text=text,
                      metadata={"speaker": speaker})


JOB = [turn("user", "Tell me about Maria Lopez's new job.", 0),
       turn("assistant", "Maria Lopez joined Globex as CTO in June.", 1)]


def test_pronouns_resolve_to_the_entity_of_the_previous_turn():
    assert rule_rewrite("Where does she live now?", JOB) == ("Where does Maria Lopez live now?", ["Maria Lopez"])
    assert rule_rewrite("What is her salary?", JOB)[0] == "What is Maria Lopez's salary?"
    assert rule_rewrite("Where is it based?", JOB)[0] == "Where is Globex based?"  # "it": not the person


def test_ellipsis_and_ordinals():
    asked = [turn("user", "Where does Maria live?", 0), turn("assistant", "In Porto.", 1)]
    assert rule_rewrite("What about Tom?", asked)[0] == "Where does Tom live?"
    listed = [turn("user", "Suggest couriers.", 0),
              turn("assistant", "Options:\n1. Falkenrath Logistics, fast\n2. Oderbruch Freight, cheap", 1)]
    assert rule_rewrite("How much does the second one cost?", listed)[0] == "How much does Oderbruch Freight cost?"


def test_standalone_questions_and_no_session_stay_as_asked():
    assert rule_rewrite("Where is Berlin?", JOB) == ("Where is Berlin?", [])
    assert rule_rewrite("Where does she live?", []) == ("Where does she live?", [])
    rewriter = QueryRewriter(lambda tenant, session, n: JOB, turns=RetrievalConfig().rewrite_turns)
    assert [v.name for v in rewriter.variants("Where does she live?", "t", None).items] == ["original"]
    variants = rewriter.variants("Where does she live?", "t", "s")
    assert [(v.name, v.text) for v in variants.items] == [
        ("original", "Where does she live?"), ("rewritten", "Where does Maria Lopez live?"),
        ("entities", "Maria Lopez")]
    assert variants.search_text == "Where does Maria Lopez live?" and variants.how == "rules"
    assert [d.target for d in variants.decisions()] == ["original", "rewritten", "entities"]


def test_names_are_multiword_and_skip_sentence_words():
    assert names("Tell me about Maria Lopez's job in Paris with the X-300. What now?") == [
        "Maria Lopez", "Paris", "X-300"]


def test_a_question_that_names_a_person_keeps_its_pronouns():
    chat = [turn("user", "Glad you liked it! Take care, Maria."), turn("assistant", "Ah, thanks John.")]
    for question in ("How did Gina promote her clothes store?", "What does Jon tell Gina he won't do?",
                     "What have Nate and Joanna both painted for their friends?"):
        assert rule_rewrite(question, chat) == (question, [])
    assert rule_rewrite("Where is it sold?", [turn("user", "I bought the Falkenrath X-300 yesterday.")])[0] == \
        "Where is Falkenrath X-300 sold?"  # a thing is still resolved


# Chinese: no capital marks a name; jieba's proper nouns do, and a pronoun is a pronoun token.
ZH_JOB = [turn("user", "跟我说说李娜的新工作。", 0), turn("assistant", "李娜六月加入了腾讯，在深圳当技术总监。", 1)]


def test_chinese_pronouns_resolve_to_the_names_of_the_previous_turn():
    assert rule_rewrite("她现在住在哪里？", ZH_JOB) == ("李娜现在住在哪里？", ["李娜"])
    assert rule_rewrite("她的工资是多少？", ZH_JOB)[0] == "李娜的工资是多少？"
    assert rule_rewrite("它的总部在哪里？", ZH_JOB)[0] == "腾讯的总部在哪里？"  # 它: not the person
    assert rule_rewrite("她在那里住了多久？", ZH_JOB) == ("李娜在深圳住了多久？", ["李娜", "深圳"])


def test_chinese_words_that_hold_a_pronoun_are_not_pronouns():
    assert rule_rewrite("其他人怎么看？", ZH_JOB) == ("其他人怎么看？", [])
    assert rule_rewrite("他弹吉他弹得怎么样？", ZH_JOB)[0] == "李娜弹吉他弹得怎么样？"  # 吉他 stays a guitar
    assert rule_rewrite("王芳说她什么时候回来？", ZH_JOB) == ("王芳说她什么时候回来？", [])  # names its person
    assert rule_rewrite("北京在哪里？", ZH_JOB) == ("北京在哪里？", [])


def test_chinese_ellipsis_and_ordinals():
    asked = [turn("user", "李娜住在哪里？", 0), turn("assistant", "在深圳。", 1)]
    assert rule_rewrite("那小王呢？", asked)[0] == "小王住在哪里？"
    assert rule_rewrite("为什么呢？", asked) == ("为什么呢？", [])  # asks something of its own
    listed = [turn("user", "推荐几个快递公司。", 0),
              turn("assistant", "可以考虑：\n1. 顺丰速运，很快\n2. 中通快递，便宜", 1)]
    assert rule_rewrite("第二个多少钱？", listed)[0] == "中通快递多少钱？"
    assert rule_rewrite("最后一个靠谱吗？", listed)[0] == "中通快递靠谱吗？"
    variants = QueryRewriter(lambda tenant, session, n: ZH_JOB, turns=RetrievalConfig().rewrite_turns).variants(
        "她现在住在哪里？", "t", "s")
    assert [(v.name, v.text) for v in variants.items] == [
        ("original", "她现在住在哪里？"), ("rewritten", "李娜现在住在哪里？"), ("entities", "李娜")]
