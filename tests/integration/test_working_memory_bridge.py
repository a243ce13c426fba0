"""Working memory joined to long-term memory and retrieval, on the real stores."""

from __future__ import annotations

from agent_memory.conversation.working_memory import WorkingMemory
from agent_memory.core.records import SearchFilter
from agent_memory.ingest.pipeline import IngestionPipeline
from agent_memory.retrieval.pipeline import RetrievalPipeline


def test_every_turn_is_archived_and_recalled_with_its_session_source(services):
    memory = WorkingMemory(services, promote=IngestionPipeline(services, summaries=False).ingest_turns)
    try:
        session = memory.session("acme", "chat-1")
        session.append({"role": "system", "content": "You are a helpful assistant."}, retention="strict")
        session.append({"role": "user", "content": "I prefer the X-300 sensor; we decided to order 40 units."},
                       retention="strict")
        session.append({"role": "assistant", "content": "Noted."}, retention="fuzzy")
        memory.flush()  # the passes run on a worker thread
        assert memory.promoted == 2  # significance is no gate: "Noted." is archived too (the system message not)
        stored = {i.source_id: i for i in services.vectors.scroll(SearchFilter(tenant="acme", kinds=["turn"]))}
        assert sorted(stored) == ["chat-1/m1", "chat-1/m2"] and "X-300" in stored["chat-1/m1"].text
        # Significance is an importance signal with its reasons recorded.
        assert stored["chat-1/m1"].metadata["significant"] and stored["chat-1/m1"].metadata["reasons"]
        assert not stored["chat-1/m2"].metadata["significant"]
        assert stored["chat-1/m1"].metadata["importance"] > stored["chat-1/m2"].metadata["importance"]
        # A promoted turn keeps its place in the session: the message's seq, when it was said, the turn before.
        session.append({"role": "assistant", "content": "Which courier should ship the 40 units?"})
        session.append({"role": "user", "content": "We decided on Falkenrath Logistics for the shipping."})
        memory.flush()
        entry = services.catalog.get("acme", "chat-1/m4")
        assert entry is not None and entry.session_id == "chat-1" and entry.seq == 4 and entry.timestamp
        promoted = next(i for i in services.vectors.scroll(SearchFilter(tenant="acme", kinds=["turn"]))
                        if i.source_id == "chat-1/m4")
        assert promoted.metadata["seq"] == 4
        # The turn it answers is stored at seq 3: read from there, as for an ingested transcript.
        assert "previous_turn" not in promoted.metadata and services.catalog.get("acme", "chat-1/m3") is not None
        from agent_memory.index.context import context_text, previous_turns

        assert context_text(promoted, previous_turns(services, "acme", [promoted]).get(promoted.id),
                            services.settings.turn_context_previous_max_words).startswith(
            "assistant: Which courier should ship the 40 units?\n")
        # Another tenant's working memory and promoted turns stay out of reach.
        assert not list(services.vectors.scroll(SearchFilter(tenant="default", kinds=["turn"])))

        pipeline = RetrievalPipeline.from_services(services, recent_turns=memory.recent_turns,
                                                   session_summaries=memory.summaries)
        result = pipeline.run("How many sensors did we order?", tenant="acme", session_id="chat-1", budget=600,
                              debug=True)
        assert "[S:chat-1/m1]" in result.prompt
        assert [row["source_id"] for row in result.routes["recent"]][:2] == ["chat-1/m1", "chat-1/m2"]
        # A question in another session of the same tenant still recalls the promoted turn.
        other = pipeline.run("Which sensor model did the user prefer?", tenant="acme", session_id="chat-2",
                             budget=600)
        assert "[S:chat-1/m1]" in other.prompt
        pipeline.close()
    finally:
        memory.close()


def test_compaction_summaries_feed_the_summaries_route(services):
    memory = WorkingMemory(services)
    try:
        session = memory.session("default", "long")
        session.append({"role": "system", "content": "Be brief."}, retention="strict")
        for i in range(30):
            session.append({"role": "user", "content": f"Step {i}: measured {i * 7} litres at pump P-{i}."},
                           retention="fuzzy")
            session.append({"role": "assistant", "content": f"Logged step {i}."}, retention="forgettable")
        session.compact(force=True)
        summaries = memory.summaries("default", "long")
        assert summaries and all(s.kind == "summary" and s.source_id == "long#compacted" for s in summaries)
        pipeline = RetrievalPipeline.from_services(services, recent_turns=memory.recent_turns,
                                                   session_summaries=memory.summaries)
        result = pipeline.run("What was measured at the pumps?", tenant="default", session_id="long", budget=800,
                              debug=True)
        assert "long#compacted" in {row["source_id"] for row in result.routes["summaries"]}
        pipeline.close()
    finally:
        memory.close()
