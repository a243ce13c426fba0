"""What an agent read in its own tool loop stays within reach once compaction drops it from the view:
each tool call and its results are archived as one turn (tool, arguments, the results whole), and a
question about a session finds them. Real stores and models, through ``Memory``."""

from __future__ import annotations

import json
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")

from agent_memory import Memory  # noqa: E402
from agent_memory.core.records import SearchFilter  # noqa: E402


def call(n: int, tool: str, **arguments) -> dict:
    return {"role": "assistant", "content": f"Step {n}: running {tool}.", "tool_calls": [
        {"id": f"c{n}", "type": "function", "function": {"name": tool, "arguments": json.dumps(arguments)}}]}


def result(n: int, text: str) -> dict:
    return {"role": "tool", "tool_call_id": f"c{n}", "content": text}


def log_lines(n: int, count: int) -> str:
    return "\n".join(f"{n}.{i}: def handler_{i}(req): return process(req, limit={100 + i})" for i in range(count))


def archived(memory: Memory, tenant: str) -> dict[str, str]:
    memory.settle()  # the archive runs on a worker thread: read once it is done, as every read of memory does
    texts: dict[str, list[str]] = {}
    for item in memory.services.vectors.scroll(SearchFilter(tenant=tenant, kinds=["turn"])):
        texts.setdefault(item.source_id, []).append(item.text)
    return {sid: "\n".join(parts) for sid, parts in texts.items()}


def test_a_tool_result_compacted_out_of_the_view_is_recalled_whole_with_its_tool_and_arguments(settings):
    with Memory(settings=settings, tenant="acme") as memory:
        memory.add_message("loop", {"role": "system", "content": "You are a coding agent."}, retention="strict")
        memory.add_message("loop", {"role": "user", "content": "Fix the flaky payment tests."})
        memory.session("loop").configure(window_tokens=1500)
        # The fact sits past the first 2,000 characters of a long result (an archive that cut results lost it).
        memory.add_message("loop", call(0, "run_tests", path="tests/pay"))
        memory.add_message("loop", result(0, log_lines(0, 40) + "\nFATAL checksum mismatch, error code 0x9D95A9"))
        for n in range(1, 12):
            memory.add_message("loop", call(n, "read_file", path=f"src/pay/mod_{n}.py"))
            memory.add_message("loop", result(n, log_lines(n, 20)))
        view = "\n".join(str(m.get("content")) for m in memory.view("loop", budget=1500))
        assert "0x9D95A9" not in view  # compacted out of the agent's view
        turn = archived(memory, "acme")["loop/m2"]
        assert "[tool_use:run_tests]" in turn and '"path": "tests/pay"' in turn and "0x9D95A9" in turn
        prompt = memory.prompt("Which error code did the checksum mismatch report?", budget=2000,
                               session_id="loop").prompt
        assert "0x9D95A9" in prompt and "[S:loop/m2]" in prompt


def test_forgettable_results_stay_out_and_a_late_result_is_archived_named_by_its_tool(settings):
    with Memory(settings=settings, tenant="acme") as memory:
        memory.add_message("loop", {"role": "user", "content": "Tidy the repository."})
        memory.add_message("loop", call(0, "list_dir", path="."))
        memory.add_message("loop", result(0, "README.md setup.py"), retention="forgettable")
        # A forgettable call whose result is kept: the result is read by its tool and arguments, not the words.
        memory.add_message("loop", call(1, "grep", pattern="retry"), retention="forgettable")
        memory.add_message("loop", result(1, "src/net/backoff_loop_48.py:12: def retry():"))
        memory.add_message("loop", call(2, "run_tests", path="tests"))  # its result comes late
        for n in range(22):
            memory.add_message("loop", {"role": "user" if n % 2 == 0 else "assistant", "content": f"note {n}"})
        memory.add_message("loop", result(2, "benchmark finished: p95 latency 226.4 ms"))
        turns = archived(memory, "acme")
        assert turns["loop/m1"] == 'Step 0: running list_dir.\n[tool_use:list_dir] {"path": "."}'.replace(
            "Step", "[assistant] Step")
        assert turns["loop/m3"] == ('[tool_use:grep] {"pattern": "retry"}\n'
                                    "[tool_result:grep] src/net/backoff_loop_48.py:12: def retry():")
        assert turns["loop/m5"].endswith('[tool_use:run_tests] {"path": "tests"}')  # settled without its result
        late = "loop/m28"
        assert turns[late] == "[tool_result:run_tests] benchmark finished: p95 latency 226.4 ms"
        assert sorted(turns) == sorted(["loop/m0", "loop/m1", "loop/m3", "loop/m5", late]
                                       + [f"loop/m{6 + n}" for n in range(22)])


def test_the_graph_reads_a_tool_loops_prose_not_its_payloads(settings):
    listing = '{"retry_policy": {"max_attempts": 5, "backoff_ms": 200}, "owner": "payments"}'
    with Memory(settings=settings, tenant="acme") as memory:
        memory.add_message("loop", {"role": "user", "content": "Why does the refund job retry so often?"})
        memory.add_message("loop", {"role": "assistant", "content": "Maria Lopez leads the billing team at Stripe. "
                                    "I will read the retry settings.", "tool_calls": [
            {"id": "c0", "type": "function", "function": {"name": "read_file",
                                                          "arguments": json.dumps({"path": "config/retry.json"})}}]})
        memory.add_message("loop", result(0, listing))
        memory.add_message("loop", call(1, "grep", pattern="retry_policy"))
        memory.add_message("loop", result(1, log_lines(1, 12) + "\nmatch: the retry loop is implemented in "
                                             "src/net/backoff_loop_48.py at line 237."))
        memory.add_message("loop", {"role": "assistant", "content": "The retry policy allows five attempts."})
        memory.settle()
        assert "loop/m1" in archived(memory, "acme") and "loop/m3" in archived(memory, "acme")
        names = {name.casefold() for name in memory.services.graph.entity_names("acme")}
        # JSON keys, code and pieces of paths were read as entities when the payloads were read whole
        noise = {"retry_policy", "max_attempts", "backoff_ms", "owner", "path", "pattern", "config", "json", "src", "py"}
        assert not names & noise
        assert not [n for n in names if "(" in n or "=" in n or "handler_" in n or "tool_" in n or n[0].isdigit()]
        facts = {(f["subject"], f["object"]) for f in memory.services.graph.subject_facts(
            "acme", ["Maria Lopez", "retry loop"])}
        assert ("Maria Lopez", "Stripe") in facts  # the call's own words
        assert ("retry loop", "src/net/backoff_loop_48.py") in facts  # a result's line of prose


def test_the_graph_reads_an_agents_plain_messages_but_their_code(settings):
    with Memory(settings=settings, tenant="acme") as memory:
        memory.add_message("chat", {"role": "user", "content": (
            "Maria Lopez leads the billing team at Stripe. The refund handler fails:\n"
            "```python\ndef handler_9(req):\n    return process(req, limit=923)\n```")})
        memory.add_message("chat", {"role": "assistant", "content": (
            "I understand, let me look at this. 3.0: def handler_3(req): return process(req, limit=123) "
            "3.1: def handler_17(req): return process(req, limit=45)")})
        memory.add_message("chat", {"role": "user", "content": "第12步：我将对src/pay/mod_47.py运行read_file，检查计划的下一部分。"})
        memory.settle()
        assert sorted(archived(memory, "acme")) == ["chat/m0", "chat/m1", "chat/m2"]
        names = {name.casefold() for name in memory.services.graph.entity_names("acme")}
        assert not names & {"src", "pay", "mod", "py", "read", "file", "req", "process", "python", "def"}
        assert not [n for n in names if "(" in n or "=" in n or "handler" in n or n[0].isdigit()]
        assert "src/pay/mod_47.py" in names  # the path whole
        facts = {(f["subject"], f["object"]) for f in memory.services.graph.subject_facts("acme", ["Maria Lopez"])}
        assert ("Maria Lopez", "Stripe") in facts
