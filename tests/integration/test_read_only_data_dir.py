"""A data dir agent-memory cannot write (a read-only mount, or another user's folder) is one clear error
naming it, why, and what to do: never the raw OSError of its owner lock."""

from __future__ import annotations

import errno
import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from agent_memory.core.errors import ConfigError
from agent_memory.core.owner import LOCK_NAME, own
from tests.helpers import embedded_cli_env, run_cli

COMMANDS = [["list"], ["stats"], ["prompt", "Who is the CFO?"], ["serve", "--port", "PORT"]]


def _expected(data_dir: Path, why: str) -> str:
    where = data_dir.resolve()
    return (f"error: the data dir {where} {why}: agent-memory writes there even to read it (its owner lock, "
            f"{LOCK_NAME}, and its stores' files); copy it somewhere writable (cp -a {where} <writable folder>) "
            "and give the copy with --data-dir or AGENT_MEMORY_DATA_DIR")


def _stored(tmp_path: Path) -> Path:
    """A data dir as one that held stores leaves it: its owner lock written by an earlier command."""
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (data_dir / LOCK_NAME).write_text('{"pid": 1, "command": "ingest", "started": "earlier"}')
    return data_dir


@pytest.fixture
def read_only_mount(tmp_path):
    """The data dir bind-mounted read-only (root and a mount namespace that allows it; else skipped)."""
    data_dir = _stored(tmp_path)
    mounted = tmp_path / "ro"
    mounted.mkdir()
    done = subprocess.run(["mount", "--bind", str(data_dir), str(mounted)], capture_output=True)
    if done.returncode != 0:
        shutil.rmtree(mounted)
        pytest.skip(f"cannot bind-mount here: {done.stderr.decode().strip() or done.returncode}")
    try:
        remounted = subprocess.run(["mount", "-o", "remount,bind,ro", str(mounted)], capture_output=True)
        if remounted.returncode != 0:
            pytest.skip(f"cannot remount read-only here: {remounted.stderr.decode().strip()}")
        yield mounted
    finally:
        subprocess.run(["umount", "-l", str(mounted)], capture_output=True)


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda argv: argv[0])
def test_a_read_only_mount_is_one_clear_line(argv, read_only_mount, monkeypatch, capsys):
    embedded_cli_env(monkeypatch, read_only_mount)
    with socket.socket() as probe:  # a free port: serve checks its port before it opens the data dir
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    code, out, err = run_cli(capsys, [port if arg == "PORT" else arg for arg in argv])
    assert code == 2 and out == ""
    assert err.strip() == _expected(read_only_mount, "is on a read-only file system")
    assert os.listdir(read_only_mount) == [LOCK_NAME]


def test_a_read_only_file_system_named_where_no_mount_can_be_made(tmp_path, monkeypatch, capsys):
    """The same refusal with the file system's refusal simulated at the lock (runs anywhere, root too)."""
    data_dir = _stored(tmp_path)
    real_open = Path.open

    def refusing(self, mode="r", *args, **kwargs):
        if self.name == LOCK_NAME and mode != "r":
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self))
        return real_open(self, mode, *args, **kwargs)

    monkeypatch.setattr(Path, "open", refusing)
    with pytest.raises(ConfigError, match="is on a read-only file system"), own(data_dir, "list"):
        pass
    embedded_cli_env(monkeypatch, data_dir)
    code, _, err = run_cli(capsys, ["stats"])
    assert code == 2 and err.strip() == _expected(data_dir, "is on a read-only file system")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through a folder's mode bits")
def test_a_folder_this_user_cannot_write(tmp_path, monkeypatch, capsys):
    data_dir = _stored(tmp_path)
    data_dir.chmod(0o555)
    (data_dir / LOCK_NAME).chmod(0o444)
    try:
        embedded_cli_env(monkeypatch, data_dir)
        code, _, err = run_cli(capsys, ["list"])
        assert code == 2 and err.strip() == _expected(data_dir, "is not writable by this user")
    finally:
        data_dir.chmod(0o755)
