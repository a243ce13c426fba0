"""A follow-up question in a live session is rewritten before recall and finds what it refers to."""

from __future__ import annotations

from agent_memory.conversation.working_memory import WorkingMemory
from agent_memory.core.records import Document
from agent_memory.ingest.pipeline import IngestionPipeline
from agent_memory.retrieval.pipeline import RetrievalPipeline

DOCS = [("couriers/falkenrath", "Falkenrath Logistics is headquartered in Bremen and moves freight by rail."),
        ("couriers/oderbruch", "Oderbruch Freight is headquartered in Frankfurt and moves freight by truck."),
        ("couriers/policy", "Every courier must confirm pickups a day ahead and report damage within a week.")]


def test_a_follow_up_resolves_to_the_entity_of_the_previous_turn(services):
    IngestionPipeline(services, summaries=False).ingest_documents(
        [Document(source_id=sid, text=text, tenant="default") for sid, text in DOCS])
    memory = WorkingMemory(services, promote=False)
    try:
        session = memory.session("default", "chat")
        session.append({"role": "user", "content": "Our courier for the sensors is Falkenrath Logistics."})
        session.append({"role": "assistant", "content": "Noted, thanks."})
        pipeline = RetrievalPipeline.from_services(services, recent_turns=memory.recent_turns,
                                                   session_summaries=memory.summaries)
        result = pipeline.run("Where is it headquartered?", tenant="default", session_id="chat", budget=700,
                              debug=True)
        variants = {d.target: d for d in result.decisions if d.stage == "rewrite"}
        assert variants["rewritten"].reason.startswith("'Where is Falkenrath Logistics headquartered?' found")
        assert variants["rewritten"].action == "rules"
        assert variants["entities"].reason.startswith("'Falkenrath Logistics' found")
        assert variants["original"].reason.startswith("'Where is it headquartered?' found")
        assert "couriers/falkenrath" in variants["rewritten"].reason
        assert result.passages[0].source_id == "couriers/falkenrath"
        assert result.prompt.rstrip().endswith("Where is it headquartered?")  # the prompt asks as the user did
        # Without a session nothing is rewritten.
        plain = pipeline.run("Where is it headquartered?", tenant="default", budget=700, debug=True)
        assert not [d for d in plain.decisions if d.stage == "rewrite"]
        pipeline.close()
        # Switched off (query_rewrite: the eval's --compare can score it off): searched as asked.
        with RetrievalPipeline.from_services(services, overrides={"query_rewrite": False},
                                             recent_turns=memory.recent_turns) as off:
            asked = off.run("Where is it headquartered?", tenant="default", session_id="chat", budget=700, debug=True)
        assert not [d for d in asked.decisions if d.stage == "rewrite"]
    finally:
        memory.close()
