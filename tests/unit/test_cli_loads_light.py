"""`agent-memory --help`, `--version`, a subcommand's `--help` and a refused argument load none of the layers the
commands run on (the memory, ingestion and retrieval packages, the models' runtime, the store clients, the text
splitters and word segmenters): each subcommand's module is imported when it runs (cli/parser.py), so a user
asking for help did not wait for them all, every time. Nor does a command that reads or removes what is stored
through a server (`--server`, or the server that owns the data dir): what only opening the stores needs is
imported on that path (cli/stores_or_server.py), so such a command waits for its HTTP client and settings alone.
A stand-in server here answers the endpoints those commands call (remote/client.py) with the API's shapes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

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


def python(*argv: str, cwd: Path = ROOT, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``python *argv`` with this checkout's package first on the path."""
    env = os.environ if env is None else env
    path = os.pathsep.join(filter(None, (str(ROOT), env.get("PYTHONPATH"))))
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, cwd=cwd, timeout=120,
                          env={**env, "PYTHONPATH": path})


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


# ---- commands through a server ------------------------------------------------------------------------------
STATS = {"items": 3, "items_per_kind": {"chunk": 2, "summary": 1, "turn": 0}, "sources": 1, "expiring_soon": 0,
         "entities": 0, "triples": 0, "superseded_triples": 0, "superseded_share": 0.0}
SOURCE_ROW = {"source_id": "notes/a.md", "kinds": ["chunk", "summary"], "items": 3, "created_at": 1764700000.0}
PAGE = {"offset": 0, "limit": 50, "total": 1, "next_offset": None, "sources": [SOURCE_ROW]}
SOURCE = {"source_id": "notes/a.md", "catalog": None, "items": []}
REMOVED = {"sources": 1, "items": 3, "triples": 0}
SESSIONS = {"sessions": [{"session_id": "s1", "agents": [None], "messages": 2, "created_at": 1764700000.0,
                          "updated_at": 1764703600.0}]}
HEADER = {"type": "header", "format": "agent-memory-export", "version": 1, "tenant": "default"}
END = {"type": "end", "sources": 0, "sessions": 0, "messages": 0}
IMPORTED = {"tenant": "default", "sources_written": 0, "sources_unchanged": 0, "sessions_imported": 0,
            "sessions_unchanged": 0, "sessions_refused": 0, "messages_appended": 0, "turns_forgotten": 0,
            "complete": True, "skipped": [], "warnings": []}
ANSWERS = {
    ("GET", "/v1/whoami"): {"tenant": "default"},
    ("GET", "/v1/stats"): STATS,
    ("GET", "/v1/sources"): PAGE,
    ("GET", "/v1/sources/notes/a.md"): SOURCE,
    ("DELETE", "/v1/sources/notes/a.md"): REMOVED,
    ("GET", "/v1/sessions"): SESSIONS,
    ("POST", "/v1/import"): IMPORTED,
}


class StandIn(BaseHTTPRequestHandler):
    """The answers of ``agent-memory serve`` to the calls the commands below make (a 404 to any other)."""

    asked: list[tuple[str, str, dict]] = []

    def answer(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        url = urlsplit(self.path)
        self.asked.append((self.command, url.path, parse_qs(url.query)))
        if (self.command, url.path) == ("GET", "/v1/export"):
            self.send(200, "".join(json.dumps(line) + "\n" for line in (HEADER, END)), "application/x-ndjson")
            return
        found = ANSWERS.get((self.command, url.path))
        if found is None:
            self.send(404, json.dumps({"error": {"code": "not_found", "message": f"no route {url.path}"}}))
        else:
            self.send(200, json.dumps(found))

    do_GET = do_POST = do_DELETE = answer

    def send(self, status: int, body: str, kind: str = "application/json") -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:  # quiet: pytest shows a failure's own output
        pass


@pytest.fixture(scope="module")
def server_url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), StandIn)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def client_env(tmp_path: Path) -> dict[str, str]:
    """This environment without agent-memory's settings (a tenant or a key set here would change what is asked)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_MEMORY_")}
    return {**env, "AGENT_MEMORY_DATA_DIR": str(tmp_path / "data")}


@pytest.mark.parametrize("argv, printed, asked", [
    (["stats"], {"default": STATS}, ("GET", "/v1/stats", {"soon_days": ["1.0"]})),
    (["list", "--prefix", "notes/"], PAGE,
     ("GET", "/v1/sources", {"prefix": ["notes/"], "offset": ["0"], "limit": ["50"]})),
])
def test_a_command_through_a_server_loads_no_heavy_layer(server_url, tmp_path, argv, printed, asked):
    StandIn.asked.clear()
    done = python("-X", "importtime", "-m", "agent_memory.cli", "--server", server_url, *argv, cwd=tmp_path,
                  env=client_env(tmp_path))
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert json.loads(done.stdout) == printed
    assert StandIn.asked == [("GET", "/v1/whoami", {}), asked]
    modules = imported(done.stderr)
    assert "agent_memory.remote.client" in modules  # the report was read: the client it ran is in it
    assert heavy(modules) == []
    assert not (tmp_path / "data").exists()  # the data dir was never opened, nor created


# The other commands that read or remove what is stored, through the server, in one interpreter: each one's exit
# code and output, then the modules it holds.
EVERY_THROUGH = """
import contextlib, io, json, sys
from agent_memory.cli import main
url, export = sys.argv[1:]
done = {}
for argv in (["inspect", "notes/a.md"], ["forget", "notes/a.md"], ["session", "list", "--json"], ["export"],
             ["import", export, "--json"]):
    with contextlib.redirect_stdout(io.StringIO()) as out:
        code = main(["--server", url, *argv])
    done[argv[0]] = [code, out.getvalue()]
print(json.dumps({"done": done, "modules": sorted(sys.modules)}))
"""


def test_the_other_commands_through_a_server_load_no_heavy_layer(server_url, tmp_path):
    export = tmp_path / "export.jsonl"
    export.write_text(json.dumps(HEADER) + "\n" + json.dumps(END) + "\n", encoding="utf-8")
    done = python("-c", EVERY_THROUGH, server_url, str(export), cwd=tmp_path, env=client_env(tmp_path))
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    codes = {name: code for name, (code, _) in found["done"].items()}
    printed = {name: out for name, (_, out) in found["done"].items()}
    assert codes == {"inspect": 0, "forget": 0, "session": 0, "export": 0, "import": 0}, found["done"]
    assert json.loads(printed["inspect"]) == SOURCE
    assert json.loads(printed["forget"]) == {"source_id": "notes/a.md", **REMOVED}
    assert json.loads(printed["session"]) == SESSIONS
    assert [json.loads(line) for line in printed["export"].splitlines()] == [HEADER, END]
    assert json.loads(printed["import"]) == IMPORTED | {"files_recorded": 0}
    modules = set(found["modules"])
    assert "agent_memory.remote.client" in modules and heavy(modules) == []
    assert not (tmp_path / "data").exists()


# What `ingest` through a server imports for its walk and upload (the HTTP client and the upload job: the file
# formats, ignore rules and the names of archived turns) and nothing of the session machinery or the stores' numpy,
# while the packages' names still import where a caller asks for them.
INGEST_THROUGH = """
import json, sys
import agent_memory.remote.client, agent_memory.remote.upload_job
walk = sorted(sys.modules)
from agent_memory.conversation import Retention, SessionManager
from agent_memory.stores import SparseVector, VectorStore
print(json.dumps({"walk": walk, "names": [SessionManager.__module__, Retention.__module__, VectorStore.__module__,
                                          SparseVector.__module__]}))
"""


def test_ingest_through_a_server_loads_no_session_machinery_and_no_numpy():
    done = python("-c", INGEST_THROUGH)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    walk = set(found["walk"])
    assert "agent_memory.conversation.archived_turns" in walk and "agent_memory.ingest.sources" in walk
    assert not walk & {"numpy", "agent_memory.conversation.session", "agent_memory.conversation.manager",
                       "agent_memory.stores.base"}, sorted(walk & {"numpy", "agent_memory.stores.base"})
    assert found["names"] == ["agent_memory.conversation.manager", "agent_memory.conversation.compaction",
                              "agent_memory.stores.base", "agent_memory.core.sparse"]
