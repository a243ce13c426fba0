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


def _assemble(passages, budget=900, recent=()):
    candidates = [Candidate(item=item, final=1.0 - i / 10) for i, item in enumerate(passages)]
    return Assembler(COUNTER, RetrievalConfig()).assemble(
        "When did Miso go to the vet?", budget, facts=[], summaries=[], passages=candidates, recent=list(recent),
        entities=["Miso"])


def test_a_session_spanning_days_has_a_heading_for_each_day():
    ranked = [turn("s/2", "s", 2, "Miso got sick and went to the vet.", "2026-06-20T09:00:00Z"),
              turn("s/0", "s", 0, "I adopted a cat named Miso.", "2026-01-05T09:00:00Z"),
              turn("s/3", "s", 3, "Miso turned one year old today.", "2026-11-30T09:00:00Z"),
              turn("s/1", "s", 1, "Congrats on adopting Miso!", "2026-01-05T09:00:05Z"),
              turn("s/4", "s", 4, "Miso met the neighbour's dog.", "2027-02-01T09:00:00Z")]
    result = _assemble(ranked)
    lines = result.prompt.splitlines()
    # Each turn under its own day; the session's name repeats, the year is written where it changes.
    assert heading_above(lines, "[S:s/0]") == heading_above(lines, "[S:s/1]") == "### s, 5 Jan 2026"
    assert heading_above(lines, "[S:s/2]") == "### s, 20 Jun"
    assert heading_above(lines, "[S:s/3]") == "### s, 30 Nov"
    assert heading_above(lines, "[S:s/4]") == "### s, 1 Feb 2027"
    assert [line for line in lines if line.startswith("### ")] == [
        "### s, 5 Jan 2026", "### s, 20 Jun", "### s, 30 Nov", "### s, 1 Feb 2027"]
    said = [next(i for i, x in enumerate(lines) if f"[S:s/{n}]" in x) for n in range(5)]
    assert said == sorted(said)  # still one session, in the order it was said
    # Every heading was paid for when its first turn was packed: nothing trimmed after the final count.
    assert COUNTER.count(result.prompt) == result.total_tokens <= 900
    assert not [d for d in result.assembly_drops if d.reason == "trimmed after final count"]


def test_a_turn_stamped_out_of_order_joins_its_own_day_and_undated_turns_keep_a_bare_heading():
    ranked = [turn("s/0", "s", 0, "Miso came home.", "2026-01-05T09:00:00Z"),
              turn("s/1", "s", 1, "Miso went to the vet.", "2026-06-20T09:00:00Z"),
              turn("s/2", "s", 2, "Miso slept all day.", "2026-01-05T18:00:00Z"),  # back-dated: 5 Jan again
              turn("u/0", "u", 0, "No day is known for this one.", ""),
              turn("u/1", "u", 1, "Nor for this one.", "")]
    lines = _assemble(ranked).prompt.splitlines()
    assert [line for line in lines if line.startswith("### ")] == ["### s, 5 Jan 2026", "### s, 20 Jun", "### u"]
    assert heading_above(lines, "[S:s/2]") == "### s, 5 Jan 2026"
    assert heading_above(lines, "[S:u/0]") == heading_above(lines, "[S:u/1]") == "### u"


def test_headings_of_a_session_spanning_days_are_counted_under_tight_budgets():
    days = ["2026-01-05", "2026-02-09", "2026-03-14", "2026-04-18", "2026-05-22", "2026-06-26"]
    ranked = [turn(f"s/{n}", "a-long-session-name", n, f"Miso visit number {n} to the vet went well.",
                   f"{day}T09:00:00Z") for n, day in enumerate(days)]
    recent = [turn(f"r/{n}", "recent-session", n, f"Miso ate breakfast {n}.", f"{day}T08:00:00Z")
              for n, day in enumerate(days[:3])]
    for budget in (90, 120, 160, 220, 400):
        result = _assemble(ranked, budget, recent)
        assert COUNTER.count(result.prompt) == result.total_tokens <= budget
        assert not [d for d in result.assembly_drops if d.reason == "trimmed after final count"], budget
        lines = result.prompt.splitlines()
        placed = [p.source_id for p in result.passages if p.section == "passages"]
        assert len(placed) >= 2 or budget < 160, (budget, placed)  # several days' headings were paid for
        for source_id in [p.source_id for p in result.passages]:  # whatever fitted sits under its own day
            month = ["Jan", "Feb", "Mar", "Apr", "May", "Jun"][int(source_id.split("/")[1])]
            assert heading_above(lines, f"[S:{source_id}]").split(", ")[1].split()[1] == month, source_id


def test_a_single_day_session_keeps_one_heading():
    ranked = [turn(f"d/{n}", "conv-26:S3", n, f"Line {n} about Miso.", f"{n + 1}:00 pm on 8 May, 2023")
              for n in range(4)]
    lines = _assemble(ranked).prompt.splitlines()
    assert [line for line in lines if line.startswith("### ")] == ["### conv-26:S3, 8 May 2023"]
