"""The agent write path: every appended turn archived as transcript ingestion stores turns, durably.

Real stores and models; the HTTP API in a thread for the agent that appends over HTTP.
"""

from __future__ import annotations

import os

import httpx
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")

from agent_memory import Memory  # noqa: E402
from agent_memory.api import create_app  # noqa: E402
from agent_memory.api.testing import serve_in_thread, wait_ready  # noqa: E402
from agent_memory.conversation.working_memory import WorkingMemory  # noqa: E402
from agent_memory.core.config import load_settings  # noqa: E402
from agent_memory.core.records import SearchFilter  # noqa: E402
from agent_memory.ingest.pipeline import IngestionPipeline  # noqa: E402
from agent_memory.stores.sqlite_sessions import SessionStore  # noqa: E402

DAY = 86_400
MAY_8_2023 = 1_683_554_160  # 2023-05-08T13:56:00Z


def turns_of(services, tenant: str) -> dict[str, list]:
    found: dict[str, list] = {}
    for item in services.vectors.scroll(SearchFilter(tenant=tenant, kinds=["turn"])):
        found.setdefault(item.source_id, []).append(item)
    return found


def test_forgettable_and_system_messages_stay_out_every_tool_pair_is_one_turn(services):
    memory = WorkingMemory(services, promote=IngestionPipeline(services, summaries=False).ingest_turns)
    try:
        session = memory.session("acme", "build")
        session.append({"role": "system", "content": "You are a coding agent."}, retention="strict")
        session.append({"role": "user", "content": "The build on the release branch fails, please look."})
        session.append({"role": "assistant", "content": "ok"}, retention="forgettable")
        call = {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "run_tests", "arguments": "{}"}}]}
        session.append(call, retention="strict")
        memory.flush()  # the passes run on a worker thread
        assert memory.sessions.store.archived_through(("acme/build", "")) == 2  # the call waits for its result
        session.append({"role": "tool", "tool_call_id": "c1",
                        "content": "Traceback: KeyError 0x000007 in build/cache.py line 88"}, retention="strict")
        ls = {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c2", "type": "function", "function": {"name": "ls", "arguments": "{\"path\": \".\"}"}}]}
        session.append(ls)
        session.append({"role": "tool", "tool_call_id": "c2", "content": "README.md setup.py"})
        session.append({"role": "assistant", "content": "The cache key 0x000007 is missing; I will fix cache.py."})
        memory.flush()
        stored = turns_of(services, "acme")
        assert sorted(stored) == ["build/m1", "build/m3", "build/m5", "build/m7"]  # no system or forgettable
        pair = stored["build/m3"][0]
        assert "run_tests" in pair.text and "KeyError 0x000007" in pair.text
        assert pair.metadata["tools"] == ["run_tests"] and pair.metadata["retention"] == "strict"
        plain = stored["build/m5"][0]  # a plain call and its result: one turn too, named by its tool
        assert plain.text == '[tool_use:ls] {"path": "."}\n[tool_result:ls] README.md setup.py'
        assert plain.metadata["tools"] == ["ls"]
        assert memory.sessions.store.archived_through(("acme/build", "")) == 7
    finally:
        memory.close()


def test_a_crash_between_append_and_archive_loses_nothing_and_writes_nothing_twice(services):
    # The process that appended died before archiving: the messages are in the store, past no mark.
    appender = WorkingMemory(services)  # no archive wired: as if it crashed right after each commit
    session = appender.session("acme", "trip")
    for n, text in enumerate(["We fly to Porto on the 14th.", "Which hotel did you pick?",
                              "The Ribeira Inn, room 212, booked under my maiden name Okafor."]):
        session.append({"role": "user" if n % 2 == 0 else "assistant", "content": text})
    appender.close()
    assert not turns_of(services, "acme")

    written: list[list[str]] = []

    def archive(turns):
        written.append([t.source_id for t in turns])
        return IngestionPipeline(services, summaries=False).ingest_turns(turns)

    restarted = WorkingMemory(services, promote=archive)
    restarted.flush()  # the start's catch-up
    assert written == [["trip/m0", "trip/m1", "trip/m2"]]
    stored = turns_of(services, "acme")
    assert sorted(stored) == ["trip/m0", "trip/m1", "trip/m2"]
    ids = {i.id for items in stored.values() for i in items}
    # A crash after the archive but before the mark: the next pass hands the same turns again, and
    # ingestion skips unchanged content (content hash): the same items, none added.
    restarted.close()
    marks = SessionStore(services.settings.data_dir / "sessions.sqlite3")
    marks._tx([("DELETE FROM archive_marks", ())])
    again = WorkingMemory(services, promote=archive)
    again.flush()
    assert len(written) == 2 and {i.id for items in turns_of(services, "acme").values() for i in items} == ids
    assert marks.archived_through(("acme/trip", "")) == 2
    again.close()
    # A third start finds nothing past the mark: nothing handed to ingestion.
    third = WorkingMemory(services, promote=archive)
    third.flush()
    assert len(written) == 2
    third.close()
    marks.close()


def test_a_message_timestamp_is_the_turns_time_and_a_bad_one_is_refused(tmp_path):
    settings = load_settings(data_dir=tmp_path, triple_extractor="rules", llm_model=None)
    with Memory(settings=settings, tenant="acme") as memory:
        memory.add_message("trip", {"role": "user", "name": "Caroline", "timestamp": "2023-05-08T13:56:00Z",
                                    "content": "I signed up for the pottery class at the Clayworks studio."})
        memory.add_message("trip", {"role": "assistant", "name": "Melanie", "timestamp": MAY_8_2023 + 60,
                                    "content": "Lovely, which day is the class?"})
        with pytest.raises(ValueError, match="timestamp.*'next tuesday'"):
            memory.add_message("trip", {"role": "user", "content": "x", "timestamp": "next tuesday"})
        memory.settle()
        item = turns_of(memory.services, "acme")["trip/m0"][0]
        assert item.created_at == MAY_8_2023 and item.metadata["speaker"] == "Caroline"
        assert item.metadata["timestamp"].startswith("2023-05-08T13:56")
        assert "timestamp" not in memory.session("trip").messages()[0]  # the time is the row's, not the body's
        result = memory.prompt("Which pottery studio did Caroline sign up at?", budget=600)
        assert "[S:trip/m0]" in result.prompt and "8 May 2023" in result.prompt  # the date heading
        # Time filters count from when it was said.
        late = memory.prompt("Which pottery studio did Caroline sign up at?", budget=600,
                             filters={"created_after": MAY_8_2023 + DAY})
        assert "[S:trip/m0]" not in late.prompt


def test_a_session_id_used_again_after_a_delete_that_kept_the_archive_never_replaces_an_old_turn(tmp_path):
    settings = load_settings(data_dir=tmp_path, triple_extractor="rules", llm_model=None)
    with Memory(settings=settings, tenant="acme") as memory:
        memory.add_message("r", {"role": "user", "content": "My locker code is 4471."})
        memory.add_message("r", {"role": "assistant", "content": "Noted: locker 4471."})
        memory.delete_session("r")  # the session goes; what long-term memory archived stays
        memory.add_message("r", {"role": "user", "content": "What is the weather in Oslo?"})
        memory.settle()
        turns = turns_of(memory.services, "acme")
        assert "4471" in turns["r/m0"][0].text and "4471" in turns["r/m1"][0].text
        assert "Oslo" in turns["r/m2"][0].text
        assert memory.session("r").next_seq == 3
        # The live session's recent turns are its own, numbered on.
        recent = memory.working_memory.recent_turns("acme", "r", 5)
        assert [t.source_id for t in recent] == ["r/m2"]
        result = memory.prompt("What is my locker code?", budget=600)
        assert "[S:r/m0]" in result.prompt or "[S:r/m1]" in result.prompt


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    settings = load_settings(data_dir=tmp_path_factory.mktemp("api-archive"), triple_extractor="rules",
                             llm_model=None)
    app = create_app(settings)
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=120) as client:
        wait_ready(client)
        yield client, app


CHATTER = [
    ("user", "Can you help me plan the week? I have three deadlines."),
    ("assistant", "Sure. Which deadline comes first?"),
    ("user", "The quarterly report on Thursday, then the slides, then the budget review."),
    ("assistant", "Start with the report outline today, slides tomorrow."),
]


def test_a_fact_said_in_passing_over_http_is_cited_five_sessions_later(server):
    http, app = server
    first = [("user", "Morning! Before I forget, my sister Ines just adopted a greyhound called Pixel. "
                      "Anyway, can we go over my running plan for the half marathon?"),
             ("assistant", "Of course. How many days a week can you run?"),
             ("user", "Four days, and I want to keep the long run on Sundays.")]
    seqs = {}
    for number in range(1, 7):
        messages = first if number == 1 else CHATTER
        for n, (role, text) in enumerate(messages):
            when = MAY_8_2023 + number * 7 * DAY + n * 60
            sent = http.post(f"/v1/sessions/week-{number}/messages",
                             json={"message": {"role": role, "content": text, "timestamp": when}})
            assert sent.status_code == 200, sent.text
            seqs[(number, n)] = sent.json()["seq"]
    bad = http.post("/v1/sessions/week-6/messages",
                    json={"message": {"role": "user", "content": "x", "timestamp": "yesterday-ish"}})
    assert bad.status_code == 400 and "yesterday-ish" in bad.text
    app.state.api.memory.working_memory.flush()  # archived off the request path; wait for it here
    answer = http.post("/v1/prompt", json={"question": "What is the name of the dog Ines adopted?",
                                           "session_id": "week-6", "budget": 700})
    assert answer.status_code == 200, answer.text
    prompt = answer.json()["prompt"]
    assert f"[S:week-1/m{seqs[(1, 0)]}]" in prompt and "Pixel" in prompt
    assert "15 May 2023" in prompt  # session 1's date heading, from the messages' timestamps
    # The session's own recent turns are in the prompt once, not again as recalled passages.
    assert prompt.count(f"[S:week-6/m{seqs[(6, 3)]}]") == 1


# ---- a restart: the first read waits for the start's catch-up ---------------------------------------

LEFT_UNARCHIVED = ["Locker 7 holds the spare key to the boathouse.", "And the boat's fuel card?",
                   "The fuel card is taped inside the red toolbox in the shed."]


def left_unarchived(settings, session_id: str = "keys", tenant: str | None = None) -> None:
    """A process appended and died before archiving: the messages are in the session store, past no mark
    (``promote=False``: no pass after the appends, as if it was killed right after each commit)."""
    with Memory(settings=settings, tenant=tenant, promote=False) as appender:
        for n, text in enumerate(LEFT_UNARCHIVED):
            appender.add_message(session_id, {"role": "user" if n % 2 == 0 else "assistant", "content": text})
        assert not appender.matching_sources(f"{session_id}/m0")


@pytest.mark.parametrize("read", ["search", "prompt", "ask", "forget"])
def test_a_restarts_first_read_finds_the_turns_a_crash_left_unarchived(settings, read):
    """The reopened Memory's catch-up runs on a thread; its first read waited for none of it and missed
    every unarchived turn (found 5 seconds later). Now the read waits for the catch-up."""
    left_unarchived(settings, tenant="acme")
    with Memory(settings=settings, tenant="acme") as memory:
        if read == "search":
            found = {p.source_id for p in memory.search("Where is the spare key to the boathouse?")}
            assert "keys/m0" in found, found
        elif read == "prompt":
            result = memory.prompt("Where is the boat's fuel card?", budget=400)
            assert "[S:keys/m2]" in result.prompt, result.prompt
            assert not [d for d in result.decisions if d.action == "archive catching up"]
        elif read == "ask":  # retrieval-only: the best passage
            assert "red toolbox" in memory.ask("Where is the boat's fuel card?", budget=400).answer
        else:  # forgotten right away, and the catch-up does not bring it back afterwards
            assert memory.forget("keys/m0")["sources"] == 1
        assert memory.working_memory.caught_up
    with Memory(settings=settings, tenant="acme") as again:
        assert again.matching_sources("keys/m0") == ([] if read == "forget" else ["keys/m0"])


def test_a_read_waits_for_the_catch_up_at_most_its_bound_then_says_so(settings, caplog):
    left_unarchived(settings, tenant="acme")
    with Memory(settings=settings, tenant="acme") as memory:
        memory.catch_up_wait_s = 0.2
        with memory.write_lock:  # an ingestion holds it: the catch-up's archive waits behind it
            result = memory.prompt("Where is the spare key to the boathouse?", budget=400)
            assert not memory.working_memory.caught_up
        assert "[S:keys/m0]" not in result.prompt
        notes = [d.reason for d in result.decisions if d.action == "archive catching up"]
        assert len(notes) == 1 and "0.2 s" in notes[0], result.decisions
        assert any("left unarchived) took more than 0.2 s" in r.getMessage() for r in caplog.records)
        memory.catch_up_wait_s = 60
        result = memory.prompt("Where is the spare key to the boathouse?", budget=400)
        assert "[S:keys/m0]" in result.prompt
        assert not [d for d in result.decisions if d.action == "archive catching up"]


def test_a_server_started_after_a_crash_answers_its_first_search_with_the_unarchived_turns(tmp_path):
    """The HTTP API's reads are the Python API's (Memory.search/prompt/ask): they wait for the catch-up too."""
    settings = load_settings(data_dir=tmp_path, triple_extractor="rules", llm_model=None)
    left_unarchived(settings)
    with serve_in_thread(create_app(settings)) as url, httpx.Client(base_url=url, timeout=120) as http:
        answer = http.post("/v1/search", json={"query": "Where is the spare key to the boathouse?"})
        assert answer.status_code == 200, answer.text
        assert "keys/m0" in {p["source_id"] for p in answer.json()["passages"]}
