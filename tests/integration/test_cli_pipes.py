"""The CLI's output read by another program: a reader that stops early (`| head -1`) ends the command
quietly with SIGPIPE's status, not an error line and exit 1 (which `check` uses for stores that disagree);
a prefix that names every source is refused, pointing at --all."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.helpers import run_cli

ENV = {k: v for k, v in os.environ.items()
       if k not in ("AGENT_MEMORY_POSTGRES_URL", "AGENT_MEMORY_NEO4J_URI", "AGENT_MEMORY_QDRANT_URL")}


def test_a_reader_that_stops_early_ends_the_command_quietly(tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    for n in range(20):  # an export of about 100 KB: more than a pipe holds, so the writer meets the closed end
        (notes / f"n{n}.md").write_text(f"Note {n}: the harbour of Velmora opened in {1800 + n}.\n" * 100,
                                        encoding="utf-8")
    data = tmp_path / "data"
    cli = [sys.executable, "-m", "agent_memory.cli", "--data-dir", str(data)]
    assert subprocess.run([*cli, "ingest", str(notes), "-r"], env=ENV, capture_output=True).returncode == 0
    listing = subprocess.Popen([*cli, "export", "--tenant", "default"], env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert listing.stdout.read(1) == b"{"  # the export's header line has begun
    listing.stdout.close()  # the reader goes away, as `| head -c 1` does
    code = listing.wait(timeout=300)
    err = listing.stderr.read().decode()
    assert code == 141 and "error" not in err and "Traceback" not in err, (code, err)


def test_a_prefix_that_names_every_source_is_refused(capsys, tmp_path):
    for prefix in ("", "/"):
        code, _, err = run_cli(capsys, ["--data-dir", str(tmp_path / "data"), "forget", "--prefix", prefix])
        assert code == 2 and "would name every source" in err and "--all --tenant" in err, err
