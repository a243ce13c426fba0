"""`agent-memory session`: a tenant's working-memory sessions from the terminal, on the data dir's stores and
through the server that owns it, with the same answers: the list, the compacted view as the next model call
reads it (tool calls and their results named), the raw history, a delete (`--forget`: the archived turns too)."""

from __future__ import annotations

import json

import pytest

from agent_memory import Memory
from agent_memory.api import create_app
from agent_memory.api.testing import serve_in_thread
from agent_memory.core.config import load_settings
from agent_memory.remote import KEY_ENV, RemoteMemory
from tests.helpers import embedded_cli_env, run_cli

CALL = {"role": "assistant", "content": "Running the tests.",
        "tool_calls": [{"id": "c1", "type": "function",
                        "function": {"name": "pytest", "arguments": "{\"path\": \"tests/\"}"}}]}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": "3 passed, 1 failed: E1101 in settings.py"}


@pytest.fixture(scope="module", params=["stores", "server"])
def data(request, tmp_path_factory):
    """A data dir holding two sessions of tenant 'default' and one of 'acme', shared by the module's tests
    (only the last test deletes, a session of its own); with "server", a server owns it: the server's URL too."""
    data_dir = tmp_path_factory.mktemp("sessions") / "data"
    with pytest.MonkeyPatch.context() as mp:
        embedded_cli_env(mp, data_dir)
        mp.delenv(KEY_ENV, raising=False)
        with Memory(settings=load_settings(data_dir=data_dir, triple_extractor="rules")) as memory:
            memory.add_messages("fix-1", [{"role": "user", "content": "Please run the tests for settings.py"}, CALL,
                                          RESULT])
            memory.add_message("chat-2", {"role": "user", "content": "Our depot is in Leeds."})
            memory.add_message("other", {"role": "user", "content": "acme's own"}, tenant="acme")
        if request.param == "stores":
            yield data_dir, None
            return
        with serve_in_thread(create_app(load_settings(data_dir=data_dir), warm=False), owns=data_dir) as url:
            yield data_dir, url


def test_list_names_the_tenants_sessions(data, capsys):
    code, out, _ = run_cli(capsys, ["session", "list"])
    assert code == 0
    lines = out.splitlines()
    assert sorted(line.split("\t")[0] for line in lines) == ["chat-2", "fix-1"]  # never acme's
    assert any(line.startswith("fix-1\t3 messages\tlast ") for line in lines), out
    code, out, _ = run_cli(capsys, ["session", "list", "--json"])
    assert code == 0
    assert {s["session_id"]: s["messages"] for s in json.loads(out)["sessions"]} == {"fix-1": 3, "chat-2": 1}


def test_view_reads_as_the_model_would(data, capsys):
    code, out, _ = run_cli(capsys, ["session", "view", "fix-1"])
    assert code == 0
    assert out.startswith("# session fix-1: ")
    assert "[user] Please run the tests for settings.py" in out
    assert '[tool_use:pytest] {"path": "tests/"}' in out
    assert "[tool_result:pytest] 3 passed, 1 failed: E1101 in settings.py" in out  # the result named by its call
    code, out, _ = run_cli(capsys, ["session", "view", "fix-1", "--json", "--budget", "2000"])
    view = json.loads(out)
    assert code == 0 and view["budget"] == 2000 and 0 < view["tokens"] <= 2000
    assert [m["role"] for m in view["messages"] if m["role"] != "system"] == ["user", "assistant", "tool"]


def test_messages_give_the_history_as_appended(data, capsys):
    code, out, _ = run_cli(capsys, ["session", "messages", "fix-1"])
    rows = json.loads(out)["messages"]
    assert code == 0 and [r["seq"] for r in rows] == [0, 1, 2]
    assert rows[2]["message"] == RESULT and rows[1]["status"] == "active"


def test_a_session_not_there_is_exit_1_and_says_so(data, capsys):
    for argv in (["session", "view", "nope"], ["session", "messages", "other"], ["session", "delete", "nope"]):
        code, out, err = run_cli(capsys, argv)
        assert code == 1 and out == "", argv
        assert "no session" in err and ("'nope'" in err or "'other'" in err), err


@pytest.mark.parametrize("argv, said", [
    (["session", "view"], "`session view` needs a session ID"),
    (["session", "list", "fix-1"], "`session list` takes no session ID (got 'fix-1')"),
    (["session", "view", "fix-1", "--forget"], "--forget is an option of `session delete`"),
    (["session", "list", "--budget", "100"], "--budget is an option of `session view`"),
])
def test_arguments_that_do_not_fit_the_action_are_refused(data, capsys, argv, said):
    code, out, err = run_cli(capsys, argv)
    assert code == 2 and out == "" and said in err, err


def test_delete_with_forget_takes_the_archived_turns_too(data, capsys):
    data_dir, url = data
    said = {"role": "user", "content": "Forget that I said this."}
    if url is None:
        with Memory(settings=load_settings(data_dir=data_dir, triple_extractor="rules")) as memory:
            memory.add_message("gone-3", said)
    else:
        with RemoteMemory(url) as remote:
            remote.add_message("gone-3", said)
    code, out, _ = run_cli(capsys, ["session", "delete", "gone-3", "--forget"])
    removed = json.loads(out)
    assert code == 0 and removed["messages"] == 1 and removed["sources"] == 1
    code, out, _ = run_cli(capsys, ["session", "list"])
    assert sorted(line.split("\t")[0] for line in out.splitlines()) == ["chat-2", "fix-1"]
    code, out, _ = run_cli(capsys, ["list", "--prefix", "gone-3/"])
    assert json.loads(out)["sources"] == []
