"""A session's archived turns and the documents, records and direct turns of one tenant never replace each
other (ingest/ownership.py, ingest/archive.py): whichever holds a source ID first keeps it, and the other
is refused with both named, through the Python API, a records file and the HTTP API."""

from __future__ import annotations

import json
import logging
import time

import httpx
import pytest

from agent_memory.core.errors import IngestError
from agent_memory.core.records import Document, TurnRecord


@pytest.fixture
def memory(settings):
    from agent_memory import Memory

    with Memory(settings=settings, tenant="acme") as mem:
        yield mem


def _texts(memory, source_id: str) -> list[str]:
    from agent_memory.ingest.upkeep import inspect

    memory.settle()  # the archive runs on a worker thread
    found = inspect(memory.services, "acme", source_id, full=True)
    return [item["text"] for item in found["items"]] if found else []


def test_a_document_never_replaces_an_archived_turn(memory):
    memory.add_message("chat-2", {"role": "user", "content": "I work at Acme Robotics as a firmware engineer."})
    assert any("Acme Robotics" in t for t in _texts(memory, "chat-2/m0"))
    with pytest.raises(IngestError, match=r"'chat-2/m0' belongs to session 'chat-2'"):
        memory.add("overwrite a turn", source_id="chat-2/m0")
    with pytest.raises(IngestError, match="session 'chat-2'"):
        memory.add_turns([TurnRecord(session_id="chat-2", turn_id="m0", speaker="x", text="forged", tenant="acme")])
    assert any("Acme Robotics" in t for t in _texts(memory, "chat-2/m0"))
    assert not any("overwrite" in t or "forged" in t for t in _texts(memory, "chat-2/m0"))


def test_a_turn_never_replaces_a_document_that_took_its_id_first(memory, caplog):
    memory.add("Contract doc: the Acme contract renews on June 1.", source_id="chat-9/m0")
    with caplog.at_level(logging.WARNING):
        memory.add_message("chat-9", {"role": "user", "content": "My favourite colour is teal."})
        memory.add_message("chat-9", {"role": "user", "content": "My bike is a green Brompton."})
        memory.settle()  # the archive's warning, from its worker thread
    assert any("renews on June 1" in t for t in _texts(memory, "chat-9/m0"))
    assert not any("teal" in t for t in _texts(memory, "chat-9/m0"))
    assert "turn 'chat-9/m0' not archived" in caplog.text and "a document written directly" in caplog.text
    assert any("Brompton" in t for t in _texts(memory, "chat-9/m1"))  # the next turn is archived as usual
    assert any("teal" in str(m.get("content")) for m in memory.view("chat-9", budget=500))  # kept in the session


def test_a_records_file_never_replaces_an_archived_turn(memory, tmp_path):
    memory.add_message("pure-1", {"role": "user", "content": "The spare key is in locker 103."})
    records = tmp_path / "records.jsonl"
    records.write_text(json.dumps({"id": "pure-1/m0", "text": "A record under a turn's ID."}) + "\n"
                       + json.dumps({"id": "rec-2", "text": "The tram runs every ten minutes."}) + "\n")
    report = memory.add_paths([records])
    [(where, reason)] = report.files_failed
    assert "'pure-1/m0' refused" in reason and "session 'pure-1'" in reason
    assert any("locker 103" in t for t in _texts(memory, "pure-1/m0"))
    assert any("tram" in t for t in _texts(memory, "rec-2"))


def test_a_turn_no_one_claimed_is_a_turn_all_the_same(memory):
    """Turns written by add_turns claim nothing (a transcript added twice is a no-op), and no document
    replaces one: a turn stored without an owner (as sessions archived before they claimed theirs) is held
    as its session's."""
    turns = [TurnRecord(session_id="old", turn_id="m0", speaker="Ana", text="I moved to Porto in May.", tenant="acme")]
    memory.add_turns(turns)
    assert memory.add_turns(turns).report.sources_unchanged >= 1
    with pytest.raises(IngestError, match="session 'old'"):
        memory.add_documents([Document(source_id="old/m0", text="replaced", tenant="acme")])
    assert any("Porto" in t for t in _texts(memory, "old/m0"))


def test_through_the_api_a_document_on_a_turn_is_refused_naming_the_session(settings):
    from agent_memory.api import create_app
    from agent_memory.api.testing import serve_in_thread

    with serve_in_thread(create_app(settings, warm=False)) as url, httpx.Client(base_url=url, timeout=60) as client:
        sent = client.post("/v1/sessions/chat-4/messages",
                           json={"message": {"role": "user", "content": "I work at Acme Robotics."}})
        assert sent.status_code in (200, 201), sent.text
        for _ in range(50):  # the server archives off the request path
            if client.get("/v1/sources/chat-4%2Fm0").status_code == 200:
                break
            time.sleep(0.1)
        posted = client.post("/v1/documents", json={"source_id": "chat-4/m0", "text": "overwrite a turn"})
        assert posted.status_code == 400 and "session 'chat-4'" in posted.json()["error"]["message"], posted.text
        kept = client.get("/v1/sources/chat-4%2Fm0", params={"full": "true"}).json()
        assert any("Acme Robotics" in item["text"] for item in kept["items"])


def test_deleting_a_session_with_its_archive_never_forgets_a_document_on_one_of_its_ids(memory):
    memory.add("Important doc: the budget for Heron is 9 million.", source_id="s3/m1")
    for n in range(3):
        memory.add_message("s3", {"role": "user", "content": f"s3 chat message number {n} about kites"})
    removed = memory.delete_session("s3", forget_archived=True)
    assert removed["sources"] == 2, removed  # m0 and m2: its own archived turns
    assert any("9 million" in t for t in _texts(memory, "s3/m1"))
    assert not _texts(memory, "s3/m0") and not _texts(memory, "s3/m2")


def test_a_live_session_numbers_its_turns_past_the_ids_add_turns_stored(memory):
    """Turns imported with add_turns under a session's name keep their IDs: the live session with that name
    numbers its turns after them, so none of them is written over."""
    memory.add_turns([TurnRecord(session_id="chat2", turn_id="m3", speaker="user", tenant="acme",
                                 text="Imported: the secret code word is BLUEBERRY")])
    seqs = [memory.add_message("chat2", {"role": "user", "content": f"live message {n} about gliders"})
            for n in range(3)]
    assert seqs == [4, 5, 6]
    assert any("BLUEBERRY" in t for t in _texts(memory, "chat2/m3"))
    assert any("live message 0" in t for t in _texts(memory, "chat2/m4"))
