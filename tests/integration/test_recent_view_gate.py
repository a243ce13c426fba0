"""The session-aware prompt's recent section is relevance-gated (agent_memory/retrieval/recent.py), on the real stores."""

from __future__ import annotations

import re

from agent_memory.conversation.working_memory import WorkingMemory
from agent_memory.ingest.pipeline import IngestionPipeline
from agent_memory.retrieval.pipeline import RetrievalPipeline

THREAD = [("user", "Our order ships with Falkenrath Logistics from the Lyon depot."),
          ("assistant", "Great, noted."),
          ("user", "The weather in Oslo was rainy all week."),
          ("assistant", "Sounds gloomy."),
          ("user", "Let us plan the Q3 budget next.")]


def recent_section(prompt: str) -> str:
    match = re.search(r"## Recent conversation\n(.*?)(?:\n## |\Z)", prompt, re.S)
    return match.group(1) if match else ""


def test_an_unrelated_recent_turn_is_left_out_while_the_newest_and_an_answering_one_are_placed(services):
    memory = WorkingMemory(services)  # nothing archived: the view's turns are only in the session
    try:
        session = memory.session("acme", "chat-1")
        for role, content in THREAD:
            session.append({"role": role, "content": content})
        served = RetrievalPipeline.from_services(services, recent_turns=memory.recent_turns,
                                                 session_summaries=memory.summaries)
        result = served.run("Which courier ships our order?", tenant="acme", session_id="chat-1", budget=600)
        assert "[S:chat-1/m0]" in recent_section(result.prompt)  # the served default: what the question reaches
        assert "[S:chat-1/m4]" not in result.prompt  # the newest turn too only when the question reaches it
        served.close()
        pipeline = RetrievalPipeline.from_services(services, "default", {"recent_view": {"always": 1}},
                                                   recent_turns=memory.recent_turns,
                                                   session_summaries=memory.summaries)
        result = pipeline.run("Which courier ships our order?", tenant="acme", session_id="chat-1", budget=600)
        recent = recent_section(result.prompt)
        assert "[S:chat-1/m4]" in recent  # always 1: the newest turn, whatever the question
        assert "[S:chat-1/m0]" in recent  # an older turn holding the question's words
        for unrelated in ("chat-1/m1", "chat-1/m2", "chat-1/m3"):
            assert f"[S:{unrelated}]" not in result.prompt
        # Without the gate's older turns (always the newest only, no term match), the answer is gone.
        strict = RetrievalPipeline.from_services(services, "default", {"recent_view": {"always": 1, "min_terms": 1.0}},
                                                 recent_turns=memory.recent_turns, session_summaries=memory.summaries)
        assert "[S:chat-1/m0]" not in strict.run("Which courier ships our order?", tenant="acme",
                                                 session_id="chat-1", budget=600).prompt
        strict.close()
        pipeline.close()
    finally:
        memory.close()


def test_an_older_recent_turn_that_recall_ranks_is_placed_once_in_the_thread(services):
    memory = WorkingMemory(services, promote=IngestionPipeline(services, summaries=False).ingest_turns)
    try:
        session = memory.session("acme", "chat-1")
        for role, content in THREAD:
            session.append({"role": role, "content": content})
        # Archived before the question, as Memory's reads wait for it: the archive passes run on a thread, and a
        # question asked while one was still running found fewer archived copies to rank (seen once, in a fresh clone).
        assert memory.settle()
        question = "Which logistics company handles the delivery?"
        # The served default: recall found the older turns, so they compete as passages; the answering one
        # ranks and is placed once (as its archived copy); the unrelated newest turn is not placed.
        served = RetrievalPipeline.from_services(services, recent_turns=memory.recent_turns,
                                                 session_summaries=memory.summaries)
        result = served.run(question, tenant="acme", session_id="chat-1", budget=600)
        assert result.prompt.count("[S:chat-1/m0]") == 1 and "[S:chat-1/m0]" not in recent_section(result.prompt)
        # The unrelated newest turn is not in the view (here, in a tiny store, recall still places it once).
        assert "[S:chat-1/m4]" not in recent_section(result.prompt) and result.prompt.count("[S:chat-1/m4]") <= 1
        served.close()
        # Shown in the view instead, in thread order, when it ranks among the best budget / rank_tokens.
        # No question word is in the answering turn: only recall (its archived copy ranked) can reach it.
        pipeline = RetrievalPipeline.from_services(services, "default",
                                                   {"recent_view": {"always": 1, "min_terms": 1.0, "rank_tokens": 300}},
                                                   recent_turns=memory.recent_turns, session_summaries=memory.summaries)
        result = pipeline.run(question, tenant="acme", session_id="chat-1", budget=600, debug=True)
        ranked = [row["source_id"] for row in result.fused][:2]
        assert "chat-1/m0" in ranked
        recent = recent_section(result.prompt)
        assert "[S:chat-1/m0]" in recent and "[S:chat-1/m4]" in recent
        assert result.prompt.count("[S:chat-1/m0]") == 1  # never also as its archived copy
        assert "[S:chat-1/m2]" not in recent  # the weather turn is not ranked within budget / 300 = 2
        pipeline.close()
    finally:
        memory.close()
