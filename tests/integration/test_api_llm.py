"""The LLM answer path over HTTP against the local fake OpenAI server: citations that exist in the
prompt are kept, invented ones are stripped and counted, and an LLM failure falls back to
retrieval-only (200, ``llm_error`` set). No keys, loopback: the API needs no key here."""

from __future__ import annotations

import os
import re

import httpx
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")
os.environ["AGENT_MEMORY_TRIPLE_EXTRACTOR"] = "rules"

from agent_memory.answer import SYSTEM_PROMPT, check_citations, prompt_ids  # noqa: E402
from agent_memory.api import create_app  # noqa: E402
from agent_memory.api.testing import SAMPLES, serve_in_thread, upload_samples, wait_ready  # noqa: E402
from agent_memory.core.config import load_settings  # noqa: E402
from tests.fake_openai import FakeOpenAI, Reply  # noqa: E402

STORES_DOC = "samples/docs/embedded-stores.md"
QUESTION = "Which vector store does agent-memory embed, and why?"


class Script:
    """What the fake LLM says to the answer call (other calls, e.g. ingestion summaries, get a summary)."""

    def __init__(self) -> None:
        self.answer = lambda ids: "I do not know."
        self.answer_prompts: list[str] = []

    def __call__(self, request: dict):
        messages = request.get("messages", [])
        if messages and messages[0].get("content") == SYSTEM_PROMPT:
            prompt = messages[1]["content"]
            self.answer_prompts.append(prompt)
            return self.answer(prompt_ids(prompt))
        return Reply(text="A short summary of the text.", prompt_tokens=5, completion_tokens=5)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    script = Script()
    with FakeOpenAI(responder=script) as fake:
        settings = load_settings(data_dir=tmp_path_factory.mktemp("api-llm"), triple_extractor="rules",
                                 llm_model="fake-model", llm_base_url=fake.base_url, llm_max_retries=0,
                                 llm_timeout_s=10, api_keys={})
        with serve_in_thread(create_app(settings)) as url, httpx.Client(base_url=url, timeout=120) as client:
            wait_ready(client)
            upload_samples(client, files=[SAMPLES / "docs/embedded-stores.md", SAMPLES / "docs/products.jsonl"])
            yield client, fake, script


def ask(client, question=QUESTION, debug=False, **body):
    response = client.post("/v1/ask", params={"debug": debug},
                           json={"question": question, "budget": 900, **body})
    assert response.status_code == 200, response.text
    return response.json()


def test_answer_keeps_known_citations_and_strips_invented_ones(server):
    client, fake, script = server
    script.answer = lambda ids: (f"agent-memory embeds Qdrant through qdrant-edge-py [S:{STORES_DOC}], "
                                 "because it needs no server [S:made-up-source]. Filtered search is fast "
                                 f"[S:{STORES_DOC}, S:ghost-2].")
    body = ask(client)
    assert body["mode"] == "llm" and body["model"] == "fake-model"
    assert body["answer"] == (f"agent-memory embeds Qdrant through qdrant-edge-py [S:{STORES_DOC}], because it "
                              f"needs no server. Filtered search is fast [S:{STORES_DOC}].")
    assert body["unknown_citations"] == ["made-up-source", "ghost-2"] and body["unknown_citation_count"] == 2
    assert [c["source_id"] for c in body["citations"]] == [STORES_DOC]
    assert any("qdrant-edge-py" in p for p in body["citations"][0]["passages"])
    # Token usage is the LLM's own accounting (the fake bills 11 + 7); the prompt is not echoed back.
    assert body["usage"]["prompt_tokens"] == 11 and body["usage"]["completion_tokens"] == 7
    assert 0 < body["usage"]["context_tokens"] <= 900
    assert body["prompt"] is None and body["llm_error"] is None
    # The LLM saw exactly the assembled prompt, with its [S:id] tags.
    sent = script.answer_prompts[-1]
    assert f"[S:{STORES_DOC}]" in sent and sent.rstrip().endswith(QUESTION)
    assert fake.requests[-1]["model"] == "fake-model"


def test_every_cited_id_in_the_answer_exists_in_the_prompt(server):
    client, _, script = server
    script.answer = lambda ids: " ".join(f"Claim {n} [S:{sid}]." for n, sid in enumerate(ids)) + " [S:nope]"
    body = ask(client, "Who founded Acme, and which sensor replaced the X-200?", debug=True)
    cited = re.findall(r"\[S:([^\]]+)\]", body["answer"])
    prompt_tags = set(prompt_ids(body["debug"]["prompt"]))
    assert cited and set(cited) <= prompt_tags
    assert {c["source_id"] for c in body["citations"]} == set(cited)
    assert body["unknown_citations"] == ["nope"]
    assert all(c["passages"] for c in body["citations"])  # each citation points at prompt text


def test_llm_failure_falls_back_to_retrieval_only(server):
    client, fake, script = server
    fake.enqueue(status=500)  # llm_max_retries=0: one failure is final
    body = ask(client)
    assert body["mode"] == "retrieval-only" and body["answer"] is None
    assert "HTTP 500" in body["llm_error"] and "fake-model" in body["llm_error"]
    assert f"[S:{STORES_DOC}]" in body["prompt"] and body["passages"][0]["source_id"] == STORES_DOC
    assert body["usage"]["completion_tokens"] == 0
    # The next call works again.
    script.answer = lambda ids: f"Qdrant Edge [S:{ids[0]}]."
    assert ask(client)["mode"] == "llm"


def test_loopback_without_keys_needs_no_key(server):
    client, _, _ = server
    assert client.post("/v1/prompt", json={"question": QUESTION, "budget": 500}).status_code == 200
    assert client.get("/v1/sessions/none/view").status_code == 404  # reached the route: no 401


def test_citation_checker_units():
    text, cited, unknown = check_citations("A [S:a]. B [S:zz] [S:b; S:c]. C [S:a].", {"a", "b"})
    assert text == "A [S:a]. B [S:b]. C [S:a]."
    assert cited == ["a", "b"] and unknown == ["zz", "c"]
    assert prompt_ids("x [S:p/1] y [S:q] [S:p/1]") == ["p/1", "q"]
