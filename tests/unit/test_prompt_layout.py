"""The prompt's layout: documents under their own heading, conversation turns grouped by session
under a heading that names the session and its day; passages stay parseable by the metric."""

from __future__ import annotations

from agent_memory.core.records import MemoryItem
from agent_memory.core.tokens import TiktokenCounter
from agent_memory.evaluation.metric import parse_citations
from agent_memory.retrieval.assemble import DOCUMENTS_HEADING, Assembler
from agent_memory.retrieval.config import RetrievalConfig
from agent_memory.retrieval.types import Candidate

COUNTER = TiktokenCounter("cl100k_base")


def turn(source_id: str, session: str, seq: int, text: str, stamp: str = "1:56 pm on 3 Dec, 2026") -> MemoryItem:
    return MemoryItem(id=source_id, tenant="default", source_id=source_id, kind="turn", text=text,
                      metadata={"session_id": session, "seq": seq, "speaker": "Ana", "timestamp": stamp})


def chunk(source_id: str, index: int, text: str) -> MemoryItem:
    return MemoryItem(id=f"{source_id}#{index}", tenant="default", source_id=source_id, kind="chunk", text=text,
                      chunk_index=index)


def heading_above(lines: list[str], needle: str) -> str:
    index = next(i for i, line in enumerate(lines) if needle in line)
    return next(line for line in reversed(lines[:index]) if line.startswith("#"))


def test_documents_and_sessions_each_under_their_own_heading():
    ranked = [turn("chat/1", "morning", 1, "Ana booked the Kestrel room for Friday."),
              chunk("notes/rooms.md", 0, "The Kestrel room seats twelve people."),
              turn("chat/9", "evening", 1, "Ana moved the Kestrel booking to Monday."),
              turn("chat/2", "morning", 2, "Ana invited the platform team."),
              chunk("handbook.md", 3, "Rooms are booked through the front desk."),
              turn("chat/20", "next-year", 1, "Ana booked the Kestrel room again.", "9:00 am on 4 Jan, 2027"),
              turn("chat/0", "morning", 0, "Ana asked which rooms were free on Friday.")]  # ranked last, said first
    candidates = [Candidate(item=item, fused=1.0 - i / 10, final=1.0 - i / 10) for i, item in enumerate(ranked)]
    result = Assembler(COUNTER, RetrievalConfig()).assemble(
        "Where is the Kestrel booking?", 900, facts=[], summaries=[], passages=candidates, recent=[], entities=[])
    lines = result.prompt.splitlines()
    # Two sessions of one day: each named, each once; the year is written where it changes.
    assert heading_above(lines, "[S:chat/1]") == heading_above(lines, "[S:chat/2]") == "### morning, 3 Dec 2026"
    assert heading_above(lines, "[S:chat/9]") == "### evening, 3 Dec"
    assert heading_above(lines, "[S:chat/20]") == "### next-year, 4 Jan 2027"
    assert sum(line.startswith("### morning") for line in lines) == 1
    # No document chunk sits under a session's heading; the documents' heading is written once.
    assert result.prompt.count(DOCUMENTS_HEADING) == 1
    assert heading_above(lines, "[S:notes/rooms.md]") == DOCUMENTS_HEADING
    assert heading_above(lines, "[S:handbook.md]") == DOCUMENTS_HEADING
    # The block whose best passage ranked first comes first; turns of a session in order.
    assert lines.index("### morning, 3 Dec 2026") < lines.index(DOCUMENTS_HEADING)
    said = [next(i for i, x in enumerate(lines) if f"[S:chat/{n}]" in x) for n in (0, 1, 2)]
    assert said == sorted(said)  # a session's turns in the order they were said, whatever their rank
    # The metric still reads every passage, and the budget holds as counted.
    cited = parse_citations(result.prompt)
    assert {"chat/1", "chat/2", "chat/9", "chat/20", "notes/rooms.md", "handbook.md"} <= set(cited)
    assert "seats twelve" in cited["notes/rooms.md"]
    assert COUNTER.count(result.prompt) == result.total_tokens <= 900


def test_documents_alone_need_no_heading_and_fit_tight_budgets():
    candidates = [Candidate(item=chunk(f"doc-{i}.md", 0, f"Fact number {i} about the Kestrel pump. " * 6),
                            final=1.0 - i / 100) for i in range(30)]
    for budget in (120, 200, 400):
        result = Assembler(COUNTER, RetrievalConfig()).assemble(
            "What about the Kestrel pump?", budget, facts=[], summaries=[], passages=candidates, recent=[],
            entities=["Kestrel"])
        assert COUNTER.count(result.prompt) == result.total_tokens <= budget
        assert result.passages and DOCUMENTS_HEADING not in result.prompt
        # Counted up front: nothing had to be trimmed after the final count.
        assert not [d for d in result.assembly_drops if d.reason == "trimmed after final count"]


def test_the_documents_heading_is_counted_whichever_kind_comes_second():
    for first, second in ((chunk("doc.md", 0, "The Kestrel room seats twelve."), turn("c/1", "s1", 1, "Ana booked it.")),
                          (turn("c/1", "s1", 1, "Ana booked it."), chunk("doc.md", 0, "The Kestrel room seats twelve."))):
        candidates = [Candidate(item=first, final=1.0), Candidate(item=second, final=0.5)]
        result = Assembler(COUNTER, RetrievalConfig()).assemble(
            "Who booked the Kestrel room?", 300, facts=[], summaries=[], passages=candidates, recent=[], entities=[])
        assert result.prompt.count(DOCUMENTS_HEADING) == 1 and COUNTER.count(result.prompt) == result.total_tokens
        assert not [d for d in result.assembly_drops if d.reason == "trimmed after final count"]


def test_a_session_is_named_by_what_its_turns_tags_do_not_say():
    from agent_memory.retrieval.headings import session_label

    assert session_label("locomo-conv-26:S3", "locomo-conv-26/D3:12") == "S3"  # the tag names the conversation
    assert session_label("demo-session", "demo-session/3") == "demo-session"  # the tag holds it whole
    # An agent's session: the tag holds its whole name, the heading its last part (as the transcript's).
    assert session_label("conv-26:S3", "conv-26:S3/m12") == "S3"
    assert session_label("alice/chat:", "alice/chat:/m1") == "alice/chat:"  # nothing after the last separator
    assert session_label("morning", "chat/1") == "morning"  # nothing shared


def test_neighbouring_chunks_join_in_document_order_whatever_their_rank():
    first, second = "The hangar manual opens with the doors.", "The hangar door code is 4471."
    ranked = [chunk("manual", 1, second), chunk("manual", 0, first)]  # the later chunk ranked first
    candidates = [Candidate(item=item, final=1.0 - i / 10) for i, item in enumerate(ranked)]
    result = Assembler(COUNTER, RetrievalConfig()).assemble(
        "What is the hangar door code?", 400, facts=[], summaries=[], passages=candidates, recent=[], entities=[])
    assert f"[S:manual] {first} {second}" in result.prompt.splitlines()
