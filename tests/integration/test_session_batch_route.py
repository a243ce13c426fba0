"""``POST /v1/sessions/{id}/messages/batch``: several messages in one transaction, all or none. A client that
appended a batch one request per message (the MCP ``remember`` tool through a server did) kept the messages
before a refused one or a store failure, and another request's append could land between them."""

from __future__ import annotations

import threading

import httpx
import pytest

from agent_memory.api import create_app
from agent_memory.api.testing import serve_in_thread
from agent_memory.core.config import load_settings
from tests.helpers import TOOL_CALL, TOOL_RESULT, api_error, fail_an_insert


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    settings = load_settings(data_dir=tmp_path_factory.mktemp("batch-route"), triple_extractor="rules",
                             llm_model=None)
    app = create_app(settings, warm=False)
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=120) as http:
        yield http, app


def user(text: str) -> dict:
    # Forgettable: nothing to archive, so no embedding runs behind the requests.
    return {"message": {"role": "user", "content": text}, "retention": "forgettable"}


def stored(http, session: str) -> list:
    answer = http.get(f"/v1/sessions/{session}/messages")
    return [] if answer.status_code == 404 else [row["message"] for row in answer.json()["messages"]]


def test_a_batch_is_stored_in_order_and_a_refused_message_stores_none_of_it(served):
    http, _ = served
    answer = http.post("/v1/sessions/b1/messages/batch", json={"messages": [
        user("Check the X-300 stock."), {"message": TOOL_CALL}, {"message": TOOL_RESULT, "retention": "strict"}]})
    assert answer.status_code == 200, answer.text
    assert answer.json()["seqs"] == [0, 1, 2] and answer.json()["stats"]["messages"] == 3
    assert stored(http, "b1") == [{"role": "user", "content": "Check the X-300 stock."}, TOOL_CALL, TOOL_RESULT]

    refused = http.post("/v1/sessions/b1/messages/batch", json={"messages": [
        user("Order them."), {"message": {**TOOL_RESULT, "tool_call_id": "nope"}}]})
    assert api_error(refused, 400).startswith("messages[1]: message answers tool call id(s) ['nope']")
    shapeless = http.post("/v1/sessions/b1/messages/batch", json={"messages": [user("Order them."),
                                                                               {"message": {"role": "user"}}]})
    assert api_error(shapeless, 400).startswith("messages[1]: ")
    assert len(stored(http, "b1")) == 3  # neither batch left its first message
    assert http.post("/v1/sessions/b1/messages/batch", json={"messages": [user("Order them.")]}).json()["seqs"] == [3]


@pytest.mark.parametrize("body, named", [({"messages": []}, "messages"),
                                         ({"messages": [{"message": {"role": "user", "content": "x"},
                                                         "retention": "sticky"}]}, "retention"),
                                         ({"message": {"role": "user", "content": "x"}}, "message")])
def test_a_malformed_batch_is_a_422_naming_the_field(served, body, named):
    http, _ = served
    assert named in api_error(http.post("/v1/sessions/b2/messages/batch", json=body), 422)
    assert stored(http, "b2") == []


def test_a_store_failure_midway_stores_none_of_the_batch_and_the_session_goes_on(served):
    http, app = served
    assert http.post("/v1/sessions/b3/messages/batch", json={"messages": [user("Before.")]}).status_code == 200
    store = app.state.api.memory.working_memory.sessions.store
    real = store._db
    fail_an_insert(store, 2)
    try:
        batch = {"messages": [user("one"), user("two"), user("three")]}
        assert "full" in api_error(http.post("/v1/sessions/b3/messages/batch", json=batch), 503, "store_error")
    finally:
        store._db = real
    assert stored(http, "b3") == [{"role": "user", "content": "Before."}]
    assert http.post("/v1/sessions/b3/messages/batch", json=batch).json()["seqs"] == [1, 2, 3]


def test_concurrent_batches_never_interleave(served):
    http, _ = served
    batches, size, errors = 4, 5, []

    def writer(name: str) -> None:
        for b in range(batches):
            answer = http.post("/v1/sessions/b4/messages/batch",
                               json={"messages": [user(f"{name}{b}-{i}") for i in range(size)]})
            if answer.status_code != 200:
                errors.append(answer.text)

    threads = [threading.Thread(target=writer, args=(name,)) for name in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    texts = [m["content"] for m in stored(http, "b4")]
    assert len(texts) == 2 * batches * size
    for start in range(0, len(texts), size):  # each run of `size` is one batch, whole and in order
        first = texts[start]
        assert texts[start:start + size] == [f"{first[:-2]}-{i}" for i in range(size)], texts
