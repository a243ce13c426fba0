"""LangGraph over the memory: the BaseStore contract (put/get/search/delete/list_namespaces) and a small
agent graph with a scripted model whose working memory is a session (no LLM, no checkpointer)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("langgraph")

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402
from langgraph.graph import END, START, MessagesState, StateGraph  # noqa: E402

from agent_memory.integrations.langgraph import AgentMemoryStore, SessionMessages  # noqa: E402


@pytest.fixture()
def memory(settings):
    from agent_memory import Memory

    with Memory(settings=settings) as mem:
        yield mem


def test_the_store_puts_gets_searches_lists_and_deletes(memory):
    store = AgentMemoryStore(memory)
    store.put(("acme", "users", "u1"), "prefs", {"text": "Anna prefers window seats on trains.", "kind": "pref"})
    store.put(("acme", "users", "u1"), "diet", {"text": "Anna is vegetarian since 2019.", "kind": "fact"})
    store.put(("acme", "users", "u2"), "prefs", {"text": "Bo likes aisle seats on planes.", "kind": "pref"})
    store.put(("rival", "users", "u1"), "prefs", {"text": "A rival tenant's secret seat choice."})

    item = store.get(("acme", "users", "u1"), "prefs")
    assert item.value == {"text": "Anna prefers window seats on trains.", "kind": "pref"}
    assert item.namespace == ("acme", "users", "u1") and item.key == "prefs"
    assert store.get(("acme", "users", "u1"), "missing") is None

    hits = store.search(("acme", "users"), query="Which seat does Anna like on the train?", limit=3)
    assert hits and hits[0].key == "prefs" and hits[0].namespace == ("acme", "users", "u1")
    assert all(h.score is not None and 0 <= h.score <= 1 for h in hits) and all("rival" not in h.value.get("text", "") for h in hits)
    # The same text is a memory source: recall cites it.
    assert "[S:users/u1/prefs]" in memory.prompt("Anna seat train", budget=300, tenant="acme").prompt

    only_u1 = store.search(("acme", "users", "u1"))
    assert {i.key for i in only_u1} == {"prefs", "diet"}
    assert [i.key for i in store.search(("acme", "users"), filter={"kind": "fact"})] == ["diet"]

    created = item.created_at
    store.put(("acme", "users", "u1"), "prefs", {"text": "Anna now prefers aisle seats.", "kind": "pref"})
    again = store.get(("acme", "users", "u1"), "prefs")
    assert again.value["text"] == "Anna now prefers aisle seats." and again.created_at == created
    assert again.updated_at >= created

    assert store.list_namespaces(prefix=("acme",)) == [("acme", "users", "u1"), ("acme", "users", "u2")]
    assert store.list_namespaces(prefix=("acme",), max_depth=2) == [("acme", "users")]
    assert ("rival", "users", "u1") in store.list_namespaces()

    store.delete(("acme", "users", "u1"), "prefs")
    assert store.get(("acme", "users", "u1"), "prefs") is None
    assert "users/u1/prefs" not in memory.prompt("Anna seat", budget=300, tenant="acme").prompt
    with pytest.raises(ValueError, match="equality"):
        store.search(("acme",), filter={"kind": {"$gt": 1}})


def test_a_fixed_tenant_store_keeps_every_label_as_metadata(memory):
    store = AgentMemoryStore(memory, tenant="team")
    store.put(("notes",), "n1", {"content": "The build server is ci-7."})
    assert store.get(("notes",), "n1").namespace == ("notes",)
    assert store.list_namespaces() == [("notes",)]
    assert memory.search("build server", tenant="team")[0].source_id == "notes/n1"


class ScriptedModel:
    """No LLM: the first call asks for the order's status, the next answers from the tool result."""

    def __init__(self):
        self.seen: list[list] = []

    def __call__(self, state: MessagesState) -> dict:
        messages = state["messages"]
        self.seen.append(list(messages))
        results = [m for m in messages if isinstance(m, ToolMessage)]
        if not results or "order status" in messages[-1].content:
            asked = messages[-1].content
            order = asked.split()[-1].rstrip("?")
            return {"messages": [AIMessage("", tool_calls=[{"id": f"call-{order}", "name": "order_status",
                                                            "args": {"order": order}}])]}
        return {"messages": [AIMessage(f"The order is {results[-1].content}.")]}


def tools(state: MessagesState) -> dict:
    call = state["messages"][-1].tool_calls[0]
    status = {"A-17": "shipped (tracking 0x00AF31)", "B-4": "waiting for stock"}[call["args"]["order"]]
    return {"messages": [ToolMessage(status, tool_call_id=call["id"])]}


def route(state: MessagesState) -> str:
    return "tools" if getattr(state["messages"][-1], "tool_calls", None) else "remember"


def test_an_agent_graph_keeps_its_working_memory_in_a_session(memory):
    model = ScriptedModel()
    history = SessionMessages(memory, budget=2000)
    graph = StateGraph(MessagesState)
    graph.add_node("memory", history.sync)
    graph.add_node("model", model)
    graph.add_node("tools", tools)
    graph.add_node("remember", history.sync)
    graph.add_edge(START, "memory")
    graph.add_edge("memory", "model")
    graph.add_conditional_edges("model", route, {"tools": "tools", "remember": "remember"})
    graph.add_edge("tools", "memory")
    graph.add_edge("remember", END)
    app = graph.compile()  # no checkpointer: the session is the memory
    config = {"configurable": {"thread_id": "support-1"}}

    out = app.invoke({"messages": [HumanMessage("What is the order status of A-17?")]}, config)
    assert "shipped (tracking 0x00AF31)" in out["messages"][-1].content
    out = app.invoke({"messages": [HumanMessage("And the order status of B-4?")]}, config)
    assert "waiting for stock" in out["messages"][-1].content
    # The second run's model saw the first run (from the session, not from a checkpoint).
    assert any("0x00AF31" in str(m.content) for m in model.seen[-1])
    stored = memory.session("support-1").messages()
    assert [m["role"] for m in stored] == ["user", "assistant", "tool", "assistant"] * 2
    assert json.loads(stored[1]["tool_calls"][0]["function"]["arguments"]) == {"order": "A-17"}
    assert memory.sessions()[0]["session_id"] == "support-1"


def test_put_index_follows_langgraph_index_false_fields_and_the_store_default(memory):
    """index=False: out of search with a query, still got, listed and filtered; a list of paths: only
    their text is searched (none found: not indexed); the store's index={"fields": [...]} is the default."""
    store = AgentMemoryStore(memory)
    ns = ("acme", "cfg")
    store.put(ns, "secret", {"text": "Do not index me: the vault code is ZZTOP-4471.", "tag": "s"}, index=False)
    store.put(ns, "visible", {"text": "The vault is in the cellar behind the wine rack."})
    hits = store.search(("acme",), query="vault code ZZTOP-4471", limit=10)
    assert [h.key for h in hits] == ["visible"]
    assert store.get(ns, "secret").value["tag"] == "s"
    assert {i.key for i in store.search(ns)} == {"secret", "visible"}
    assert [i.key for i in store.search(ns, filter={"tag": "s"})] == ["secret"]

    store.put(ns, "doc", {"title": "Heron migration notes", "body": {"lines": ["Herons nest near Lake Orta."]},
                          "owner": "Quentin Zarkowski"}, index=["title", "body.lines[*]"])
    assert store.search(ns, query="Where do herons nest?")[0].key == "doc"
    texts = {p.source_id: p.text for p in memory.search("herons nest", limit=10, tenant="acme")}
    assert "Herons nest near Lake Orta." in texts["cfg/doc"] and "Zarkowski" not in texts["cfg/doc"]
    store.put(ns, "none", {"text": "Kestrels hover over the motorway verge."}, index=["missing"])
    assert "none" not in [h.key for h in store.search(ns, query="kestrels hovering", limit=10)]
    assert store.get(ns, "none") is not None

    fields = AgentMemoryStore(memory, index={"fields": ["summary"]})
    fields.put(ns, "f", {"summary": "Otters play at the weir at dawn.", "text": "Unrelated words about taxes."})
    assert fields.search(ns, query="otters at the weir")[0].key == "f"
    assert "taxes" not in {p.source_id: p.text for p in memory.search("otters", limit=10, tenant="acme")}["cfg/f"]
    with pytest.raises(ValueError, match="dims"):
        AgentMemoryStore(memory, index={"dims": 384, "embed": "openai:text-embedding-3-small"})
    with pytest.raises(ValueError, match="index is False, None or a list"):
        store.put(ns, "bad", {"text": "x"}, index="text")


def test_a_graph_without_a_thread_id_is_told_what_is_missing_not_shown_its_config(memory):
    graph = StateGraph(MessagesState)
    graph.add_node("memory", SessionMessages(memory).sync)
    graph.add_edge(START, "memory")
    graph.add_edge("memory", END)
    with pytest.raises(ValueError) as refused:
        graph.compile().invoke({"messages": [HumanMessage("hi")]})
    message = str(refused.value)
    assert "'thread_id'" in message and "neither is set" in message
    assert "__pregel" not in message and len(message) < 200
    with pytest.raises(ValueError, match="got thread_id=''"):
        SessionMessages.session_id({"configurable": {"thread_id": ""}})
