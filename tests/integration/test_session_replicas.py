"""Sessions on PostgreSQL shared by replicas: any replica answers any request. Two session
managers on two pools of one schema play two API processes, without sticky routing."""

from __future__ import annotations

import threading

import pytest
from postgres_support import NEEDS_POSTGRES, FreshSchema

from agent_memory.conversation import SessionManager
from agent_memory.core.tokens import TiktokenCounter
from agent_memory.stores.postgres_sessions import PostgresSessionStore

pytestmark = NEEDS_POSTGRES
COUNTER = TiktokenCounter("cl100k_base")


@pytest.fixture
def replicas(tmp_path):
    schema = FreshSchema()
    managers = [SessionManager(tmp_path / "unused", COUNTER, store=PostgresSessionStore(schema.open()))
                for _ in range(2)]
    yield managers
    for manager in managers:
        manager.close()
    schema.cleanup()


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def test_alternating_replicas_see_each_others_messages_and_settings(replicas):
    a, b = replicas
    for i in range(6):
        replica = (a, b)[i % 2]
        assert replica.session("s").append(user(f"m{i}"), retention="strict") == i
    for replica in (a, b):
        assert [m["content"] for m in replica.session("s").messages()] == [f"m{i}" for i in range(6)]
        assert [m["content"] for m in replica.recent_turns("s", 2)] == ["m4", "m5"]
    a.session("s").configure(window_tokens=9000)
    assert b.session("s").config.window_tokens == 9000


def test_a_stale_session_object_takes_the_next_seq_instead_of_failing(replicas):
    a, b = replicas
    stale = b.session("s")  # read before A's appends, and held on to
    for i in range(3):
        a.session("s").append(user(f"a{i}"))
    assert stale.append(user("b0")) == 3  # refused at seq 0, reloaded, appended after A's
    assert [m["content"] for m in stale.messages()] == ["a0", "a1", "a2", "b0"]


def test_concurrent_appends_through_two_replicas_lose_nothing(replicas):
    errors: list[BaseException] = []
    seqs: dict[str, int] = {}

    def writer(manager: SessionManager, name: str) -> None:
        try:
            for i in range(15):
                seqs[f"{name}{i}"] = manager.session("busy").append(user(f"{name}{i}"))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(m, n)) for m, n in zip(replicas, "ab")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert sorted(seqs.values()) == list(range(30))
    stored = [m["content"] for m in replicas[0].session("busy").messages()]
    assert sorted(stored) == sorted(seqs) and len(stored) == 30
    assert stored == sorted(seqs, key=seqs.get)  # stored in the order of the seqs handed out
