"""The prompt's assembly: compression of a passage to the sentences that answer, chunks of one document
joined in document order, and which facts earn a place in the facts section."""

from __future__ import annotations

from agent_memory.core.records import MemoryItem
from agent_memory.core.text import split_sentences
from agent_memory.core.tokens import TiktokenCounter
from agent_memory.retrieval.compress import GAP, compress, sentence_units
from agent_memory.retrieval.config import RetrievalConfig
from agent_memory.retrieval.types import Candidate
from tests.retrieval_items import item

COUNTER = TiktokenCounter("cl100k_base")


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


def test_a_cut_that_saves_no_token_is_no_cut():
    """Found by the assembly property test: "…" costs what a dropped two-word sentence did, so the
    "compressed" passage was no shorter than the text (and was reported as compressed)."""
    from agent_memory.core.tokens import EstimatingCounter
    from agent_memory.retrieval.assemble import Assembler

    estimate = EstimatingCounter()
    text = "the the. the the the the the the X-300 X-300 X-300. "
    assert compress(text, "the", 44, estimate) == text  # the best sentence alone costs as much as both
    every = "Luna is a cat. She is grey."
    assert compress(every, "Is Luna a grey cat?", 100, COUNTER) == every  # nothing left out: as it was
    doc = item("doc-a", kind="chunk", text=text)
    result = Assembler(estimate, RetrievalConfig()).assemble("the", 171, facts=[], summaries=[], passages=[Candidate(item=doc)],
                                                             recent=[], entities=[])
    assert not [d for d in result.decisions if d.action == "compressed"]
    assert not any(p.compressed for p in result.passages)


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
