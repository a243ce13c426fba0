"""`agent-memory --help`, `--version`, a subcommand's `--help` and a refused argument load none of the layers the
commands run on (the memory, ingestion and retrieval packages, the models' runtime, the store clients, the text
splitters and word segmenters): each subcommand's module is imported when it runs (cli/parser.py), so a user
asking for help did not wait for them all, every time."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_memory.core.version import __version__

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("agent_memory.memory", "agent_memory.ingest", "agent_memory.retrieval", "onnxruntime", "qdrant_client",
         "langchain_text_splitters", "spacy", "jieba", "neo4j")
# Every subcommand's --help in one interpreter, then the modules it holds.
EVERY_HELP = """
import argparse, contextlib, io, sys
from agent_memory.cli import build_parser, main
(sub,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
for name in sub.choices:
    with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.suppress(SystemExit):
        main([name, "--help"])
    assert out.getvalue().startswith(f"usage: agent-memory {name}"), name
print("\\n".join(sys.modules))
"""


def python(*argv: str) -> subprocess.CompletedProcess:
    """``python *argv`` with this checkout's package first on the path."""
    path = os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env={**os.environ, "PYTHONPATH": path})


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def imported(stderr: str) -> set[str]:
    """The modules ``-X importtime`` reported imported (its lines end with ``| <module>``)."""
    return {line.rsplit("|", 1)[1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


@pytest.mark.parametrize("argv, code, says", [
    (["--help"], 0, "usage: agent-memory"),
    (["--version"], 0, f"agent-memory {__version__}"),
    (["prompt", "--help"], 0, "usage: agent-memory prompt"),
    (["list", "--limit", "0"], 2, "argument --limit: must be from 1 to"),
])
def test_help_version_and_a_refused_argument_load_no_heavy_layer(argv, code, says):
    done = python("-X", "importtime", "-m", "agent_memory.cli", *argv)
    modules = imported(done.stderr)
    assert done.returncode == code and says in done.stdout + done.stderr, (done.returncode, done.stdout, done.stderr)
    assert "agent_memory.cli.parser" in modules  # the report was read: the parser it ran is in it
    assert heavy(modules) == []


def test_no_subcommands_help_loads_a_heavy_layer():
    done = python("-c", EVERY_HELP)
    assert done.returncode == 0, done.stderr
    modules = set(done.stdout.split())
    assert "agent_memory.cli.parser" in modules and heavy(modules) == []
