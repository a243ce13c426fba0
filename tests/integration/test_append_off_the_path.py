"""An append returns once its message is stored; the archive (an agent's tool payloads embedded) runs on a worker
thread, and the next read of the tenant's memory waits for it (agent_memory/conversation/working_memory.py).
A compaction summary's lines are embedded by that pass and stored with it (conversation/summary_vectors.py)."""

from __future__ import annotations

import os
import threading

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")

from agent_memory import Memory  # noqa: E402
from agent_memory.conversation.summary_vectors import summary_lines  # noqa: E402
from agent_memory.core.records import SearchFilter  # noqa: E402

RESULT = "FAILED tests/test_ledger.py::test_refund - KeyError: 'ZX-4471' raised in pay/ledger.py line 212"


def archived(memory: Memory, tenant: str) -> set[str]:
    return {i.source_id for i in memory.services.vectors.scroll(SearchFilter(tenant=tenant, kinds=["turn"]))}


def gated(memory: Memory) -> threading.Event:
    """Hold every archive pass of ``memory`` until the returned event is set."""
    opened = threading.Event()
    store = memory._promote_turns

    def held(turns):
        opened.wait(60)
        store(turns)

    memory._promote_turns = held  # read when working memory is built, at the first append
    return opened


def appends_reading_the_mark(memory: Memory, monkeypatch) -> list[tuple[str, str]]:
    """The sessions whose stored archive mark the appends (the main thread) read from here on, one entry a read."""
    store = memory.working_memory.sessions.store
    read: list[tuple[str, str]] = []
    stored_mark = store.archived_through

    def counted(key):
        if threading.current_thread() is threading.main_thread():
            read.append(key)
        return stored_mark(key)

    monkeypatch.setattr(store, "archived_through", counted)
    return read


def tool_loop(memory: Memory, session: str, tenant: str) -> None:
    memory.add_message(session, {"role": "user", "content": "Why does the refund test fail?"}, tenant=tenant)
    memory.add_message(session, {"role": "assistant", "content": "I will run the tests.", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "run_tests", "arguments": "{}"}}]}, tenant=tenant)
    memory.add_message(session, {"role": "tool", "tool_call_id": "c1", "content": RESULT}, tenant=tenant)


def test_an_append_returns_before_its_archive_and_a_question_right_after_finds_the_tool_result(settings):
    with Memory(settings=settings, tenant="acme") as memory:
        opened = gated(memory)
        tool_loop(memory, "loop", "acme")  # returns while every pass is held
        assert archived(memory, "acme") == set()
        threading.Timer(0.5, opened.set).start()
        result = memory.prompt("Which key did the refund test raise in ledger.py?", session_id="loop")
        assert "ZX-4471" in result.prompt  # the question waited for the pass
        assert {"loop/m0", "loop/m1"} <= archived(memory, "acme")
        assert not [d for d in result.decisions if d.reason == "archive catching up"]


def test_a_question_of_one_tenant_never_waits_for_another_tenants_archive(settings):
    with Memory(settings=settings, tenant="acme") as memory:
        memory.catch_up_wait_s = 30
        opened = gated(memory)
        tool_loop(memory, "loop", "acme")
        try:
            result = memory.prompt("Which key did the refund test raise?", tenant="globex")
            assert "ZX-4471" not in result.prompt
            assert not opened.is_set() and archived(memory, "acme") == set()  # answered while acme's pass is held
            assert not [d for d in result.decisions if d.reason == "archive catching up"]
        finally:
            opened.set()
        assert "ZX-4471" in memory.prompt("Which key did the refund test raise?", session_id="loop").prompt


def test_a_forget_waits_for_the_queued_archive_so_the_turn_does_not_come_back(settings):
    with Memory(settings=settings, tenant="acme") as memory:
        opened = gated(memory)
        tool_loop(memory, "loop", "acme")
        threading.Timer(0.5, opened.set).start()
        memory.forget_prefix("loop/")
        memory.settle()
        assert archived(memory, "acme") == set()


def test_the_archive_pass_stores_each_compaction_summarys_line_vectors(settings):
    with Memory(settings=settings, tenant="acme") as memory:
        memory.working_memory.embed_summary_lines = True  # as when the served settings rank summaries by meaning
        memory.session("ops").configure(window_tokens=400)
        for n in range(24):
            memory.add_message("ops", {"role": "user", "content": f"Step {n}: the staging database on port "
                                                                  f"{6500 + n} answered slowly; the billing export "
                                                                  f"waits for it."})
        memory.settle()
        summaries = memory.working_memory.summaries("acme", "ops")
        assert summaries, "the window made compaction summarize"
        stored = memory.working_memory.summary_line_vectors("acme", "ops")
        assert set(stored) == {s.text for s in summaries}
        for item in summaries:
            lines = summary_lines(item.text) or [item.text]
            vectors = stored[item.text]
            assert len(vectors.spaces) == len(lines) == vectors.vectors.shape[0]
            again = memory.services.embedder.embed_documents(lines, vectors.spaces)
            assert (abs(again - vectors.vectors) < 1e-5).all()  # the vectors a question would have embedded
        store = memory.working_memory.sessions.store
        assert store.summaries_without_line_vectors(("acme/ops", "")) == []


def test_appends_far_ahead_of_their_archive_wait_for_it_so_a_questions_wait_stays_bounded(settings):
    from agent_memory.conversation.working_memory import ARCHIVE_BACKLOG_MESSAGES

    with Memory(settings=settings, tenant="acme") as memory:
        opened = gated(memory)
        appended: list[int] = []

        def append_many():
            for n in range(ARCHIVE_BACKLOG_MESSAGES + 10):
                appended.append(memory.add_message("fast", {"role": "user", "content": f"Reading {n}: 7 bar."}))

        appender = threading.Thread(target=append_many)
        appender.start()
        try:
            pause = threading.Event()
            for _ in range(600):  # until the appender reaches the bound (each append returns at once before it)
                if len(appended) >= ARCHIVE_BACKLOG_MESSAGES:
                    break
                pause.wait(0.1)
            appender.join(1.0)
            # The append of m48, stored, waits for the archive held since m0: 49 messages behind.
            assert appender.is_alive() and len(appended) == ARCHIVE_BACKLOG_MESSAGES
        finally:
            opened.set()
            appender.join(120)
        assert len(appended) == ARCHIVE_BACKLOG_MESSAGES + 10
        memory.settle()
        assert len(archived(memory, "acme")) == ARCHIVE_BACKLOG_MESSAGES + 10


def test_a_document_write_waits_for_its_own_tenants_archive_never_for_anothers(settings):
    with Memory(settings=settings, tenant="acme") as memory:
        memory.catch_up_wait_s = 30
        opened = gated(memory)
        tool_loop(memory, "loop", "acme")
        threading.Timer(5.0, opened.set).start()  # a write that waited for acme's pass would return after this
        memory.add("Globex ships the Q3 ledger on Fridays.", source_id="notes/globex", tenant="globex")
        assert not opened.is_set() and archived(memory, "acme") == set()  # stored while acme's pass is held
        memory.add("Acme's refund tests run nightly.", source_id="notes/acme")
        assert {"loop/m0", "loop/m1"} <= archived(memory, "acme")  # the write came after the appends' archive


def test_an_append_reads_the_stored_watermark_once_per_session_not_per_message(settings, monkeypatch):
    with Memory(settings=settings, tenant="acme") as memory:
        opened = gated(memory)
        read_by_appends = appends_reading_the_mark(memory, monkeypatch)
        try:
            for n in range(6):
                memory.add_message("chat", {"role": "user", "content": f"Note {n}: the pump runs at 7 bar."})
            memory.add_message("other", {"role": "user", "content": "A second session."})
        finally:
            opened.set()
        assert read_by_appends == [("acme/chat", ""), ("acme/other", "")]
        memory.settle()
        assert len(archived(memory, "acme")) == 7


def test_a_session_deleted_and_started_anew_reads_its_watermark_from_the_store_again(settings, monkeypatch):
    with Memory(settings=settings, tenant="acme") as memory:
        for n in range(3):
            memory.add_message("chat", {"role": "user", "content": f"Note {n}: the pump runs at 7 bar."})
        memory.settle()
        read_by_appends = appends_reading_the_mark(memory, monkeypatch)
        memory.add_message("chat", {"role": "user", "content": "Note 3: the valve is shut."})
        assert read_by_appends == []  # the mark this process raised serves the append
        memory.delete_session("chat")
        memory.add_message("chat", {"role": "user", "content": "A new start: the filter is clean."})
        assert read_by_appends == [("acme/chat", "")]  # the deleted session's mark went with it
        memory.settle()
        assert "chat/m0" in archived(memory, "acme")
