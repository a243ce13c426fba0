"""De-duplication of ranked candidates: the same content, overlapping spans of one source, and near-duplicate
vectors, with the exceptions that keep a passage adding words, numbers or question terms the kept one lacks."""

from __future__ import annotations

import numpy as np

from agent_memory.core.text import keyword_set
from agent_memory.retrieval.dedup import deduplicate, new_numbers
from agent_memory.retrieval.types import Decision
from tests.retrieval_items import candidates, item


def test_same_content_hash_keeps_the_first():
    decisions: list[Decision] = []
    kept = deduplicate(candidates(item("a", content_hash="h1"), item("b", content_hash="h2"),
                                  item("c", "other-source", content_hash="h1")), None, 0.95, decisions)
    assert [c.item.id for c in kept] == ["a", "b"]
    [decision] = decisions
    assert (decision.stage, decision.target, decision.action) == ("dedup", "c", "dropped")
    assert "same content as a" in decision.reason


def test_overlapping_spans_of_one_source_are_merged_to_the_better():
    decisions: list[Decision] = []
    kept = deduplicate(candidates(
        item("c1", "doc", start=100, end=300),
        item("c2", "doc", start=200, end=320),   # 100 of its 120 chars inside c1: dropped
        item("c3", "doc", start=290, end=500),   # 10 chars of overlap: a different span, kept
        item("c4", "other", start=100, end=300),  # same offsets of another source: kept
        item("s1", "doc", kind="summary", start=100, end=300),  # another kind of the same source: kept
    ), None, 0.95, decisions)
    assert [c.item.id for c in kept] == ["c1", "c3", "c4", "s1"]
    assert [(d.target, d.action) for d in decisions] == [("c2", "dropped")]
    assert "overlaps c1 of the same source" in decisions[0].reason


def test_a_longer_span_holding_a_kept_tail_chunk_takes_its_place():
    # A tail chunk, mostly the overlap with the chunk before it, ranks first; the whole chunk is
    # dropped as its overlap unless longer_span_replaces: then it takes the tail's place.
    tail, whole = item("tail", "doc", start=900, end=960), item("whole", "doc", start=400, end=940)
    other, inner = item("x", "other", start=0, end=10), item("inner", "doc", start=420, end=700)
    decisions: list[Decision] = []
    kept = deduplicate(candidates(tail, other, whole, inner), None, 0.95, decisions, longer_span_replaces=True)
    assert [c.item.id for c in kept] == ["whole", "x"]  # in the tail's place, ahead of x
    assert [(d.target, d.action) for d in decisions] == [("tail", "replaced"), ("inner", "dropped")]
    assert "lies inside whole" in decisions[0].reason and "overlaps whole" in decisions[1].reason
    # Off (the old rule), or a later span that is mostly the kept one: dropped.
    assert [c.item.id for c in deduplicate(candidates(tail, other, whole), None, 0.95, [])] == ["tail", "x"]
    near_copy = item("copy", "doc", start=890, end=980)  # longer, but two thirds of it is the tail
    assert [c.item.id for c in deduplicate(candidates(tail, near_copy), None, 0.95, [],
                                           longer_span_replaces=True)] == ["tail"]


def test_turns_without_offsets_do_not_count_as_overlapping():
    kept = deduplicate(candidates(item("t1", "s/1", kind="turn"), item("t2", "s/1", kind="turn")), None, 0.95, [])
    assert len(kept) == 2


def test_near_duplicate_vectors_drop_the_later_one():
    vectors = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.999, 0.0447, 0.0], [0.6, 0.8, 0.0]],
                       dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    decisions: list[Decision] = []
    def four():
        return candidates(item("a", text="the sensor draws 9 mA"), item("b", text="the probe reads humidity"),
                          item("a-copy", text="The sensor draws 9 mA."), item("mix", text="The probe reads humidity."))

    kept = deduplicate(four(), vectors, 0.95, decisions)
    assert [c.item.id for c in kept] == ["a", "b", "mix"]
    [decision] = decisions
    assert decision.target == "a-copy" and decision.action == "dropped"
    assert decision.reason.startswith("near-duplicate of a (cosine 0.99")
    # A looser threshold merges the mix too (cosine 0.8 with b); a strict one keeps everything.
    assert [c.item.id for c in deduplicate(four(), vectors, 0.75, [])] == ["a", "b"]
    assert len(deduplicate(four(), vectors, 1.0, [])) == 4


def test_close_vectors_with_different_words_are_not_duplicates():
    # Two chunks of one article under an embedder whose cosines run high (e5: 0.952 here).
    vectors = np.array([[1.0, 0.0], [0.952, 0.306]], dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    first = item("c0", "fish", text="The fish lives 300 to 610 metres deep and has a large black spot.", start=0, end=65)
    second = item("c1", "fish", text="It spawns from February to April and is caught in great numbers.", start=60, end=125)
    decisions: list[Decision] = []
    assert [c.item.id for c in deduplicate(candidates(first, second), vectors, 0.95, decisions)] == ["c0", "c1"]
    assert decisions == []


def test_a_longer_passage_holding_a_kept_shorter_one_is_not_its_duplicate():
    # The lead chunk of an article ranks under a short later chunk whose words it mostly holds:
    # it adds the words the short one lacks (the answer), so both stay; a copy of the short one goes.
    vectors = np.array([[1.0, 0.0], [0.967, 0.255], [0.99, 0.141]], dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    short = item("c2", "plaza", text="In 1986 the bank built a new tower on the site, finished in 1988.")
    lead = item("c0", "plaza", text="The plaza, formerly Norwest Center, stands in Minneapolis. In 1986 the bank "
                                    "built a new tower on the site, finished in 1988, after a fire.")
    copy = item("c9", "mirror", text="In 1986 the bank built a new tower on the site; finished 1988.")
    decisions: list[Decision] = []
    kept = deduplicate(candidates(short, lead, copy), vectors, 0.95, decisions)
    assert [c.item.id for c in kept] == ["c2", "c0"]
    assert [(d.target, d.action) for d in decisions] == [("c9", "dropped")]


def test_statements_one_word_and_one_number_apart_are_not_duplicates():
    # Two templated statements: a cosine of 0.969 and 8 of 10 words shared, and different facts.
    vectors = np.array([[1.0, 0.0], [0.969, 0.247], [0.99, 0.141]], dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    classmates = item("n1", "note-1", text="记一下：高中同学明年三月的年会的人数是6人。")
    family = item("n2", "note-2", text="记一下：家族明年三月的年会的人数是56人。")
    resent = item("n3", "note-3", text="记一下：高中同学明年三月的年会人数是6人！")
    decisions: list[Decision] = []
    kept = deduplicate(candidates(classmates, family, resent), vectors, 0.95, decisions)
    assert [c.item.id for c in kept] == ["n1", "n2"]
    assert [(d.target, d.action) for d in decisions] == [("n3", "dropped")]
    # The switch off: the number does not count, and the family's statement goes as well.
    assert [c.item.id for c in deduplicate(candidates(classmates, family, resent), vectors, 0.95, [],
                                           new_numbers_distinct=False)] == ["n1"]
    assert new_numbers("Caroline went to the support group on 8 May 2023.",
                       by="Caroline went to the support group on 7 May 2023.") == {"8"}


def test_a_statement_holding_a_question_term_the_kept_one_lacks_is_not_its_duplicate():
    # Two events one time apart, the same number: cosine 0.963 and 5 of 6 words shared. Asked about
    # 上个月, the statement that says 上个月 answers it and the better-ranked one does not.
    vectors = np.array([[1.0, 0.0], [0.963, 0.27]], dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    later = item("t1", "chat/3", text="刚想起来，高中同学明年三月的运动会的人数是27人。")
    asked = item("n1", "note-1", text="高中同学上个月的运动会的人数是27人。")
    terms = keyword_set("高中同学上个月的运动会的人数是多少？")
    decisions: list[Decision] = []
    kept = deduplicate(candidates(later, asked), vectors, 0.95, decisions, question_terms=terms)
    assert [c.item.id for c in kept] == ["t1", "n1"] and decisions == []
    # Asked about neither time (or with the rule off), it is a near-duplicate as before.
    assert [c.item.id for c in deduplicate(candidates(later, asked), vectors, 0.95, [],
                                           question_terms=keyword_set("高中同学运动会的人数是多少？"))] == ["t1"]
    assert [c.item.id for c in deduplicate(candidates(later, asked), vectors, 0.95, [])] == ["t1"]
    # The words share is the config's: at 0.9 five of six words are too few.
    assert len(deduplicate(candidates(later, asked), vectors, 0.95, [], words_shared=0.9)) == 2


def test_turns_one_word_apart_are_two_facts_where_the_turn_share_is_whole():
    # A user tells the same kind of outing twice in the same words but one: cosine 0.970, 4 of 5 words
    # shared. As turns they are two concerts; a resent turn adding no word is still a duplicate, and
    # two chunks of a document keep the documents' share.
    vectors = np.array([[1.0, 0.0], [0.970, 0.243], [0.999, 0.0447]], dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)

    def three(kind: str) -> list:
        return candidates(item("d17", f"chat/{kind}/17", kind=kind, text="这周末终于听到了张学友的现场。"),
                          item("d13", f"chat/{kind}/13", kind=kind, text="这周末终于听到了林俊杰的现场。"),
                          item("d18", f"chat/{kind}/18", kind=kind, text="这周末终于听到了张学友的现场！"))

    decisions: list[Decision] = []
    kept = deduplicate(three("turn"), vectors, 0.95, decisions, turn_words_shared=1.0)
    assert [c.item.id for c in kept] == ["d17", "d13"]
    assert [(d.target, d.action) for d in decisions] == [("d18", "dropped")]
    assert [c.item.id for c in deduplicate(three("chunk"), vectors, 0.95, [], turn_words_shared=1.0)] == ["d17"]
    assert [c.item.id for c in deduplicate(three("turn"), vectors, 0.95, [])] == ["d17"]


def test_dropped_candidate_does_not_shadow_later_ones():
    # b is dropped as a copy of a; c, identical to b by vector but not to a, must be compared with kept rows only.
    vectors = np.array([[1.0, 0.0], [0.96, 0.28], [0.8, 0.6]], dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    kept = deduplicate(candidates(item("a", text="same words here"), item("b", text="same words here"),
                                  item("c", text="same words here")), vectors, 0.95, [])
    assert [c.item.id for c in kept] == ["a", "c"]
