"""A message without a timestamp in a session replaying its history (an import dated 2023) is dated by
the dated message after it, recorded as inferred, in the session and in long-term memory alike: it
reads among its 2023 turns, not under a heading of today. A live conversation continued after such an
import keeps the time each message was appended."""

from __future__ import annotations

import os
import time

import httpx
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")

from agent_memory import Memory  # noqa: E402
from agent_memory.api import create_app  # noqa: E402
from agent_memory.api.testing import serve_in_thread, wait_ready  # noqa: E402
from agent_memory.core.config import load_settings  # noqa: E402
from agent_memory.core.records import SearchFilter  # noqa: E402

MAY_8_2023 = 1_683_554_160  # 2023-05-08T13:56:00Z
LEASE = [
    {"role": "user", "content": "We signed the Lyon warehouse lease for 3 years.", "timestamp": MAY_8_2023},
    {"role": "assistant", "content": "Noted: the Lyon lease runs 3 years.", "timestamp": MAY_8_2023 + 60},
    {"role": "user", "content": "We decided the rent is 4,000 EUR a month."},  # the import lost its timestamp
    {"role": "assistant", "content": "Got it, 4,000 EUR monthly rent for Lyon.", "timestamp": MAY_8_2023 + 300},
]
QUESTION = "What is the monthly rent of the Lyon warehouse?"


def turns(memory) -> dict[str, object]:
    memory.settle()  # the archive runs on a worker thread
    items = memory.services.vectors.scroll(SearchFilter(tenant=memory.tenant, kinds=["turn"]))
    return {item.source_id: item for item in items}


@pytest.fixture()
def memory(tmp_path):
    settings = load_settings(data_dir=tmp_path, triple_extractor="rules", llm_model=None)
    with Memory(settings=settings, tenant="acme") as memory:
        yield memory


def test_an_undated_message_in_an_imported_history_takes_the_next_dated_time(memory):
    for message in LEASE:
        memory.add_message("lease", message)
    stored = turns(memory)
    gap = stored["lease/m2"]
    assert gap.created_at == MAY_8_2023 + 300 and gap.metadata["timestamp"].startswith("2023-05-08T14:01")
    assert gap.metadata["timestamp_inferred"] is True and "decision" in gap.metadata["reasons"]
    assert not any(stored[f"lease/m{n}"].metadata.get("timestamp_inferred") for n in (0, 1, 3))
    recent = memory.working_memory.recent_turns("acme", "lease", 4)
    assert [t.metadata["timestamp"][:10] for t in recent] == ["2023-05-08"] * 4
    prompt = memory.prompt(QUESTION, budget=600, session_id="lease").prompt
    assert prompt.count("### lease,") == 1 and "### lease, 8 May 2023" in prompt and "[S:lease/m2]" in prompt
    # Time-aware recall counts from the inferred time.
    late = memory.prompt(QUESTION, budget=600, filters={"created_after": MAY_8_2023 + 86_400})
    assert "[S:lease/m2]" not in late.prompt


def test_a_restart_between_an_undated_message_and_the_next_dated_one_dates_it_the_same(tmp_path):
    """The session's timeline of undated messages was this process's only: reopened (a restart) after the
    undated message, the dated one after it left it at the time it was appended, under a heading of today."""
    settings = load_settings(data_dir=tmp_path / "once", triple_extractor="rules", llm_model=None)
    with Memory(settings=settings, tenant="acme") as memory:
        for message in LEASE:
            memory.add_message("lease", message)
        memory.working_memory.flush()
        once = turns(memory)["lease/m2"]
        once_time = memory.messages("lease")[2]["timestamp"]
    settings = load_settings(data_dir=tmp_path / "restarted", triple_extractor="rules", llm_model=None)
    with Memory(settings=settings, tenant="acme") as memory:
        for message in LEASE[:3]:
            memory.add_message("lease", message)
        memory.working_memory.flush()
    with Memory(settings=settings, tenant="acme") as memory:  # the same data dir, a new process's Memory
        memory.add_message("lease", LEASE[3])
        memory.working_memory.flush()
        gap = turns(memory)["lease/m2"]
        assert memory.messages("lease")[2]["timestamp"] == once_time == MAY_8_2023 + 300
        assert gap.created_at == once.created_at == MAY_8_2023 + 300
        assert gap.metadata["timestamp"] == once.metadata["timestamp"] and gap.metadata["timestamp_inferred"] is True
        assert gap.metadata["reasons"] == once.metadata["reasons"] and "decision" in gap.metadata["reasons"]


def test_a_batch_dates_its_undated_messages_the_same_way(memory):
    memory.add_messages("lease", LEASE)
    gap = turns(memory)["lease/m2"]
    assert gap.created_at == MAY_8_2023 + 300 and gap.metadata["timestamp_inferred"] is True


def test_a_live_conversation_after_an_import_keeps_its_own_times(memory):
    before = time.time()
    memory.add_messages("lease", LEASE[:2])
    memory.add_message("lease", {"role": "user", "content": "Back again: is the Lyon lease still 3 years?"})
    memory.add_message("lease", {"role": "assistant", "content": "Yes, 3 years from May 2023."})
    # Older history appended after them goes back before the last dated message: no replay of it.
    memory.add_message("lease", {"role": "user", "content": "Forwarded from 2022: the Lyon site visit.",
                                 "timestamp": MAY_8_2023 - 365 * 86_400})
    stored = turns(memory)
    for source in ("lease/m2", "lease/m3"):
        assert stored[source].created_at >= before and "timestamp_inferred" not in stored[source].metadata


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    settings = load_settings(data_dir=tmp_path_factory.mktemp("api-undated"), triple_extractor="rules",
                             llm_model=None)
    app = create_app(settings)
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=120) as client:
        wait_ready(client)
        yield client, app


def test_the_http_session_routes_date_an_undated_message_of_an_import(server):
    http, app = server
    for message in LEASE:
        sent = http.post("/v1/sessions/lease/messages", json={"message": message})
        assert sent.status_code == 200, sent.text
    app.state.api.memory.working_memory.flush()  # archived off the request path; wait for it here
    source = http.get("/v1/sources/lease/m2")
    assert source.status_code == 200, source.text
    (item,) = source.json()["items"]
    assert item["metadata"]["timestamp_inferred"] is True
    assert item["metadata"]["timestamp"].startswith("2023-05-08T14:01")
    answer = http.post("/v1/prompt", json={"question": QUESTION, "session_id": "lease", "budget": 600})
    prompt = answer.json()["prompt"]
    assert prompt.count("### lease,") == 1 and "### lease, 8 May 2023" in prompt and "[S:lease/m2]" in prompt
