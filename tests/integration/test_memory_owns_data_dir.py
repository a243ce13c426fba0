"""A ``Memory`` built from settings owns its data dir as the CLI and ``serve`` do (core/owner.py): a second
one, in this process or another, is refused with the holder named, before any store is opened; one
built inside a command that holds the data dir shares that hold."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from agent_memory import Memory
from agent_memory.core.owner import DataDirBusyError, current_holder, own


def _holding_process(data_dir, command: str, url: str | None = None) -> subprocess.Popen:
    """Another process that owns ``data_dir`` until its stdin closes (it prints 'held' once it does)."""
    code = textwrap.dedent(f"""
        import sys
        from agent_memory.core.owner import own
        with own({str(data_dir)!r}, {command!r}, url={url!r}, address={None if url is None else '127.0.0.1:1'!r}):
            print("held", flush=True)
            sys.stdin.read()
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_memory_in_this_process_is_refused_until_the_first_closes(tmp_path):
    first = Memory(data_dir=tmp_path)
    try:
        assert current_holder(tmp_path) is not None  # another process sees the data dir owned
        with pytest.raises(DataDirBusyError, match="another Memory in this process"):
            Memory(data_dir=tmp_path)
        first.add("Tina leads the ops team.", source_id="notes/ops")
    finally:
        first.close()
    assert current_holder(tmp_path) is None
    with Memory(data_dir=tmp_path) as second:  # the first released it; what it stored is there
        assert "notes/ops" in second.prompt("Who leads ops?", budget=200).prompt


@pytest.mark.parametrize("url", [None, "http://127.0.0.1:1"], ids=["command", "server"])
def test_a_memory_on_a_data_dir_another_process_owns_is_refused_naming_it(tmp_path, url):
    proc = _holding_process(tmp_path, "serve" if url else "ingest", url)
    try:
        with pytest.raises(DataDirBusyError) as caught:
            Memory(data_dir=tmp_path)
        message = str(caught.value)
        assert f"pid {proc.pid}" in message and str(tmp_path) in message
        assert ("HTTP API" in message) if url else ("wait for it to finish" in message)
        assert not (tmp_path / "sessions.sqlite3").exists()  # refused before any store was opened
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    Memory(data_dir=tmp_path).close()  # the owner exited: free again


def test_a_memory_inside_a_command_that_holds_the_data_dir_shares_its_hold(tmp_path):
    with own(tmp_path, "ingest"):
        with Memory(data_dir=tmp_path) as memory:
            memory.add("The X-300 replaced the X-200.", source_id="notes/sensors")
        assert current_holder(tmp_path).command == "ingest"  # closing the Memory left the command's hold
    assert current_holder(tmp_path) is None


def test_a_closed_memory_refuses_every_call_and_never_opens_its_stores_again(tmp_path):
    """Closed, a Memory gave its data dir back: another opened since must be the only writer. Every public call
    of the closed one raises ClosedError (closing before any use too), a session handle taken before it too;
    closing twice is fine."""
    from agent_memory import ClosedError

    early = Memory(data_dir=tmp_path, tenant="acme")
    handle = early.session("uac")
    early.close()
    early.close()
    second = Memory(data_dir=tmp_path, tenant="acme")
    try:
        assert second.add_message("uac", {"role": "user", "content": "from the second: the Tern code is T-3."}) == 0
        calls = {
            "add_message": lambda: early.add_message("uac", {"role": "user", "content": "closed: Tern T-2."}),
            "add_messages": lambda: early.add_messages("uac", [{"role": "user", "content": "x"}]),
            "prompt": lambda: early.prompt("Tern code", budget=200), "search": lambda: early.search("Tern"),
            "ask": lambda: early.ask("Tern code?"), "tenants": early.tenants, "settle": early.settle,
            "add": lambda: early.add("x", source_id="notes/x"), "add_file": lambda: early.add_file(tmp_path / "x.md"),
            "add_paths": lambda: early.add_paths([tmp_path]), "forget": lambda: early.forget("notes/x"),
            "matching_sources": lambda: early.matching_sources("notes/x"), "view": lambda: early.view("uac"),
            "sessions": early.sessions, "session": lambda: early.session("uac"),
            "session_exists": lambda: early.session_exists("uac"),
            "delete_session": lambda: early.delete_session("uac"), "services": lambda: early.services,
            "working_memory": lambda: early.working_memory, "ingestion": lambda: early.ingestion,
            "pipeline": lambda: early.pipeline, "enter": lambda: early.__enter__(),
        }
        for name, call in calls.items():
            with pytest.raises(ClosedError, match="this Memory is closed: open a new one"):
                call()
                pytest.fail(f"{name} ran on a closed Memory")
        with pytest.raises(ClosedError):
            handle.append({"role": "user", "content": "through an old handle"})
        # The second's numbering is its own: nothing of the closed one landed in between.
        assert second.add_message("uac", {"role": "user", "content": "from the second again: Tern T-4."}) == 1
        assert [m["content"] for m in second.view("uac", 500)][-2:] == [
            "from the second: the Tern code is T-3.", "from the second again: Tern T-4."]
    finally:
        second.close()
