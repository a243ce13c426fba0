"""Whom a turn tells of (agent_memory/index/told_of.py) and the reranker's signal that reads it for a question asked
in the first person (agent_memory/retrieval/rerank/signals.py ``tells_of_others``)."""

from __future__ import annotations

from agent_memory.core.records import MemoryItem, Triple
from agent_memory.index.told_of import TOLD_OF, people_told_of
from agent_memory.index.triples.speaker import asks_about_asker
from agent_memory.retrieval.rerank.signals import tells_of_others
from agent_memory.retrieval.types import Candidate


def item(item_id: str, speaker: str, kind: str = "turn", told: list[str] | None = None, text: str = "…") -> MemoryItem:
    metadata = {"speaker": speaker, **({TOLD_OF: told} if told is not None else {})}
    return MemoryItem(id=item_id, tenant="t", source_id=item_id, kind=kind, text=text, metadata=metadata)


def fact(item_id: str, subject: str, subject_type: str, relation: str = "move to", obj: str = "Dallas") -> Triple:
    return Triple(subject=subject, relation=relation, object=obj, item_id=item_id, subject_type=subject_type,
                  object_type="GPE")


def test_a_turn_tells_of_the_people_its_facts_are_about_other_than_its_speaker():
    items = [item("a", "Lin", text="Tom Riley moved to Dallas. Kate stays. I moved too."),
             item("b", "user", text="I moved to Dallas."),
             item("c", "Lin", text="My new manager is Fazle Newcombe."),
             item("d", "Lin", kind="chunk", text="Marie Curie moved to Paris."),
             item("e", "小林", text="杨笑刚搬到福冈。我也搬了。"),
             item("f", "user", text="Went to Chiswick with Molly at the weekend."),
             item("g", "user", text="Marion Lindberg took over as my boss today."),
             item("h", "user", text="My friend Melissa Charamba just moved to Southern California."),
             item("i", "assistant", text="Andy walks in wearing a tuxedo.")]
    triples = [
        fact("a", "Tom Riley", "PERSON"), fact("a", "Kate", "person"), fact("a", "Tom Riley", "PERSON"),
        fact("a", "Lin", "PERSON"),  # the speaker's own first person, named
        fact("b", "User", "PERSON"),  # the user role's first person
        fact("b", "Dallas", "GPE"),  # a place is nobody
        fact("c", "new manager", "entity", "is_a", "Fazle Newcombe"),  # a person as the object: told of Lin
        fact("d", "Marie Curie", "PERSON"),  # a document's page is about whom it is about: no record
        fact("e", "杨笑", "PERSON"), fact("e", "小林", "PERSON"),
        fact("f", "Molly", "PERSON", "related_to", "weekend"),  # whom the speaker went with: their own outing
        # A fact that ties the person to the speaker makes them part of the speaker's story, whatever else is said.
        fact("g", "Marion Lindberg", "PERSON", "take over as", "User's boss"),
        fact("g", "Marion Lindberg", "PERSON", "related_to", "today"),
        fact("h", "Melissa Charamba", "PERSON", "is_a", "User's friend"),  # opens no sentence: "My friend ..."
        fact("i", "Andy", "PERSON", "walk in", "tuxedo"),  # an assistant's script tells of its characters
        fact("zz", "Nobody Stored", "PERSON"),  # not one of these items
    ]
    assert people_told_of(items, triples) == {"a": ["Kate", "Tom Riley"], "e": ["杨笑"]}


def test_a_possessive_is_not_part_of_the_name():
    told = people_told_of([item("a", "user", text="Helen Shank's new manager is Daniel.")],
                          [fact("a", "Helen Shank's", "PERSON", "related_to", "Daniel")])
    assert told == {"a": ["Helen Shank"]}


def test_only_a_question_in_the_first_person_asks_about_its_asker():
    for question in ("Where do I live now?", "Who is my manager?", "What did Kate tell me?", "I'm looking for my keys",
                     "我现在住在哪里？"):
        assert asks_about_asker(question), question
    for question in ("Where does Nick work now?", "我们公司在哪里？", "Which film won in 1997?", "杨君最近去了哪座城市？"):
        assert not asks_about_asker(question), question


def candidates(*rows: tuple[str, str, list[str] | None]) -> list[Candidate]:
    return [Candidate(item=item(i, "Lin", kind=kind, told=told)) for i, kind, told in rows]


def test_turns_that_tell_of_others_are_marked_for_a_question_about_the_asker():
    found = candidates(("own", "turn", None), ("tom", "turn", ["Tom Riley"]), ("doc", "chunk", ["Marie Curie"]),
                       ("yang", "turn", ["杨笑"]), ("empty", "turn", []))
    assert tells_of_others("Where do I live now?", found).tolist() == [0.0, 1.0, 0.0, 1.0, 0.0]
    # Asked about someone else, nobody is marked; asked about Tom (a word of his name), his turn keeps its place.
    assert tells_of_others("Where does Nick live now?", found).tolist() == [0.0] * 5
    assert tells_of_others("What did Tom tell me about his move?", found).tolist() == [0.0, 0.0, 0.0, 1.0, 0.0]
    assert tells_of_others("我朋友杨笑现在住在哪里？", found).tolist() == [0.0, 1.0, 0.0, 0.0, 0.0]


def test_a_turn_that_writes_a_name_the_question_writes_keeps_its_place():
    # The user's brief tells of Andy's colleagues (the extractor read Roger and John as its subjects, not Andy); the
    # question asks about Andy, whom the brief writes.
    brief = Candidate(item=item("brief", "user", told=["John", "Roger"],
                                text="Andy, a man in his 40s, wears a stained shirt. Roger is his colleague."))
    other = Candidate(item=item("other", "user", told=["Roger"], text="Roger moved to Leeds."))
    question = "What was Andy wearing in the script you wrote for me?"
    assert tells_of_others(question, [brief, other]).tolist() == [0.0, 1.0]


def test_every_part_of_a_long_turn_carries_whom_the_whole_turn_tells_of():
    first = MemoryItem(id="p1", tenant="t", source_id="s/t0", kind="turn", text="Andy leads the team. Roger helps.",
                       metadata={"speaker": "user"})
    second = MemoryItem(id="p2", tenant="t", source_id="s/t0", kind="turn", text="John invigilates exams.",
                        metadata={"speaker": "user"})
    elsewhere = MemoryItem(id="q1", tenant="t", source_id="s/t1", kind="turn", text="I moved.", metadata={"speaker": "user"})
    triples = [fact("p1", "Andy", "PERSON", "lead", "team"), fact("p2", "John", "PERSON", "invigilate", "exams")]
    assert people_told_of([first, second, elsewhere], triples) == {"p1": ["Andy", "John"], "p2": ["Andy", "John"]}


def test_every_reading_a_data_dir_records_has_its_way_to_be_read_again():
    from agent_memory.ingest.stored_readings import READ_AGAIN
    from agent_memory.stores.index_format import STORED_FACTS

    assert set(READ_AGAIN) == set(STORED_FACTS)


def test_a_person_described_by_an_adjective_is_told_of():
    # "Kate Nguyen is busy with …" gave no fact before the extractor read an adjective and what it is of, and so told
    # of nobody: a question in the first person ranked it as the user's own statement.
    from agent_memory.index.triples import RuleBasedExtractor

    texts = {"a": "Kate Nguyen is busy with the birthday party lately.", "b": "Ayesha Mineo is allergic to peanuts."}
    items = [item(key, "user", text=text) for key, text in texts.items()]
    extractor = RuleBasedExtractor()
    triples = [t for key, text in texts.items()
               for t in extractor.extract(text, tenant="t", source_id=key, item_id=key)]
    assert people_told_of(items, triples) == {"a": ["Kate Nguyen"], "b": ["Ayesha Mineo"]}
