"""The newest tool step in a view: its results are never micro-compacted, one bigger than the view budget
is cut (in the view only) instead of failing every view, and a view hands out copies."""

from __future__ import annotations

import copy
import re

import pytest

from agent_memory.conversation import CompactionConfig, SessionManager
from agent_memory.conversation import messages as msgs
from agent_memory.core.errors import BudgetError
from agent_memory.core.tokens import TiktokenCounter

COUNTER = TiktokenCounter("cl100k_base")
BIG = "depot line of results 42\n" * 1500  # ~13.6k tokens
CUT = re.compile(r"\[\.\.\. (\d+) of (\d+) characters cut to fit the view budget\]$")


@pytest.fixture()
def manager(tmp_path):
    mgr = SessionManager(tmp_path, COUNTER, synchronous="OFF")
    yield mgr
    mgr.close()


def openai_step(session, n: int, results: list[str], name: str = "read_file") -> None:
    session.append({"role": "assistant", "content": None, "tool_calls": [
        {"id": f"c{n}_{i}", "type": "function", "function": {"name": name, "arguments": "{}"}}
        for i in range(len(results))]})
    for i, text in enumerate(results):
        session.append({"role": "tool", "tool_call_id": f"c{n}_{i}", "content": text})


def anthropic_step(session, n: int, results: list[str]) -> None:
    session.append({"role": "assistant", "content": [
        {"type": "tool_use", "id": f"t{n}_{i}", "name": "read_file", "input": {}} for i in range(len(results))]})
    session.append({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": f"t{n}_{i}", "content": text} for i, text in enumerate(results)]})


def tool_texts(view) -> list[str]:
    out = []
    for m in view:
        if m["role"] == "tool":
            out.append(m["content"])
        elif isinstance(m.get("content"), list):
            out += [msgs.content_text(b["content"]) for b in m["content"] if b.get("type") == "tool_result"]
    return out


def pairs_intact(view) -> bool:
    calls = [cid for m in view for cid in msgs.call_ids(m)]
    results = [rid for m in view for rid in msgs.result_ids(m)]
    return sorted(calls) == sorted(results)


# -- 1. the newest step is never micro-compacted ------------------------------------------------------
@pytest.mark.parametrize("step", [openai_step, anthropic_step])
def test_parallel_results_of_the_newest_step_are_whole(manager, step):
    session = manager.session("p")
    session.append({"role": "user", "content": "Read the five config files."})
    ports = [f"port: {8000 + i}" for i in range(5)]
    step(session, 0, ports)
    assert tool_texts(session.view(4000)) == ports


@pytest.mark.parametrize("step", [openai_step, anthropic_step])
def test_older_steps_are_micro_compacted_once_a_newer_step_comes(manager, step):
    session = manager.session("p", config=CompactionConfig(keep_tool_results=0))
    session.append({"role": "user", "content": "Read the config files."})
    long = [f"setting_{i} = {'value ' * 30}" for i in range(5)]
    step(session, 0, long)
    assert tool_texts(session.view(20000)) == long  # still the newest step
    step(session, 1, ["port: 8000"])
    texts = tool_texts(session.view(20000))
    assert all(msgs.is_truncated(t) for t in texts[:5])  # older step: micro-compacted now
    assert texts[5] == "port: 8000"


def test_a_system_message_after_the_step_keeps_it_whole(manager):
    session = manager.session("p", config=CompactionConfig(keep_tool_results=0))
    session.append({"role": "user", "content": "Read the config files."})
    long = [f"setting_{i} = {'value ' * 30}" for i in range(3)]
    openai_step(session, 0, long)
    session.append({"role": "system", "content": "Reminder: answer in English."})
    assert tool_texts(session.view(20000)) == long


def test_a_marker_never_replaces_a_shorter_result(manager):
    session = manager.session("p", config=CompactionConfig(keep_tool_results=0))
    session.append({"role": "user", "content": "Check the ports."})
    for n in range(3):
        openai_step(session, n, [f"port: {8000 + n}"])
    assert tool_texts(session.view(4000)) == ["port: 8000", "port: 8001", "port: 8002"]


# -- 2. a newest result bigger than the budget is cut, not a BudgetError ------------------------------
@pytest.mark.parametrize("budget", [8000, 1000, 300, 100])
@pytest.mark.parametrize("step", [openai_step, anthropic_step])
def test_oversized_newest_result_is_cut_to_fit(manager, step, budget):
    session = manager.session("s")
    session.append({"role": "system", "content": "You are a build agent."})
    session.append({"role": "user", "content": "Grep the depot for 42."})
    step(session, 0, ["an earlier result " * 20])
    step(session, 1, [BIG])
    view = session.view(budget)
    assert session.count_view(view) <= budget
    assert view[0]["content"] == "You are a build agent."
    assert {"role": "user", "content": "Grep the depot for 42."} in view
    assert pairs_intact(view)
    last = tool_texts(view)[-1]
    cut, total = map(int, CUT.search(last).groups())
    assert total == len(BIG) and 0 < cut <= total
    assert BIG.startswith(last[: len(last) - len(CUT.search(last).group(0))].rstrip("\n"))
    # Only the view's copy is cut: the stored message and the next roomy view are whole.
    assert tool_texts(session.messages())[-1] == BIG
    assert tool_texts(session.view(30000))[-1] == BIG


def test_parallel_oversized_results_share_the_cut(manager):
    session = manager.session("s")
    session.append({"role": "user", "content": "Grep both depots."})
    openai_step(session, 0, [BIG, BIG.replace("42", "43"), "small result"])
    view = session.view(6000)
    assert session.count_view(view) <= 6000 and pairs_intact(view)
    first, second, small = tool_texts(view)
    assert CUT.search(first) and CUT.search(second) and small == "small result"
    assert abs(len(first) - len(second)) < 200  # neither result is sacrificed for the other


def test_budget_error_when_even_the_markers_cannot_fit(manager):
    session = manager.session("s")
    session.append({"role": "system", "content": "Rules. " * 400})  # a system prompt over the budget
    session.append({"role": "user", "content": "Go."})
    openai_step(session, 0, [BIG])
    with pytest.raises(BudgetError, match=r"need \d+ tokens"):
        session.view(300)


# -- 3. a view hands out copies ------------------------------------------------------------------------
def test_editing_a_view_changes_nothing_in_the_session(manager):
    session = manager.session("s", config=CompactionConfig(keep_tool_results=1))
    session.append({"role": "system", "content": "You are an agent."})
    session.append({"role": "user", "content": "Read the files, then summarize."})
    anthropic_step(session, 0, ["alpha " * 40])
    openai_step(session, 1, ["beta " * 40])
    session.append({"role": "assistant", "content": "Done."})
    history = copy.deepcopy(session.messages())
    before = session.view(20000)
    first = session.view(20000)
    for message in first:
        message["content"] = "EDITED"
        message.pop("tool_calls", None)
    assert session.view(20000) == before
    nested = session.view(20000)
    next(m for m in nested if m["role"] == "user" and isinstance(m["content"], list))["content"][0]["content"] = "X"
    assert session.view(20000) == before
    assert session.messages() == history
