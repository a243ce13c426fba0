"""Working memory in an agent's tool loop: levels act on the agent's own steps, every drop leaves a
marker, strict results stay whole, pending calls stay visible, identifiers are validated."""

from __future__ import annotations

import json

import pytest

from agent_memory.conversation import CompactionConfig, SessionManager, StructuralSummarizer
from agent_memory.conversation import messages as msgs
from agent_memory.conversation.significance import entities, identifiers
from agent_memory.conversation.summarize import validate
from agent_memory.core.tokens import TiktokenCounter

COUNTER = TiktokenCounter("cl100k_base")
TRACE = ("Traceback (most recent call last):\n  File \"src/billing/invoice.py\", line 88, in total\n"
         "    return sum(line.amount for line in lines)\nTypeError: unsupported operand type(s) for +: 'int' and"
         " 'NoneType'\nSegfault at 0x000007 in libcalc v2.3.1, error E4471")


@pytest.fixture()
def manager(tmp_path):
    mgr = SessionManager(tmp_path, COUNTER, synchronous="OFF")
    yield mgr
    mgr.close()


def call(n: int, name: str, args: dict) -> dict:
    return {"role": "assistant", "content": f"Step {n}: I will run {name} to check the next file.",
            "tool_calls": [{"id": f"c{n}", "type": "function",
                            "function": {"name": name, "arguments": json.dumps(args)}}]}


def result(n: int, text: str) -> dict:
    return {"role": "tool", "tool_call_id": f"c{n}", "content": text}


def tool_loop(session, steps: int = 200, strict_at: int = 5) -> None:
    """One user instruction per 40 steps, then reasoning + tool call + tool result; one big result now and
    then (a whole file) pushes utilization past two levels at once."""
    tools = ["read_file", "grep", "run_tests", "list_dir"]
    for n in range(steps):
        if n % 40 == 0:
            session.append({"role": "user", "content": f"Task {n // 40}: fix the failing invoice tests in "
                                                       f"src/billing (keep the public API, ticket BIL-{700 + n})."},
                           retention="strict")
        name = tools[n % len(tools)]
        session.append(call(n, name, {"path": f"src/billing/mod_{n}.py"}))
        body = (f"line {n}: amount = {n * 13} EUR for account A-{n:04d}. " * (85 if n % 23 == 22 else 6))
        session.append(result(n, TRACE if n == strict_at else body),
                       retention="strict" if n == strict_at else ("forgettable" if name == "list_dir" else "fuzzy"))
        thought = f"Read {name} output for step {n}. The amount is {n * 13} EUR. Nothing else changes. "
        if n % 5 == 0:  # now and then a long reasoning step (what the light level condenses)
            thought += " ".join(f"Option {k} would touch module {k} and needs a review first." for k in range(8))
        session.append({"role": "assistant", "content": thought + "I keep the API stable."})


def orphans(view) -> set[str]:
    calls = {cid for m in view for cid in msgs.call_ids(m)}
    results = {rid for m in view for rid in msgs.result_ids(m)}
    return calls ^ results


def test_a_200_step_tool_loop_compacts_at_levels_1_to_3_with_markers_and_no_orphans(manager):
    session = manager.session("loop", config=CompactionConfig(window_tokens=6000))
    tool_loop(session)
    stats = session.stats()
    assert {"1", "2", "3"} <= set(stats["tiers"]), stats["tiers"]
    assert "4" not in stats["tiers"]  # the emergency level was never needed
    view = session.view(6000)
    assert session.count_view(view) <= 6000 and not orphans(view)
    # Every message is in the view (as shown), under a summary, or under a drop marker: no silent drop.
    covered = set()
    for row in session.summaries() + session.markers():
        covered |= set(range(row["first_seq"], row["last_seq"] + 1))
    visible = {e.seq for e in session._log.entries if e.shown in view}
    assert covered | visible >= {e.seq for e in session._log.entries}
    markers = session.markers()
    assert markers and stats["drop_markers"] == len(markers)
    text = "\n".join(m["content"] for m in view if isinstance(m.get("content"), str))
    assert all(m["text"].startswith("[Dropped m") and "archived" in m["text"] for m in markers)
    # Markers the header has no room for are folded into one line; either way the view names the drops.
    assert ("[Dropped m" in text or "dropped " in text) and "list_dir x" in text and "archived" in text
    # The last user message is verbatim, and so is the newest step.
    assert view[-1] == session.messages()[-1]
    assert any(m.get("content", "").startswith("Task 4:") for m in view)


def test_a_strict_stack_trace_is_never_micro_truncated(manager):
    session = manager.session("trace", config=CompactionConfig(window_tokens=None))
    tool_loop(session, steps=30)
    shown = {e.seq: e.shown for e in session._log.entries}
    strict = [e for e in session._log.entries if e.message.get("content") == TRACE]
    assert len(strict) == 1 and shown[strict[0].seq]["content"] == TRACE
    truncated = [m for m in shown.values() if m["role"] == "tool" and msgs.is_truncated(m["content"])]
    assert len(truncated) == 30 - 3 - 1  # every other old result is micro-truncated
    # ... and keeps its identifiers visible: "[truncated: grep result, 812 chars; kept: ids: A-0001]"
    assert all("; kept: ids: A-00" in m["content"] for m in truncated), truncated[0]
    marker = msgs.micro_compact([call(1, "run_tests", {}), result(1, "collected 40 items\n" + "." * 500 + "\n"
                                 "FAILED tests/test_pay.py::test_total - TypeError\n1 failed, 39 passed"),
                                 call(2, "grep", {}), result(2, "x")], keep=1)[1]["content"]
    assert marker == ("[truncated: run_tests result, 588 chars; kept: FAILED tests/test_pay.py::test_total - "
                      "TypeError | 1 failed, 39 passed]")  # the path is in a kept line: not repeated
    assert TRACE in [m.get("content") for m in session.view(100_000)]


def test_developer_role_is_an_instruction(manager):
    session = manager.session("dev")
    session.append({"role": "user", "content": "hello"})
    session.append({"role": "developer", "content": "Answer in French."})
    session.append({"role": "assistant", "content": "Bonjour."})
    view = session.view(1000)
    assert view[0] == {"role": "developer", "content": "Answer in French."}
    assert session.stats()["messages"] == 3


def test_a_pending_tool_call_shows_in_the_view(manager):
    session = manager.session("pending")
    session.append({"role": "user", "content": "What is in config.yaml?"})
    session.append(call(1, "read_file", {"path": "config.yaml"}))
    view = session.view(1000)
    assert not orphans(view)  # a provider accepts it
    assert "[pending tool call: read_file" in view[-1]["content"] and "config.yaml" in view[-1]["content"]
    session.append(result(1, "port: 8004"))
    view = session.view(1000)
    assert view[-2]["tool_calls"][0]["id"] == "c1" and view[-1]["content"] == "port: 8004"
    # Anthropic blocks: the open tool_use becomes a text block.
    session.append({"role": "assistant", "content": [{"type": "text", "text": "Checking."},
                                                     {"type": "tool_use", "id": "t9", "name": "grep",
                                                      "input": {"q": "port"}}]})
    last = session.view(1000)[-1]
    assert last["content"][0]["text"] == "Checking." and "[pending tool call: grep" in last["content"][1]["text"]
    assert not orphans(session.view(1000))


def test_validation_counts_identifiers():
    span = "The crash: " + TRACE + " Config at /etc/app/config.yaml."
    found = identifiers(span)
    assert {"0x000007", "src/billing/invoice.py", "v2.3.1", "E4471", "/etc/app/config.yaml"} <= found
    assert identifiers("keep off vendor/billing_38/ at 60 km/h, 1/2 of it, on 2024/05/01 and/or later") == {
        "vendor/billing_38/"}
    check = validate(span, "The invoice total crashed in libcalc (TypeError).", 120, 12, "llm")
    assert check.identifiers_kept == 0.0 and "0x000007" in check.lost
    kept = validate(span, "TypeError at 0x000007 in src/billing/invoice.py, libcalc v2.3.1, E4471, "
                          "/etc/app/config.yaml", 120, 30, "llm")
    assert kept.identifiers_kept == 1.0
    assert not check.acceptable(0, 0, 0, 0.5) and kept.acceptable(0, 0, 0, 0.5)


def test_the_structural_digest_ends_on_sentence_boundaries_and_keeps_identifiers():
    span = [{"role": "user", "content": "Please fix the crash. " + TRACE},
            *[{"role": "assistant", "content": f"Confirmed: invoice {i} costs {i * 11} EUR on 2024-05-0{i % 9 + 1}. "
                                              "The customer asked for a refund and we decided to approve it."}
              for i in range(12)]]
    digest = StructuralSummarizer().summarize(span, max_tokens=60)
    assert len(digest) <= 240 and "0x000007" in digest
    for line in digest.splitlines():
        assert not line.endswith(("-", ",")) and (line.endswith((".", "...", ":")) or ":" in line), line


def test_the_entity_header_drops_verbs_and_month_names(manager):
    session = manager.session("entities")
    for text in ["Fix the invoice for Acme in March.", "Read the Order list from Lyon.",
                 "Order 40 units of the X-300 for Anna by May 3."]:
        session.append({"role": "user", "content": text})
    assert not {"Fix", "Read", "Order", "March", "May"} & entities(" ".join(session.entities()))
    header = next(m["content"] for m in session.view(1000) if m["content"].startswith("[Key entities]"))
    names = set(header.removeprefix("[Key entities] ").split(", "))
    assert {"Acme", "Lyon", "X-300", "Anna"} <= names and not {"Fix", "Read", "Order", "March", "May"} & names
