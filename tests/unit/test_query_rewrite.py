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
