"""What a client or a model reads before its first call: the OpenAPI document (every operation
typed and described) and the MCP tool list (annotations, output schemas, instructions)."""

from __future__ import annotations

import anyio
import pytest
from mcp.client import Client
from pydantic import ValidationError

from agent_memory.api.app import create_app
from agent_memory.mcp_server.server import build_server
from agent_memory.mcp_server.tools import TOOLS, RememberIn, generated_source_id
from agent_memory.memory import Memory
from agent_memory.retrieval.types import relevance


def test_every_operation_has_a_typed_success_response_and_a_description(tmp_path):
    from agent_memory.core.config import load_settings

    document = create_app(load_settings(data_dir=tmp_path)).openapi()
    schemas = document["components"]["schemas"]
    seen = set()
    for path, operations in document["paths"].items():
        for method, op in operations.items():
            seen.add((method.upper(), path))
            assert op.get("description", "").strip(), f"{method.upper()} {path} has no description"
            ok = next(v for k, v in op["responses"].items() if k.startswith("2"))
            if (method, path) == ("get", "/v1/export"):  # JSON Lines, streamed: one object per line, described
                assert list(ok["content"]) == ["application/x-ndjson"] and "header" in ok["description"]
                continue
            schema = ok["content"]["application/json"]["schema"]
            assert schema, f"{method.upper()} {path}: empty response schema"
            ref = schema.get("$ref", "").rsplit("/", 1)[-1]
            assert ref in schemas and schemas[ref].get("properties"), f"{method.upper()} {path}: {schema}"
    assert {("POST", "/v1/prompt"), ("GET", "/v1/stats"), ("GET", "/v1/sources"), ("POST", "/v1/gc"),
            ("POST", "/v1/search"), ("GET", "/v1/whoami"), ("GET", "/v1/export"), ("DELETE", "/v1/sources"),
            ("DELETE", "/v1/tenant"), ("GET", "/v1/sessions/{session_id}/messages")} <= seen
    prompt = schemas["PromptOut"]["properties"]
    assert {"prompt", "passages", "decisions", "total_tokens", "budget"} <= set(prompt)
    assert "relevance" in schemas["PassageOut"]["properties"]


def test_relevance_is_in_zero_one_and_keeps_the_order():
    raw = [-7.5, -1.2, 0.0, 0.4, 3.3, 80.0, float("-inf"), float("nan")]
    values = [relevance(x) for x in raw]
    assert all(0.0 <= v <= 1.0 for v in values)
    assert values[:6] == sorted(values[:6]) and values[2] == 0.5


def test_remember_takes_plain_text_and_generates_a_stable_id():
    args = RememberIn.model_validate({"text": "The night shift starts at 22:00."})
    (doc,) = args.all_documents()
    assert doc.source_id == generated_source_id("The night shift starts at 22:00.")
    assert doc.source_id.startswith("memory/") and len(doc.source_id) > len("memory/") + 8
    named = RememberIn.model_validate({"text": "x", "source_id": "notes/shift"}).all_documents()
    assert named[0].source_id == "notes/shift"
    with pytest.raises(ValidationError, match="give `text`"):
        RememberIn.model_validate({})
    with pytest.raises(ValidationError, match="give `text` too"):
        RememberIn.model_validate({"source_id": "notes/orphan"})
    with pytest.raises(ValidationError, match="session_id"):
        RememberIn.model_validate({"messages": [{"message": {"role": "user", "content": "hi"}}]})


def test_tools_say_what_they_do_to_memory_and_what_they_return(tmp_path):
    memory = Memory(data_dir=tmp_path)  # no store is opened to list the tools

    async def scenario():
        async with Client(build_server(memory, lambda ctx: memory.tenant)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            return client.instructions, tools

    try:
        instructions, tools = anyio.run(scenario)
    finally:
        memory.close()
    assert set(tools) == set(TOOLS)
    for name in ("recall", "search", "session_view"):
        hints = tools[name].annotations
        assert hints.read_only_hint is True and hints.destructive_hint is False, name
    assert tools["forget"].annotations.destructive_hint is True
    assert tools["forget"].annotations.read_only_hint is False
    assert tools["remember"].annotations.read_only_hint is False
    for name, tool in tools.items():
        assert tool.output_schema and tool.output_schema.get("properties"), name
    assert "text" in tools["remember"].input_schema["properties"]
    assert {"prompt", "sources", "passages"} <= set(tools["recall"].output_schema["properties"])
    # Written for a model: when to call which tool, how to cite.
    assert "`recall`" in instructions and "`search`" in instructions and "[S:" in instructions


def _open_objects(schema, defs: dict, where: str, seen: set) -> list[str]:
    """Where ``schema`` (following its $refs into ``defs``) has an object with declared properties that
    takes keys it does not declare."""
    if isinstance(schema, list):
        return [w for i, s in enumerate(schema) for w in _open_objects(s, defs, f"{where}[{i}]", seen)]
    if not isinstance(schema, dict):
        return []
    ref = schema.get("$ref")
    if ref is not None:
        name = ref.rsplit("/", 1)[-1]
        if name in seen:
            return []
        seen.add(name)
        return _open_objects(defs[name], defs, name, seen)
    found = [where] if schema.get("properties") and schema.get("additionalProperties") is not False else []
    for key in ("properties", "$defs"):
        for name, inner in (schema.get(key) or {}).items():
            found += _open_objects(inner, defs, f"{where}.{name}", seen)
    for key in ("items", "anyOf", "oneOf", "allOf"):
        found += _open_objects(schema.get(key), defs, f"{where}.{key}", seen)
    return found


def test_every_request_body_refuses_unknown_keys_in_its_schema(tmp_path):
    from agent_memory.core.config import load_settings

    document = create_app(load_settings(data_dir=tmp_path)).openapi()
    defs = document["components"]["schemas"]
    bodies = {f"{method.upper()} {path}": op["requestBody"]["content"]["application/json"]["schema"]
              for path, operations in document["paths"].items() for method, op in operations.items()
              if "application/json" in op.get("requestBody", {}).get("content", {})}
    assert {"POST /v1/ask", "POST /v1/prompt", "POST /v1/search", "POST /v1/documents",
            "POST /v1/sessions/{session_id}/messages", "PUT /v1/sessions/{session_id}/config"} <= set(bodies)
    for route, schema in bodies.items():
        assert not _open_objects(schema, {**defs, **schema.get("$defs", {})}, route, set()), route
    for name, spec in TOOLS.items():
        schema = spec.input.model_json_schema()
        assert not _open_objects(schema, schema.get("$defs", {}), name, set()), name


@pytest.mark.parametrize("tool, arguments, key", [
    ("remember", {"text": "x", "titel": "t"}, "titel"),
    ("remember", {"documents": [{"text": "x", "source_id": "a", "metdata": {}}]}, "metdata"),
    ("remember", {"session_id": "s", "messages": [{"message": {"role": "user", "content": "hi"},
                                                   "retension": "strict"}]}, "retension"),
    ("recall", {"question": "Maria", "budgt": 50}, "budgt"),
    ("recall", {"question": "Maria", "filters": {"metdata": {"x": 1}}}, "metdata"),
    ("search", {"query": "Maria", "limt": 3}, "limt"),
    ("forget", {"source_id": "a", "everywhere": True}, "everywhere"),
    ("session_view", {"session_id": "s", "budgt": 10}, "budgt"),
    ("session_list", {"tenant": "t"}, "tenant"),
    ("session_delete", {"session_id": "s", "forgett": True}, "forgett"),
])
def test_every_tool_refuses_a_misspelled_argument_naming_it(tool, arguments, key):
    with pytest.raises(ValidationError, match=f"unknown key '{key}'"):
        TOOLS[tool].input.model_validate(arguments)


def test_a_tool_call_with_a_misspelled_argument_is_an_error_naming_it(tmp_path):
    memory = Memory(data_dir=tmp_path)  # refused before the backend runs: no store is opened

    async def scenario():
        async with Client(build_server(memory, lambda ctx: memory.tenant)) as client:
            return await client.call_tool("recall", {"question": "Maria", "budgt": 50})

    try:
        result = anyio.run(scenario)
    finally:
        memory.close()
    text = " ".join(getattr(part, "text", "") for part in result.content)
    assert result.is_error and "invalid arguments for recall" in text and "unknown key 'budgt'" in text, text


def test_a_recall_with_a_bad_retrieval_override_is_an_error_naming_the_key_and_value(tmp_path):
    """The MCP recall tool takes ``overrides`` as /v1/ask does: a misspelled or mistyped one is the tool's error
    naming it and the value given, as the HTTP API's 400 does (tests/integration/test_api_unknown_keys.py)."""
    memory = Memory(data_dir=tmp_path)

    async def scenario():
        async with Client(build_server(memory, lambda ctx: memory.tenant)) as client:
            return [await client.call_tool("recall", {"question": "Maria", "overrides": overrides})
                    for overrides in ({"dense": {"limt": 5}}, {"dense": {"limit": True}})]

    try:
        misspelled, boolean = anyio.run(scenario)
    finally:
        memory.close()
    for result, said in ((misspelled, "dense.limt: unknown key (did you mean 'limit'?), got 5"),
                         (boolean, "dense.limit: should be a number, not a boolean, got True")):
        text = " ".join(getattr(part, "text", "") for part in result.content)
        assert result.is_error and said in text, text


def test_a_python_passage_gives_the_relevance_the_http_api_and_mcp_give():
    from agent_memory.retrieval.types import Passage

    passage = Passage(source_id="a.md", text="t", kind="chunk", score=2.0, tokens=1)
    assert passage.relevance == relevance(2.0) == 0.8808
    assert Passage(source_id="a.md", text="t", kind="chunk", score=float("-inf"), tokens=1).relevance == 0.0
