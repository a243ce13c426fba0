"""Property tests of prompt assembly: whatever comes in, the prompt never exceeds its budget.

Random candidates of every kind (chunks, turns, summaries, facts, recent turns) with mixed
English / Chinese / emoji / whitespace-heavy text, random budgets and both token counters.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from agent_memory.core.errors import BudgetError
from agent_memory.core.records import MemoryItem, Triple
from agent_memory.core.text import split_sentences
from agent_memory.core.tokens import EstimatingCounter, TiktokenCounter
from agent_memory.retrieval.assemble import Assembler
from agent_memory.retrieval.compress import _ENDS_SENTENCE, GAP
from agent_memory.retrieval.config import RetrievalConfig
from agent_memory.retrieval.render import display_text
from agent_memory.retrieval.types import Candidate

COUNTERS = {"cl100k": TiktokenCounter("cl100k_base"), "estimate": EstimatingCounter()}
CONFIG = RetrievalConfig()
SECTION_NAMES = {"instructions", "facts", "summaries", "passages", "recent", "question"}
TAG = re.compile(r"\[S:([^\]]*)\]")

# Pieces of text in several scripts. No "[" (so no input text forges an [S:...] tag) and no
# "…" (the gap marker of compression), so the checks below read the prompt unambiguously.
VOCAB = ["the", "X-300", "sensor", "draws", "9", "mA", "Acme", "founded", "2009", "Lyon", "power", "budget",
         "greenhouse", "Marie", "Dubois", "reports", "every", "second", "temperature", "42", "3.5", "2024-05-01",
         "向量库", "图数据库", "保存", "实体", "关系", "记忆", "系统", "令牌", "预算", "🙂", "🚀", "👩‍💻", "café",
         "naïve", "Ünïcödé", "数据"]
PUNCT = [". ", "! ", "? ", "。", "！", "；", "; ", ", ", "，", " - ", "\n", "\n\n", "\t", "   ", " "]
SAFE_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="[…\x00")

piece = st.one_of(st.sampled_from(VOCAB), st.sampled_from(PUNCT), st.text(SAFE_CHARS, min_size=1, max_size=6))
text = st.lists(piece, min_size=1, max_size=60).map(" ".join)
sentence = st.lists(st.sampled_from(VOCAB), min_size=2, max_size=12).map(" ".join)
# Long passages made of clear sentences: these are the ones that get compressed.
prose = st.lists(st.tuples(sentence, st.sampled_from([". ", "! ", "? ", "。", "\n"])),
                 min_size=2, max_size=25).map(lambda parts: "".join(s + p for s, p in parts))
passage_text = st.one_of(text, prose)

# A small pool makes collisions likely (one source behind a chunk and a turn, repeated IDs).
SOURCE_POOL = ["doc-a", "doc-b", "product-x300", "acme", "notes/中文.txt", "s1/1", "s1/2", "s2/7", "sum#1"]
source_id = st.one_of(st.sampled_from(SOURCE_POOL), st.from_regex(r"[a-z0-9][a-z0-9/_.#-]{0,15}", fullmatch=True))


@st.composite
def memory_item(draw, kind=None):
    kind = kind or draw(st.sampled_from(["chunk", "turn", "summary"]))
    metadata = {}
    if draw(st.booleans()):
        metadata["speaker"] = draw(st.sampled_from(["user", "assistant", "Alice", "助手", "🙂bot"]))
    if draw(st.booleans()):
        metadata["session_id"] = draw(st.sampled_from(["s1", "s2", "会话-3"]))
    if draw(st.booleans()):
        metadata["timestamp"] = draw(st.sampled_from(["2026-11-02 09:14", "2023-05-08", "yesterday"]))
    if draw(st.booleans()):
        metadata["seq"] = draw(st.integers(0, 50))
    if draw(st.booleans()):
        metadata["title"] = draw(st.one_of(st.sampled_from(["X-300 sensor", "Acme Corporation", "笔记"]), text))
    body = draw(passage_text)
    return MemoryItem(id=f"item-{draw(st.uuids())}", tenant="default", source_id=draw(source_id), kind=kind,
                      text=body, chunk_index=draw(st.integers(0, 5)), start=0, end=len(body),
                      content_hash=f"h{draw(st.integers(0, 10**6))}", metadata=metadata)


candidate = st.builds(lambda item, score: Candidate(item=item, fused=score, final=score),
                      memory_item(), st.floats(0, 2, allow_nan=False))
triple = st.builds(lambda s, r, o, sid: Triple(subject=s, relation=r, object=o, source_id=sid),
                   st.sampled_from(VOCAB), st.sampled_from(["founded", "draws", "保存", "based in"]), text, source_id)


def _question_only(counter, question: str, question_date: str | None) -> int:
    """Tokens of the question section alone: the floor below which no prompt can exist."""
    body = question + (f"\n(asked on {question_date})" if question_date else "")
    return counter.count("## Question\n" + body)


def _joined(sentences: list[str]) -> str:
    """Adjacent sentences as compress joins them: a space, or a blank line after a heading or list
    line that ends no sentence (agent_memory/retrieval/compress.py)."""
    out = sentences[0]
    for previous, sentence in zip(sentences, sentences[1:]):
        out += (" " if _ENDS_SENTENCE.search(previous) else "\n\n") + sentence
    return out


def _is_whole_sentences(compressed: str, original: str) -> bool:
    """True when the text is whole sentences of the original, in order, joined by gap markers."""
    sentences = split_sentences(original)
    marker = GAP.strip()
    body = compressed
    if body.startswith(marker + " "):
        body = body[len(marker) + 1:]
    if body.endswith(" " + marker):
        body = body[: -len(marker) - 1]
    position = 0
    for segment in body.split(GAP):
        for start in range(position, len(sentences)):
            end = next((e for e in range(start + 1, len(sentences) + 1)
                        if _joined(sentences[start:e]) == segment), None)
            if end is not None:
                position = end
                break
        else:
            return False
    return True


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    counter_name=st.sampled_from(sorted(COUNTERS)),
    question=text,
    question_date=st.one_of(st.none(), st.just("2026-11-02")),
    budget=st.one_of(st.integers(1, 4000), st.integers(1, 300)),
    facts=st.lists(triple, max_size=8),
    summaries=st.lists(candidate, max_size=4),
    passages=st.lists(candidate, max_size=14),
    recent=st.lists(memory_item(kind="turn"), max_size=6),
    entities=st.lists(st.sampled_from(VOCAB), max_size=3),
)
def test_prompt_never_exceeds_budget(counter_name, question, question_date, budget, facts, summaries, passages,
                                     recent, entities):
    counter = COUNTERS[counter_name]
    floor = _question_only(counter, question, question_date)
    try:
        result = Assembler(counter, CONFIG).assemble(
            question, budget, facts=facts, summaries=summaries, passages=passages, recent=recent,
            entities=entities, question_date=question_date)
    except BudgetError:
        event("BudgetError")
        assert floor > budget, f"BudgetError although the question alone takes {floor} of {budget} tokens"
        return
    assert floor <= budget, f"no BudgetError although the question alone takes {floor} of {budget} tokens"

    # The hard invariant, and the reported figure is the true count.
    assert counter.count(result.prompt) == result.total_tokens <= budget
    assert result.budget == budget and result.tokenizer == counter.name
    assert result.prompt.endswith(question + (f"\n(asked on {question_date})" if question_date else ""))

    # Every citation tag names a real input source (the instructions mention "[S:id]" literally).
    cited = set(TAG.findall(result.prompt.replace(CONFIG.instructions, "")))
    content_ids = {c.item.source_id for c in summaries + passages} | {i.source_id for i in recent}
    assert cited <= content_ids | {t.source_id for t in facts}
    assert set(result.used_source_ids) <= content_ids
    assert len(result.used_source_ids) == len(set(result.used_source_ids))

    originals = {c.item.id: c.item.text for c in summaries + passages} | {i.id: i.text for i in recent}
    for passage in result.passages:
        assert passage.source_id in result.used_source_ids
        assert f"[S:{passage.source_id}]" in result.prompt
        if passage.compressed:
            event("compressed")
            # As shown, which is what is compressed: rare line separators (NEL, U+2028 ...) become
            # newlines (agent_memory/core/citations.py) and heading marks are dropped (a last line "#").
            original = display_text(originals[passage.item_ids[0]])
            assert passage.text and passage.text != original
            assert _is_whole_sentences(passage.text, original), (passage.text, original)
            assert passage.text in result.prompt

    for decision in result.decisions:
        if decision.action == "compressed":
            assert decision.tokens_after < decision.tokens_before

    assert "question" in result.sections and set(result.sections) <= SECTION_NAMES
    # Facts and summaries stay within their upper shares of the budget.
    for name in ("facts", "summaries"):
        assert result.sections.get(name, 0) <= int(budget * getattr(CONFIG.shares, name)), (name, result.sections)
    assert all(0 < tokens <= result.total_tokens for tokens in result.sections.values())
    if "instructions" not in result.sections:
        event("instructions dropped")
        assert any(d.target == "instructions" and d.action == "dropped" for d in result.decisions)


@pytest.mark.parametrize("counter_name", sorted(COUNTERS))
def test_long_passage_is_compressed_to_whole_sentences(counter_name):
    """The deterministic anchor of the property: one long passage, a budget that cannot hold it."""
    counter = COUNTERS[counter_name]
    # Filler without digits or question terms: it scores nothing, so only the answer is kept.
    names = ["north", "south", "east", "west", "blue", "green", "red", "amber", "tall", "short"] * 3
    filler = " ".join(f"Paragraph {name} talks about greenhouse logistics and shipping schedules." for name in names)
    body = f"{filler} The X-300 draws 9 mA of power. {filler}"
    item = MemoryItem(id="long", tenant="default", source_id="product-x300", kind="chunk", text=body)
    result = Assembler(counter, CONFIG).assemble("How much power does the X-300 draw?", 200, facts=[],
                                                 summaries=[], passages=[Candidate(item=item, final=1.0)],
                                                 recent=[], entities=["X-300"])
    assert counter.count(result.prompt) <= 200
    [passage] = result.passages
    assert passage.compressed and "The X-300 draws 9 mA of power." in passage.text
    assert _is_whole_sentences(passage.text, body)
    assert passage.text == "… The X-300 draws 9 mA of power. …"
    [decision] = [d for d in result.decisions if d.action == "compressed"]
    assert decision.target == "product-x300" and decision.tokens_after < decision.tokens_before


def test_question_larger_than_budget_raises():
    counter = COUNTERS["cl100k"]
    question = "What is the power draw of the X-300 sensor made by Acme Corporation in Lyon?"
    floor = _question_only(counter, question, None)
    with pytest.raises(BudgetError, match=str(floor - 1)):
        Assembler(counter, CONFIG).assemble(question, floor - 1, facts=[], summaries=[], passages=[], recent=[],
                                            entities=[])
    # One token more and the question fits, without the instructions.
    result = Assembler(counter, CONFIG).assemble(question, floor, facts=[], summaries=[], passages=[], recent=[],
                                                 entities=[])
    assert result.total_tokens == floor and "instructions" not in result.sections


def _one_of_each_section():
    counter = COUNTERS["cl100k"]
    summary = MemoryItem(id="sum", tenant="default", source_id="s1#summary", kind="summary",
                         text="The team chose the X-300 sensor.")
    chunk = MemoryItem(id="chunk", tenant="default", source_id="product-x300", kind="chunk",
                       text="The X-300 draws 9 mA of power.")
    turn = MemoryItem(id="turn", tenant="default", source_id="s1/3", kind="turn", text="Let's order 40 units.",
                      metadata={"speaker": "user", "session_id": "s1", "seq": 2})
    return counter, Assembler(counter, CONFIG).assemble(
        "Which sensor?", 1000, facts=[], summaries=[Candidate(item=summary, final=1.0)],
        passages=[Candidate(item=chunk, final=1.0)], recent=[turn], entities=[])


def test_each_passage_reports_the_section_it_sits_in():
    _, result = _one_of_each_section()
    assert {p.source_id: p.section for p in result.passages} == {
        "s1#summary": "summaries", "product-x300": "passages", "s1/3": "recent"}


def test_each_passage_reports_its_token_cost():
    counter, result = _one_of_each_section()
    for passage in result.passages:
        line = next(line for line in result.prompt.splitlines() if line.startswith(f"[S:{passage.source_id}]"))
        assert passage.tokens == counter.count(line), passage


def test_recent_turns_stay_within_their_share_including_the_session_header():
    counter = COUNTERS["cl100k"]
    turn = MemoryItem(id="t", tenant="default", source_id="s1/1", kind="turn", text="the",
                      metadata={"session_id": "s1", "timestamp": "2026-11-02 09:14"})
    result = Assembler(counter, CONFIG).assemble("q?", 100, facts=[], summaries=[], passages=[], recent=[turn],
                                                 entities=[])
    assert result.sections.get("recent", 0) <= int(100 * CONFIG.shares.recent), result.sections


def test_a_short_passage_that_fits_whole_is_placed_after_the_room_for_a_compressed_one_is_gone():
    """The last tokens of the budget still hold a note that fits whole; a long passage ranked
    before it, which could only be compressed and no longer can be, does not stop it."""
    counter = COUNTERS["cl100k"]

    def chunk(n, text):
        return Candidate(item=MemoryItem(id=f"c{n}", tenant="default", source_id=f"doc-{n}", kind="chunk",
                                         text=text), final=1.0)

    notes = [chunk(n, f"The {name} greenhouse sensor reports every second.")
             for n, name in enumerate(["north", "south", "east"])]
    short = chunk(9, "Acme was founded in 2009.")
    long = chunk(5, " ".join(["Paragraph about shipping schedules and logistics."] * 60))
    question = "When was Acme founded?"
    # The rendered prompt of all four, plus the few tokens the packer's line estimates run above it.
    budget = Assembler(counter, CONFIG).assemble(question, 10_000, facts=[], summaries=[], passages=notes + [short],
                                                 recent=[], entities=[]).total_tokens + 6
    result = Assembler(counter, CONFIG).assemble(question, budget, facts=[], summaries=[],
                                                 passages=notes + [long, short], recent=[], entities=[])
    placed = [p.source_id for p in result.passages]
    assert placed == ["doc-0", "doc-1", "doc-2", "doc-9"], placed
    assert result.total_tokens <= budget
    assert any(d.target == "doc-5" and d.action == "dropped" for d in result.assembly_drops)
