"""Packing for spread evidence (agent_memory/retrieval/spread.py) and the second hop's bridge names (agent_memory/retrieval/hop.py)."""

from __future__ import annotations

from agent_memory.core.records import MemoryItem
from agent_memory.core.text import has_cjk, keyword_set
from agent_memory.retrieval.config import load_preset
from agent_memory.retrieval.hop import bridge_names
from agent_memory.retrieval.spread import is_aggregation, spread_sessions
from agent_memory.retrieval.types import Candidate


def turn(turn_id: str, session: str, score: float) -> Candidate:
    item = MemoryItem(id=turn_id, tenant="t", source_id=turn_id, kind="turn", text=f"text of {turn_id}",
                      metadata={"session_id": session})
    return Candidate(item=item, final=score)


def test_aggregation_questions_are_told_from_single_fact_ones():
    for question in ("What activities does Melanie partake in?", "How many hikes has Joanna been on?",
                     "What books has John read?", "Where has Maria made friends?",
                     "Did Jon and Gina both participate in dance competitions?", "What has Melanie painted?",
                     "小林去过哪些城市？", "我一共去过几场演唱会？", "我一共读完了几本书？", "我都看过谁的现场？",
                     "我最近下厨都做了些什么？", "这几个月我都在看什么书？", "他去了多少次？"):
        assert is_aggregation(question), question
    for question in ("When did Caroline go to the LGBTQ support group?", "What is Caroline's identity?",
                     "What Console does Nate own?", "高中同学们今年劳动节那次吃饭一共去了几个人？",
                     "Who was the first president of the association?", "How much did the repair cost?",
                     "我现在在练什么运动？", "我搬到宁波之前住在哪里？", "高顿养的那只猫名字是什么？", "今晚做点什么菜好？"):
        assert not is_aggregation(question), question


def test_spread_puts_other_sessions_between_one_sessions_turns():
    ranked = [turn("a1", "A", 5.0), turn("a2", "A", 4.8), turn("a3", "A", 4.6), turn("b1", "B", 4.4),
              turn("c1", "C", 3.0)]
    out = [c.item.id for c in spread_sessions("What activities does Melanie partake in?", ranked, 0.5)]
    # a2 packs at 4.3, a3 at 3.6: b1 (4.4) moves ahead of both; c1 (3.0) stays behind; A keeps its order.
    assert out == ["a1", "b1", "a2", "a3", "c1"]
    # A single-fact question, or no penalty, keeps the ranking as it is (the same list).
    assert spread_sessions("When did Melanie paint a sunset?", ranked, 0.5) is ranked
    assert spread_sessions("What activities does Melanie partake in?", ranked, 0.0) is ranked


def test_spread_is_off_in_the_served_default_until_measured():
    assert load_preset().aggregation_spread >= 0
    assert load_preset(overrides={"aggregation_spread": 1.0}).aggregation_spread == 1.0


def test_bridge_names_are_the_names_the_question_does_not_hold():
    question = "Who was the first president of the association which published Journal of Psychotherapy Integration?"
    text = ("Journal of Psychotherapy Integration is a quarterly peer-reviewed academic journal published by the "
            "American Psychological Association on behalf of the Society for the Exploration of Psychotherapy "
            "Integration. It was established in 1991.")
    names = bridge_names(text, question, keyword_set(question), "Journal of Psychotherapy Integration", 2)
    # The association is named in the sentence that shares the question's words ("published"), so it leads;
    # the journal itself (the question names it) and overlapping shorter spans are not bridges.
    assert names[0] == "American Psychological Association"
    assert all("Journal of Psychotherapy Integration" != n and n not in question for n in names)
    assert len(names) <= 2
    assert bridge_names("nothing capitalized here.", question, keyword_set(question), "", 2) == []


def test_a_stretch_of_a_sentence_is_no_bridge_and_does_not_hide_the_names_in_it():
    """MuSiQue: "the state where Pocahontas Mounds is located" needs Mississippi. The span "Plaquemine
    Mississippian culture in Hinds" (capitals at both ends) was the longest and hid "Hinds County";
    "Pocahontas Mounds (22 HI 500" (an open parenthesis), the site code and the Cherokee gloss were
    followed instead."""
    question = "When did the state where Pocahontas Mounds is located become part of the United States?"
    text = ("Pocahontas Mounds (22 HI 500) is an archaeological site from the Plaquemine Mississippian culture in "
            "Hinds County, Mississippi, located near Pocahontas. Tennessee (Cherokee: ᏔᎾᏏ, Tanasi) borders it.")
    names = bridge_names(text, question, keyword_set(question), "Pocahontas Mounds", 10)
    assert "Hinds County" in names and "Mississippi" in names
    assert not any(n.startswith(("Plaquemine Mississippian culture", "Pocahontas Mounds (")) for n in names)
    assert not {"22 HI 500", "22 HI", "HI 500", "ᏔᎾᏏ"} & set(names)
    assert names[:3] == ["Plaquemine Mississippian", "Hinds County", "Mississippi"]
    # Names with joiners stay whole: "Bank of England", "Ludwig van Beethoven".
    assert bridge_names("The Bank of England paid Ludwig van Beethoven.", "Who was paid?", frozenset({"paid"}),
                        "", 5) == ["Bank of England", "Ludwig van Beethoven"]


def test_bridge_names_match_the_pairwise_definition():
    """Longest first, a span inside a kept one is never segmented; the result is the plain rule's:
    every span that passes the tests, less those inside another that passes (a longer span the tests
    drop, such as one the question holds, leaves its parts in)."""
    from agent_memory.retrieval.hop import _SENTENCE_BREAK, STOPWORDS, _a_name, mentioned_names, naming_sentence_overlap

    def pairwise(text: str, question: str, asked: frozenset[str], own: str, limit: int) -> list[str]:
        names = [n for n in mentioned_names(text)
                 if keyword_set(n) and not keyword_set(n) <= asked and f" {n.lower()} " not in f" {own.lower()} "
                 and n.lower() not in question.lower() and not _SENTENCE_BREAK.search(n) and not n.isdigit()
                 and n.split()[0].lower() not in STOPWORDS and _a_name(n)]
        def part_of(n: str, m: str) -> bool:  # whole words; Chinese by characters
            return n in m if has_cjk(n) else f" {n} " in f" {m} "

        longest = [n for n in names if not any(n != m and part_of(n, m) for m in names)]
        relevant = {n: naming_sentence_overlap(text, n, asked, own) > 0 for n in longest}
        return [longest[i] for i in sorted(range(len(longest)), key=lambda i: (not relevant[longest[i]], i))][:limit]

    texts = [("The Beatles Anthology was released by Apple Corps in London. Apple Corps Ltd was founded by "
              "The Beatles in 1968 at Savile Row.", "Beatles Anthology"),
             ("星海科技的总部设在杭州。星海科技由张伟创立，张伟曾在阿里巴巴集团工作。", "星海科技"),
             ("Bad\x00Name Corp met Name Corp in New York City. New York hosted it.", "")]
    questions = ["Who founded the company that released The Beatles Anthology?", "张伟创立的公司总部在哪里？",
                 "Where did Name Corp meet Apple?"]
    for text, own in texts:
        for question in questions:
            for limit in (2, 100):
                expected = pairwise(text, question, keyword_set(question), own, limit)
                assert bridge_names(text, question, keyword_set(question), own, limit) == expected


def test_sentence_packing_keeps_the_best_whole_and_packs_the_tail_as_sentences():
    from agent_memory.core.tokens import TiktokenCounter
    from agent_memory.retrieval.assemble import Assembler

    counter = TiktokenCounter("cl100k_base")
    filler = " ".join(f"We talked about the {w} weather and the long drive home." for w in
                      ["cold", "warm", "grey", "wet", "windy", "calm", "odd", "mild"])

    def long_turn(n: int) -> Candidate:
        text = f"{filler} Melanie went camping with the kids in trip {n}. {filler}"
        item = MemoryItem(id=f"t{n}", tenant="t", source_id=f"s/{n}", kind="turn", text=text,
                          metadata={"speaker": "Melanie", "session_id": f"s{n}"})
        return Candidate(item=item, final=10.0 - n)

    passages = [long_turn(n) for n in range(12)]  # more sessions than whole passages can hold
    question = "Where did Melanie go camping with the kids?"
    whole = Assembler(counter, load_preset()).assemble(question, 600, facts=[], summaries=[], passages=passages,
                                                       recent=[], entities=["Melanie"])
    packed = Assembler(counter, load_preset(overrides={"sentence_pack_tokens": 40, "sentence_pack_after": 1})
                       ).assemble(question, 600, facts=[], summaries=[], passages=passages, recent=[],
                                  entities=["Melanie"])
    by_id = {p.source_id: p for p in packed.passages}
    assert not by_id["s/0"].compressed  # the best passage is offered whole
    tail = [p for p in packed.passages if p.source_id != "s/0"]
    assert tail and all(p.compressed and "went camping with the kids" in p.text for p in tail)
    assert len(packed.passages) > len(whole.passages)  # more sessions' evidence in the same budget
    assert counter.count(packed.prompt) <= 600


def test_a_hop_hit_can_be_kept_below_the_passage_that_led_to_it():
    from agent_memory.retrieval.hop import _below_their_anchors

    anchor, hit, other = turn("note-a", "s1", 2.0), turn("note-b", "s2", 2.5), turn("note-c", "s3", 1.0)
    hit.route_scores["hop"] = 0.5  # 1.5 of its 2.5 came from the hop (signal 3)
    out = _below_their_anchors([hit, anchor, other], {"note-b": "note-a"}, 3.0)
    assert [c.item.id for c in out] == ["note-a", "note-b", "note-c"]
    assert anchor.final > hit.final > other.final
    # A hit that was above its anchor on its own keeps its place.
    strong = turn("note-d", "s4", 2.5)
    strong.route_scores["hop"] = 0.1
    out = _below_their_anchors([strong, anchor], {"note-d": "note-a"}, 3.0)
    assert [c.item.id for c in out] == ["note-d", "note-a"] and strong.final == 2.2


def test_a_chinese_span_with_a_character_the_question_lacks_adds_without_segmenting():
    from agent_memory.core.text import STOPWORDS, all_cjk
    from agent_memory.retrieval.hop import _adds

    assert all_cjk("星海科技") and not all_cjk("星海 科技") and not all_cjk("Alibaba集团") and not all_cjk("")
    question = "张伟创立的公司总部在哪里？"
    asked = keyword_set(question)
    known = frozenset("".join(asked)) | frozenset("".join(STOPWORDS))
    for span in ("星海科技", "张伟", "总部", "张伟创立", "的", "阿里巴巴集团", "杭州"):
        terms = keyword_set(span)
        assert _adds(span, asked, known) == (bool(terms) and not terms <= asked), span


def test_what_is_left_to_find_reads_the_stored_terms_as_the_text():
    from agent_memory.core.text import joined_terms
    from agent_memory.retrieval.hop import unanswered

    question = "Who was the first president of the association which published the journal?"
    for text in ("The journal is published by the American Psychological Association.", "星海科技的总部设在杭州。", ""):
        assert unanswered(question, text, joined_terms(text)) == unanswered(question, text)
    assert unanswered(question, "The journal is published by the association.") == "first president"


def _page(title: str, kind: str = "chunk") -> Candidate:
    return Candidate(item=MemoryItem(id=title, tenant="t", source_id=title, kind=kind, text=f"About {title}.",
                                     metadata={"title": title}))


def test_the_pages_a_comparison_names_are_lifted_and_nothing_else():
    from agent_memory.retrieval.rerank.signals import title_in_question

    question = "Which movie did Disney produce first, The Many Adventures of Winnie the Pooh or Ride a Wild Pony?"
    pages = [_page("Winnie the Pooh (song)"), _page("The Many Adventures of Winnie the Pooh"), _page("Ride"),
             _page("Ride a Wild Pony"), _page("The Wild Pony"), _page("Ride a Wild Pony", kind="turn")]
    # Both named pages; not a title written inside a longer one ("Winnie the Pooh", "Ride"), not a turn.
    assert title_in_question(question, pages).tolist() == [0, 1, 0, 1, 0, 0]
    # The qualifier does not count; the case of the title does not matter where the question writes a capital.
    assert title_in_question("Which was first, Astro Boy or The Secret of Kells?",
                             [_page("Astro Boy (film)"), _page("The secret of Kells")]).tolist() == [1, 1]
    # One named page: the question starts from it; nothing is lifted.
    assert not title_in_question("Who is the spouse of Gem Bolger?", [_page("Gem Bolger")]).any()
    # A lower-case mention is a word, not a name; a Chinese title has no capital to say so.
    assert not title_in_question("Are ride and Wild Pony both films?", [_page("Ride"), _page("Wild Pony")]).any()
    assert not title_in_question("范廷颂和游戏哪个更早？", [_page("范廷颂"), _page("游戏")]).any()


def test_collections_and_what_came_before_read_turns_one_word_apart_as_distinct():
    from agent_memory.retrieval.dedup import asks_for_other_wordings

    for question in ("我都看过谁的现场？", "How many hikes has Joanna been on?", "我搬到宁波之前住在哪里？",
                     "Who was my manager before Fazle Newcombe?"):
        assert asks_for_other_wordings(question), question
    for question in ("我现在在练什么运动？", "Who do I report to these days?", "高顿养的那只猫名字是什么？"):
        assert not asks_for_other_wordings(question), question
