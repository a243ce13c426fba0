"""Property tests over random sessions: mixed roles, retention classes, tool pairs in both formats."""

from __future__ import annotations

import json
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_memory.conversation import CompactionConfig, SessionManager, micro_compact
from agent_memory.conversation import messages as msgs
from agent_memory.core.errors import BudgetError
from agent_memory.core.tokens import TiktokenCounter

COUNTER = TiktokenCounter("cl100k_base")
VOCAB = ["alpha", "Berlin", "X-200", "budget", "42", "3.5", "we", "decided", "I", "prefer", "tea", "report",
         "2024-05-01", "Alice", "deploy", "the", "server", "error", "retry", "数据", "北京", "ok"]

words = st.lists(st.sampled_from(VOCAB), min_size=1, max_size=40).map(" ".join)
retention = st.sampled_from([None, "forgettable", "fuzzy", "strict"])
op = st.one_of(
    st.tuples(st.just("system"), words, st.none()),
    st.tuples(st.just("user"), words, retention),
    st.tuples(st.just("assistant"), words, retention),
    st.tuples(st.just("openai_tools"), st.lists(words, min_size=1, max_size=3), retention),
    st.tuples(st.just("anthropic_tools"), st.lists(words, min_size=1, max_size=3), retention),
    # A call whose results come after a user message (a late tool result).
    st.tuples(st.just("late_tools"), st.lists(words, min_size=1, max_size=3), retention),
)


def expand(ops, ids):
    """Turn generated ops into (message, retention) pairs; tool calls always get their results."""
    out = []
    for kind, payload, klass in ops:
        if kind in ("system", "user", "assistant"):
            out.append(({"role": kind, "content": payload}, klass))
        elif kind in ("openai_tools", "late_tools"):
            calls = [{"id": f"call_{next(ids)}", "type": "function",
                      "function": {"name": f"tool{i}", "arguments": json.dumps({"q": p[:20]})}}
                     for i, p in enumerate(payload)]
            out.append(({"role": "assistant", "content": None, "tool_calls": calls}, klass))
            if kind == "late_tools":
                out.append(({"role": "user", "content": f"meanwhile: {payload[0]}"}, klass))
            for call, result in zip(calls, payload):
                out.append(({"role": "tool", "tool_call_id": call["id"], "content": result * 3}, klass))
        else:
            uses = [{"type": "tool_use", "id": f"toolu_{next(ids)}", "name": f"fn{i}", "input": {"q": p[:20]}}
                    for i, p in enumerate(payload)]
            out.append(({"role": "assistant", "content": [{"type": "text", "text": "checking"}, *uses]}, klass))
            out.append(({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": u["id"], "content": p * 3} for u, p in zip(uses, payload)
            ]}, klass))
    return out


def check_pairs(view):
    calls = {cid for m in view for cid in msgs.call_ids(m)}
    results = {rid for m in view for rid in msgs.result_ids(m)}
    assert calls == results, f"orphans: calls {calls - results}, results {results - calls}"
    # As chat APIs require: a step's results follow it before any other message, late ones too.
    n = 0
    while n < len(view):
        issued, answered = set(msgs.call_ids(view[n])), set()
        n += 1
        while issued and n < len(view) and msgs.result_ids(view[n]) and answered != issued:
            answered |= set(msgs.result_ids(view[n]))
            n += 1
        assert answered == issued, f"calls {issued - answered} not answered right after their step"


@pytest.fixture(scope="module")
def manager(tmp_path_factory):
    mgr = SessionManager(tmp_path_factory.mktemp("props"), COUNTER, synchronous="OFF")
    yield mgr
    mgr.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(ops=st.lists(op, min_size=1, max_size=25), last=words, budget=st.integers(120, 2500),
       window=st.one_of(st.none(), st.integers(300, 3000)), views_every=st.integers(1, 6))
def test_view_invariants(manager, ops, last, budget, window, views_every):
    import itertools

    session = manager.session(uuid.uuid4().hex, config=CompactionConfig(window_tokens=window))
    pairs = expand(ops, itertools.count()) + [({"role": "user", "content": last}, "strict")]
    for i, (message, klass) in enumerate(pairs):
        session.append(message, retention=klass)
        if i % views_every == 0 or i == len(pairs) - 1:
            check_view(session, [m for m, _ in pairs[: i + 1]], budget,
                       strict={n for n, (_, k) in enumerate(pairs[: i + 1]) if k == "strict"})


NOTES = ("[Context Compressed]", "[Key entities]", "[condensed: ", "[Not in this view")


def check_view(session, appended, budget, strict=()):
    systems = [m for m in appended if m["role"] == "system"]
    users = [m for m in appended if msgs.is_user_turn(m)]
    try:
        view = session.view(budget)
    except BudgetError:
        # Only allowed when the must-keep messages alone are over budget: the instructions, the last user
        # message and the newest unit (the pending step).
        must = sum(session.message_tokens(m) for m in systems)
        must += sum(session._shown(u)[1] for u in session._protected_units())
        assert must > budget
        return
    assert session.count_view(view) <= budget
    check_pairs(view)
    for system in systems:
        assert system in view
    if users:
        assert users[-1] in view
    # The newest message is always visible: as appended (or micro-compacted), or as a pending-call note, or
    # with its tool results cut to fit the budget.
    newest = session._log.entries[-1]
    assert newest.is_system or newest.shown in view or any(
        "[pending tool call:" in msgs.readable([m]) or "characters cut to fit the view budget]" in str(m)
        for m in view)
    # The view's tool results are the micro-compacted ones; text messages are never altered.
    for message in view:
        if message["role"] in ("user", "assistant", "system") and isinstance(message.get("content"), str):
            assert (message in appended or message["content"].startswith(NOTES)
                    or "[pending tool call:" in message["content"])
    assert session.messages() == appended  # the history itself is never rewritten
    # Incremental micro-compaction on append matches the pure function over the whole history,
    # strict messages and the protected units (the newest step, the last user turn's) spared.
    entries = session._log.entries
    protected = {i for i, e in enumerate(entries) if any(e.unit is u for u in session._protected_units())}
    assert [e.shown for e in entries] == micro_compact(appended, session.config.keep_tool_results,
                                                       spare=set(strict) | protected)


@settings(max_examples=80, deadline=None)
@given(ops=st.lists(op, min_size=1, max_size=30), keep=st.integers(0, 5))
def test_micro_compaction_idempotent_and_text_untouched(ops, keep):
    import itertools

    history = [m for m, _ in expand(ops, itertools.count())]
    once = micro_compact(history, keep)
    assert micro_compact(once, keep) == once
    assert len(once) == len(history)
    results = [rid for m in history for rid in msgs.result_ids(m)]
    names = {k: v for m in history for k, v in msgs.call_names(m).items()}
    recent = set(results[max(0, len(results) - keep):]) if keep else set()
    for before, after in zip(history, once):
        assert msgs.call_ids(before) == msgs.call_ids(after)
        assert msgs.result_ids(before) == msgs.result_ids(after)
        if not msgs.result_ids(before):
            assert before == after  # user/assistant/system text untouched
        elif before["role"] == "tool":
            truncated = msgs.is_truncated(after["content"])
            old = before["tool_call_id"] not in recent
            if truncated:  # a marker only ever shortens
                assert old and len(after["content"]) < len(before["content"])
            else:  # kept whole: recent, or a result no longer than its marker
                assert not old or msgs.truncate_results(before, {before["tool_call_id"]}, names) is before
            if truncated:
                assert f"{len(before['content'])} chars" in after["content"]
    assert history == [m for m, _ in expand(ops, itertools.count())]  # input not mutated
