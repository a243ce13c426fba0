"""The CLI's output read by another program: a reader that stops early (`| head -1`) ends the command
quietly with SIGPIPE's status, not an error line and exit 1 (which `check` uses for stores that disagree);
a prefix that names every source is refused, pointing at --all."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys

from tests.helpers import embedded_cli_env, run_cli

ENV = {k: v for k, v in os.environ.items()
       if k not in ("AGENT_MEMORY_POSTGRES_URL", "AGENT_MEMORY_NEO4J_URI", "AGENT_MEMORY_QDRANT_URL")}


def test_a_reader_that_stops_early_ends_the_command_quietly(tmp_path, monkeypatch, capsys):
    notes = tmp_path / "notes"
    notes.mkdir()
    for n in range(6):  # an export of about 20 KB: more than the pipe below holds, so the writer meets the closed end
        (notes / f"n{n}.md").write_text(f"Note {n}: the harbour of Velmora opened in {1800 + n}.\n" * 100,
                                        encoding="utf-8")
    data = tmp_path / "data"
    with monkeypatch.context() as mp:  # the data dir filled by the CLI in this process: only the export is piped
        embedded_cli_env(mp, data)
        code, _, err = run_cli(capsys, ["ingest", str(notes), "-r"])
        assert code == 0, err
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)  # the smallest pipe (a page): the export cannot fit in it
    cli = [sys.executable, "-m", "agent_memory.cli", "--data-dir", str(data)]
    listing = subprocess.Popen([*cli, "export", "--tenant", "default"], env=ENV, stdout=write_end, stderr=subprocess.PIPE)
    os.close(write_end)
    with open(read_end, "rb", buffering=0) as reader:
        assert reader.read(1) == b"{"  # the export's header line has begun
    # The reader went away, as `| head -c 1` does.
    code = listing.wait(timeout=300)
    err = listing.stderr.read().decode()
    assert code == 141 and "error" not in err and "Traceback" not in err, (code, err)


def test_a_prefix_that_names_every_source_is_refused(capsys, tmp_path):
    for prefix in ("", "/"):
        code, _, err = run_cli(capsys, ["--data-dir", str(tmp_path / "data"), "forget", "--prefix", prefix])
        assert code == 2 and "would name every source" in err and "--all --tenant" in err, err
