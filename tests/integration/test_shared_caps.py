"""One answer per input, whichever surface it goes through: the API's caps (core/limits.py, core/tokens.py)
and a question holding what no store holds (a NUL, a lone surrogate, only whitespace) are refused through
the HTTP API (422), the Python API (ValueError), the MCP tools (an error result) and the CLI (a usage
error), each naming the field, the value and, for a cap, the cap; the largest allowed values are taken
locally as through a server. And ``ingest`` takes its options between its paths."""

from __future__ import annotations

import json
import os

import anyio
import httpx
import pytest
from mcp.client import Client

os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")

from agent_memory.api import create_app  # noqa: E402
from agent_memory.api.testing import serve_in_thread, wait_ready  # noqa: E402
from agent_memory.core.config import load_settings  # noqa: E402
from agent_memory.core.limits import (  # noqa: E402
    MAX_ANSWER_TOKENS,
    MAX_LIST_LIMIT,
    MAX_SEARCH_LIMIT,
    MAX_SOON_DAYS,
)
from agent_memory.core.tokens import MAX_PROMPT_BUDGET  # noqa: E402
from agent_memory.ingest.upkeep import list_sources, stats  # noqa: E402
from agent_memory.mcp_server.server import build_server  # noqa: E402
from agent_memory.memory import Memory  # noqa: E402
from tests.helpers import api_error, embedded_cli_env, run_cli  # noqa: E402


def _settings(data_dir):
    return load_settings(data_dir=data_dir, triple_extractor="none", qdrant_url=None, neo4j_uri=None,
                         postgres_url=None, llm_model=None)


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with serve_in_thread(create_app(_settings(tmp_path_factory.mktemp("caps-api")))) as url, \
            httpx.Client(base_url=url, timeout=120) as http:
        wait_ready(http)
        yield http


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    with Memory(settings=_settings(tmp_path_factory.mktemp("caps-local"))) as mem:
        mem.add("The greenhouse pump runs at night.", source_id="notes/pump")
        yield mem


# (HTTP method, path, body or query, the Python call on Memory, fragments both messages hold)
CASES = {
    "ask NUL": ("POST", "/v1/ask", {"question": "Who\x00?"}, lambda m: m.ask("Who\x00?"), ["question", "NUL"]),
    "prompt NUL": ("POST", "/v1/prompt", {"question": "a\x00b"}, lambda m: m.prompt("a\x00b"), ["question", "NUL"]),
    "search NUL": ("POST", "/v1/search", {"query": "x\x00"}, lambda m: m.search("x\x00"), ["query", "NUL"]),
    "blank question": ("POST", "/v1/prompt", {"question": "  \t"}, lambda m: m.prompt("  \t"),
                       ["question", "is empty"]),
    "blank query": ("POST", "/v1/search", {"query": " "}, lambda m: m.search(" "), ["query", "is empty"]),
    "invisible question": ("POST", "/v1/prompt", {"question": "\u200b\U000e0041"},
                           lambda m: m.prompt("\u200b\U000e0041"), ["question", "is empty"]),
    "blank document": ("POST", "/v1/documents", {"source_id": "blank/doc", "text": " \n\u200b"},
                       lambda m: m.add(" \n\u200b", source_id="blank/doc"), ["text is blank", "forget it"]),
    "budget": ("POST", "/v1/prompt", {"question": "Who?", "budget": MAX_PROMPT_BUDGET + 1},
               lambda m: m.prompt("Who?", budget=MAX_PROMPT_BUDGET + 1),
               ["budget", str(MAX_PROMPT_BUDGET), str(MAX_PROMPT_BUDGET + 1)]),
    "search limit": ("POST", "/v1/search", {"query": "pump", "limit": MAX_SEARCH_LIMIT + 1},
                     lambda m: m.search("pump", limit=MAX_SEARCH_LIMIT + 1),
                     ["limit", str(MAX_SEARCH_LIMIT), str(MAX_SEARCH_LIMIT + 1)]),
    "answer tokens": ("POST", "/v1/ask", {"question": "Who?", "max_answer_tokens": MAX_ANSWER_TOKENS + 1},
                      lambda m: m.ask("Who?", max_answer_tokens=MAX_ANSWER_TOKENS + 1),
                      ["max_answer_tokens", str(MAX_ANSWER_TOKENS), str(MAX_ANSWER_TOKENS + 1)]),
    "soon days": ("GET", "/v1/stats", {"soon_days": MAX_SOON_DAYS + 1},
                  lambda m: stats(m.services, m.tenant, soon_days=MAX_SOON_DAYS + 1),
                  ["soon_days", str(MAX_SOON_DAYS), str(MAX_SOON_DAYS + 1)]),
    "soon days NaN": ("GET", "/v1/stats", {"soon_days": "nan"}, lambda m: stats(m.services, m.tenant, soon_days=float("nan")),
                      ["soon_days", "finite"]),
    "list limit": ("GET", "/v1/sources", {"limit": MAX_LIST_LIMIT + 1},
                   lambda m: list_sources(m.services, m.tenant, limit=MAX_LIST_LIMIT + 1),
                   ["limit", str(MAX_LIST_LIMIT), str(MAX_LIST_LIMIT + 1)]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_api_and_memory_refuse_the_same_value_naming_it(client, memory, case):
    method, path, given, local, fragments = CASES[case]
    sent = {"json": given} if method == "POST" else {"params": given}
    message = api_error(client.request(method, path, **sent), 422, "invalid_request")
    assert "Value error" not in message  # pydantic's prefix: the message is the validator's own
    with pytest.raises(ValueError) as refused:
        local(memory)
    for fragment in fragments:
        assert fragment in message and fragment in str(refused.value), (fragment, message, refused.value)


def test_a_lone_surrogate_in_a_question_is_refused_naming_it(client, memory):
    # JSON can carry one ("\ud800" escaped), UTF-8 cannot: the API refuses any such body as not JSON
    # (api/strict.py, as for a document), Memory the question, naming where it is.
    response = client.post("/v1/prompt", content=b'{"question": "caf\\ud800?"}',
                           headers={"content-type": "application/json"})
    assert "lone surrogates are not JSON" in api_error(response, 400)
    with pytest.raises(ValueError, match=r"^question holds a lone surrogate '\\ud800' at character 3"):
        memory.prompt("caf\ud800?")


def test_the_largest_allowed_values_are_taken_locally(memory):
    assert memory.search("pump", limit=MAX_SEARCH_LIMIT)[0].source_id == "notes/pump"
    assert memory.prompt("When does the pump run?", budget=MAX_PROMPT_BUDGET).budget == MAX_PROMPT_BUDGET
    assert stats(memory.services, memory.tenant, soon_days=MAX_SOON_DAYS)[memory.tenant]["sources"] == 1
    assert [r["source_id"] for r in list_sources(memory.services, memory.tenant, limit=MAX_LIST_LIMIT)] == ["notes/pump"]


@pytest.mark.parametrize("tool, arguments, fragments", [
    ("recall", {"question": "Who\x00?"}, ["question", "NUL"]),
    ("recall", {"question": " "}, ["question", "is empty"]),
    ("search", {"query": "a\x00"}, ["query", "NUL"]),
    ("search", {"query": "pump", "limit": MAX_SEARCH_LIMIT + 1}, ["limit", str(MAX_SEARCH_LIMIT)]),
    ("remember", {"text": "   "}, ["invalid arguments", "text is blank"]),
    ("remember", {"text": "a\x00b"}, ["invalid arguments", "text holds a NUL"]),
    ("remember", {"documents": [{"source_id": "d", "text": "\t"}]}, ["text is blank"]),
])
def test_the_mcp_tools_refuse_the_same_values(memory, tool, arguments, fragments):
    async def call():
        async with Client(build_server(memory, lambda ctx: memory.tenant)) as mcp:
            return await mcp.call_tool(tool, arguments)

    result = anyio.run(call)
    text = result.content[0].text
    assert result.is_error and all(f in text for f in fragments) and "Value error" not in text, text


def test_the_cli_refuses_a_question_no_store_holds_as_a_usage_error(tmp_path, capsys):
    # argv cannot carry NUL, but bytes that are no UTF-8 arrive as lone surrogates (surrogateescape).
    with pytest.raises(SystemExit) as exited:
        run_cli(capsys, ["--data-dir", str(tmp_path / "never"), "prompt", "caf\udce9?"])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and "Traceback" not in err
    assert "argument question: the question holds a lone surrogate '\\udce9' at character 3" in err
    assert not (tmp_path / "never").exists()  # refused before anything was opened


def test_ingest_takes_options_between_its_paths(tmp_path, monkeypatch, capsys):
    embedded_cli_env(monkeypatch, tmp_path / "data")
    (tmp_path / "a.md").write_text("The greenhouse pump runs at night.\n")
    (tmp_path / "folder" / "deep").mkdir(parents=True)
    (tmp_path / "folder" / "deep" / "c.md").write_text("The boiler is serviced in May.\n")
    code, out, err = run_cli(capsys, ["ingest", str(tmp_path / "a.md"), "-r", str(tmp_path / "folder"), "--json"])
    assert code == 0, err
    assert json.loads(out)  # the report, as JSON: --json after the paths was taken too
    code, out, _ = run_cli(capsys, ["list"])
    # -r between the paths applied to the folder: the file two levels down was ingested.
    assert sorted(row["source_id"] for row in json.loads(out)["sources"]) == ["a.md", "folder/deep/c.md"]
