"""The LangChain adapters: LangChain's own standard retriever tests, and the chat history's contract."""

from __future__ import annotations

import pytest
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_tests.integration_tests import RetrieversIntegrationTests

from agent_memory.core.errors import ConfigError
from agent_memory.integrations.langchain import AgentMemoryChatHistory, AgentMemoryPromptRetriever, AgentMemoryRetriever

NOTES = {
    "garden/tomatoes": "Tomatoes in the north greenhouse are watered every morning at six.",
    "garden/basil": "Basil in the north greenhouse is watered every second evening.",
    "garden/peppers": "Peppers in the south greenhouse are watered by drip irrigation at noon.",
    "garden/roses": "Roses by the gate are watered each Sunday and pruned in March.",
    "office/printer": "The office printer on floor two jams when the paper tray is overfilled.",
}


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    from agent_memory import Memory
    from agent_memory.core.config import load_settings

    settings = load_settings(data_dir=tmp_path_factory.mktemp("lc") / "data", triple_extractor="rules",
                             qdrant_url=None, neo4j_uri=None)
    with Memory(settings=settings) as mem:
        for source_id, text in NOTES.items():
            mem.add(text, source_id=source_id)
        yield mem


class TestAgentMemoryRetrieverStandard(RetrieversIntegrationTests):
    @pytest.fixture(autouse=True)
    def _bind(self, memory):
        type(self).memory = memory

    @property
    def retriever_constructor(self) -> type[AgentMemoryRetriever]:
        return AgentMemoryRetriever

    @property
    def retriever_constructor_params(self) -> dict:
        return {"memory": self.memory}

    @property
    def retriever_query_example(self) -> str:
        return "When are the plants in the greenhouse watered?"


def test_documents_carry_source_ids_and_scores(memory):
    docs = AgentMemoryRetriever(memory=memory, k=3).invoke("When is the basil watered?")
    assert docs[0].metadata["source_id"] == "garden/basil" and "Basil" in docs[0].page_content
    scores = [d.metadata["score"] for d in docs]
    assert scores == sorted(scores, reverse=True) and all(0 <= s <= 1 for s in scores)  # as MCP and HTTP
    with pytest.raises(ValueError, match="k must be at least 1, got 0"):
        AgentMemoryRetriever(memory=memory, k=3).invoke("When is the basil watered?", k=0)
    with pytest.raises(TypeError, match="k must be an int, got True"):
        AgentMemoryRetriever(memory=memory, k=3).invoke("When is the basil watered?", k=True)
    with pytest.raises(ValueError, match="k"):  # pydantic's strict int, at construction
        AgentMemoryRetriever(memory=memory, k=True)
    only = AgentMemoryRetriever(memory=memory, k=5, filters={"source_ids": ["office/printer"]}).invoke("watered")
    assert {d.metadata["source_id"] for d in only} == {"office/printer"}


def test_prompt_retriever_returns_the_bounded_prompt(memory):
    [doc] = AgentMemoryPromptRetriever(memory=memory, budget=120).invoke("When is the basil watered?")
    assert isinstance(doc, Document) and "[S:garden/basil]" in doc.page_content
    assert doc.metadata["tokens"] <= 120 == doc.metadata["budget"]
    assert "garden/basil" in doc.metadata["source_ids"]
    # Only None means the retriever's budget: 0 is refused as Memory.prompt refuses it (it had meant 1800).
    with pytest.raises(ValueError, match="budget must be a whole number from 1"):
        AgentMemoryPromptRetriever(memory=memory, budget=120).invoke("When is the basil watered?", budget=0)
    assert AgentMemoryPromptRetriever(memory=memory, budget=120).invoke("basil?", budget=None)[0].metadata["budget"] == 120
    with pytest.raises(ConfigError, match="unknown retrieval preset ''"):  # "" had meant the served preset
        memory.prompt("When is the basil watered?", budget=200, preset="")


def test_chat_history_is_a_working_memory_session(memory):
    history = AgentMemoryChatHistory(memory, "lc-chat", budget=60, retention="fuzzy")
    assert history.messages == []
    history.add_messages([SystemMessage("You are terse."), HumanMessage("My locker code is 4411.")])
    history.add_ai_message("Noted.")
    messages = history.messages
    assert isinstance(messages[0], SystemMessage) and "terse" in messages[0].content
    assert isinstance(messages[-1], AIMessage) and messages[-1].content == "Noted."
    assert any(isinstance(m, HumanMessage) and "4411" in m.content for m in messages)
    assert len(memory.session("lc-chat").messages()) == 3  # stored as appended; the view is what is compacted

    for i in range(30):  # far past the budget: the view is compacted, the system message stays
        history.add_user_message(f"Filler message number {i} about nothing in particular at all.")
    view = history.messages
    assert isinstance(view[0], SystemMessage)
    assert memory.session("lc-chat").count_view(convert(view)) <= 60

    other = AgentMemoryChatHistory(memory, "lc-chat", tenant="rival")
    assert other.messages == []
    other.clear()  # nothing there: a no-op
    assert "lc-chat" in [s["session_id"] for s in memory.sessions()]
    history.clear()
    assert history.messages == [] and "lc-chat" not in [s["session_id"] for s in memory.sessions()]
    history.add_user_message("A fresh start.")
    assert [m.content for m in history.messages] == ["A fresh start."]


def test_clear_can_forget_the_archived_turns(memory):
    kept = AgentMemoryChatHistory(memory, "lc-kept")  # the default, as the docstring and README say
    kept.add_user_message("The spare key to the boathouse hangs behind the red door.")
    kept.clear()
    assert kept.messages == []
    assert "[S:lc-kept/m0]" in memory.prompt("Where is the spare boathouse key?", budget=400).prompt
    history = AgentMemoryChatHistory(memory, "lc-private", forget_archived=True)
    history.add_user_message("My locker code is 4411 and I decided to move to Tromso on 2025-03-01.")
    assert "[S:lc-private/m0]" in memory.prompt("Where did I decide to move?", budget=400).prompt
    history.clear()
    assert "lc-private/m0" not in memory.prompt("Where did I decide to move?", budget=400).prompt
    with pytest.raises(Exception, match="lc-private"):
        memory.delete_session("lc-private")


def convert(messages):
    from langchain_core.messages import convert_to_openai_messages

    return convert_to_openai_messages(messages)
