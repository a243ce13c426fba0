"""Paths and small helpers shared by test modules (fixtures live in conftest.py)."""

from __future__ import annotations

import os
import re
import time
import unicodedata
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EVAL_DIR = REPO.parent / "shared" / "eval"
SAMPLES = REPO / "agent_memory" / "samples"


# Settings that would point a CLI test at a server, another tenant or an LLM instead of the embedded defaults.
SERVER_SETTINGS = ("AGENT_MEMORY_QDRANT_URL", "AGENT_MEMORY_NEO4J_URI", "AGENT_MEMORY_LLM_BASE_URL",
                   "AGENT_MEMORY_TENANT", "AGENT_MEMORY_TOKENIZER", "AGENT_MEMORY_POSTGRES_URL",
                   "AGENT_MEMORY_API_KEYS",
                   # scripts/test.sh exports the test Neo4j's credentials: not the embedded CLI's settings
                   "AGENT_MEMORY_NEO4J_USER", "AGENT_MEMORY_NEO4J_PASSWORD", "AGENT_MEMORY_NEO4J_DATABASE")


def embedded_cli_env(mp: pytest.MonkeyPatch, data_dir: Path) -> None:
    """The CLI on embedded stores under ``data_dir``: rules triples, no progress bars, no server settings."""
    mp.setenv("AGENT_MEMORY_DATA_DIR", str(data_dir))
    mp.setenv("AGENT_MEMORY_NO_PROGRESS", "1")
    mp.setenv("AGENT_MEMORY_TRIPLE_EXTRACTOR", "rules")
    for name in SERVER_SETTINGS:
        mp.delenv(name, raising=False)


def run_cli(capsys, argv: list[str]) -> tuple[int, str, str]:
    """``agent-memory ARGV`` in this process: its exit code, stdout and stderr (what earlier steps printed dropped)."""
    from agent_memory.cli import main

    capsys.readouterr()
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def eval_file(name: str) -> Path:
    path = EVAL_DIR / name
    if not path.exists():
        pytest.skip(f"evaluation data {path} is not present (it lives in ../shared/eval beside the checkout)")
    return path


def ingest_dialogue(services, lines, session_id: str = "chat", timestamp: str = "1:56 pm on 8 May, 2023") -> None:
    """Ingest (speaker, text) lines as one session of turns t0, t1, … on the real stores."""
    from agent_memory.core.records import TurnRecord
    from agent_memory.ingest.pipeline import IngestionPipeline

    turns = [TurnRecord(session_id=session_id, turn_id=f"t{i}", speaker=speaker, text=text, timestamp=timestamp)
             for i, (speaker, text) in enumerate(lines)]
    IngestionPipeline(services).ingest_turns(turns)


# Days out that name meals, per language: nearer a request for a dinner recipe in meaning than a user's statement of
# what they eat (the advice and retold retrieval tests put that statement among them).
MEAL_DAYS = {
    "en": ["Had a lovely lunch at the harbour with Priya, we shared a big seafood platter.",
           "Cooked a roast chicken for my parents on Sunday, they loved it.",
           "Tried the new burger place on Elm Street with Marco after work.",
           "Grabbed a quick steak sandwich before the match on Saturday.",
           "Baked a lasagne for the office party, it went in minutes."],
    "zh": ["周日和小周在海边吃了一大盘海鲜，特别过瘾。",
           "给爸妈炖了一锅排骨汤，他们喝得很开心。",
           "下班和同事去新开的烤肉店吃了一顿。",
           "周六看球前随便吃了个牛肉汉堡。",
           "给公司聚会做了一盘红烧肉，一会儿就抢光了。"],
}
DINNER_REQUESTS = {"en": "Can you suggest something for me to cook for dinner tonight?", "zh": "今晚做点什么菜好？"}


def ingest_user_statements(services, told: dict[str, list[str]]) -> None:
    """Per tenant, each of the user's statements as a session of its own (``s-0/t0``, ``s-1/t0``, …), the n-th said
    on the 2nd of month n + 1 of 2024, on the real stores."""
    from agent_memory.core.records import TurnRecord
    from agent_memory.ingest.pipeline import IngestionPipeline

    pipeline = IngestionPipeline(services)
    for tenant, texts in told.items():
        pipeline.ingest_turns([TurnRecord(session_id=f"s-{i}", turn_id="t0", speaker="user", text=text, tenant=tenant,
                                          timestamp=f"2024/0{i + 1}/02 (Tue) 19:00")
                               for i, text in enumerate(texts)])


@contextmanager
def titled_pages_services(data_dir: Path, pages: dict[str, str]):
    """Services on real embedded stores holding ``pages`` (title → text) as titled documents with rule
    triples: the store the entity-page and link tests search."""
    from agent_memory.core.config import load_settings
    from agent_memory.core.records import Document
    from agent_memory.ingest.pipeline import IngestionPipeline
    from agent_memory.ingest.report import IngestReport
    from agent_memory.services import build_services

    settings = load_settings(data_dir=data_dir, triple_extractor="rules", qdrant_url=None, neo4j_uri=None)
    with build_services(settings) as svc:
        docs = [Document(source_id=title, text=text, title=title, metadata={"title": title})
                for title, text in pages.items()]
        report = IngestReport()
        assert IngestionPipeline(svc).ingest_documents(docs, report) == list(pages)
        assert not report.store_error
        yield svc


# One tool call and its result, as the session checks append them.
TOOL_CALL = {"role": "assistant", "content": None,
             "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
TOOL_RESULT = {"role": "tool", "tool_call_id": "c1", "content": "r"}


class FailingConnection:
    """A connection whose ``fail_at``-th message insert raises ``error`` (as a full disk would), once;
    everything else goes to the real connection."""

    def __init__(self, conn, counter: list[int], fail_at: int, error: Exception) -> None:
        self._conn, self._counter, self._fail_at, self._error = conn, counter, fail_at, error

    def execute(self, sql, params=()):
        if sql.startswith(("INSERT INTO messages", "INSERT INTO session_messages")):
            self._counter[0] += 1
            if self._counter[0] == self._fail_at:
                raise self._error
        return self._conn.execute(sql, params)

    def __getattr__(self, name):
        return getattr(self._conn, name)


def fail_an_insert(store, fail_at: int) -> None:
    """Make the store's ``fail_at``-th message insert from now on fail, inside its transaction."""
    import sqlite3

    from agent_memory.stores.sqlite_sessions import SessionStore

    counter = [0]
    if isinstance(store, SessionStore):
        store._db = FailingConnection(store._db, counter, fail_at, sqlite3.OperationalError("database or disk is full"))
        return
    import psycopg

    real = store.db.connection

    @contextmanager
    def connection():
        with real() as conn:
            yield FailingConnection(conn, counter, fail_at, psycopg.errors.DiskFull("could not extend file"))

    store.db.connection = connection


@contextmanager
def sessions_api(data_dir: Path):
    """An HTTP client of an in-process API over embedded stores in ``data_dir``, for the session routes
    (they need no model, so nothing waits for /readyz)."""
    import httpx

    from agent_memory.api import create_app
    from agent_memory.api.testing import serve_in_thread
    from agent_memory.core.config import load_settings

    settings = load_settings(data_dir=data_dir, triple_extractor="rules", llm_model=None)
    with serve_in_thread(create_app(settings)) as url, httpx.Client(base_url=url, timeout=120) as http:
        yield http


def finished_job(client, url: str, headers: dict | None = None, timeout: float = 300, every: float = 0.1) -> dict:
    """The job at ``url`` once it is neither queued nor running, polled through ``client`` every ``every`` seconds;
    an assertion (with the job as last seen) if that takes longer than ``timeout``."""
    deadline = time.monotonic() + timeout
    while (job := client.get(url, headers=headers).json())["status"] in ("queued", "running"):
        assert time.monotonic() < deadline, job
        time.sleep(every)
    return job


def api_error(response, status: int, code: str | None = None) -> str:
    """The message of an HTTP API error answer, after checking its status and (given) its ``error.code``."""
    assert response.status_code == status, response.text
    body = response.json()["error"]
    if code is not None:
        assert body["code"] == code, body
    return body["message"]


@contextmanager
def unreadable_folder(mp: pytest.MonkeyPatch, folder: Path):
    """``folder`` cannot be listed while the block runs (mode 0; for root, which lists a folder whatever
    its mode, listing it is refused as the kernel would refuse a user)."""
    with mp.context() as patch:
        if os.geteuid() == 0:
            def refused(real):
                def call(path, *args):
                    if os.path.abspath(path) == str(folder):
                        raise PermissionError(13, "Permission denied", str(path))
                    return real(path, *args)
                return call
            patch.setattr(Path, "iterdir", refused(Path.iterdir))
            patch.setattr(os, "listdir", refused(os.listdir))
        folder.chmod(0)
        try:
            yield folder
        finally:
            folder.chmod(0o755)


# Look-alikes from Unicode's confusables.txt that the tests forge with, as a reader takes them in:
# Cyrillic, Armenian, Cherokee, Lisu and Latin small capital S, modifier and ratio colons, dashes.
# Written here apart from core/lookalikes.py, so a test does not read the prompt through the guard.
_LOOKALIKES = str.maketrans({"Ѕ": "S", "ѕ": "s", "Տ": "S", "Ꮪ": "S", "Ꮥ": "S", "ꓢ": "S", "ꜱ": "s", "ƽ": "s",
                             "ː": ":", "꞉": ":", "∶": ":", "։": ":", "–": "-", "‐": "-", "−": "-", "゠": "="})
_UNDERLINE = re.compile(r"[ \t]*[=-]+[ \t]*")


def folded(text: str) -> str:
    """``text`` as a reader takes it in: format characters unseen, but tag characters read as the ASCII
    they shadow (as a model's tokenizer reads U+E0041 as "A"), compatibility forms and look-alike
    letters as their ASCII."""
    shown = "".join(chr(ord(ch) - 0xE0000) if 0xE0020 <= ord(ch) <= 0xE007E else ch for ch in text)
    return unicodedata.normalize("NFKC", "".join(ch for ch in shown if unicodedata.category(ch) != "Cf")
                                 ).translate(_LOOKALIKES)


def real_structure(prompt: str) -> tuple[list[str], int]:
    """The headings a reader of ``prompt`` sees (``#`` ones, and a line of text over a line of ``=`` or
    ``-``, listed as ``"<text> (underlined)"``), and how many of what reads as "[S:" are not real tags
    (a real tag is written ``[S:`` exactly: core/citations.py)."""
    seen = folded(prompt)
    lines = seen.splitlines()
    headings = []
    for i, line in enumerate(lines):
        if line.lstrip().startswith("#"):
            headings.append(line)
        elif i and lines[i - 1].strip() and _UNDERLINE.fullmatch(line):
            headings.append(f"{lines[i - 1].strip()} (underlined)")
    tag_like = len(re.findall(r"\[\s*[Ss]\s*:", seen))
    return headings, tag_like - len(re.findall(r"\[S:", prompt))


def write_files(root: Path, files: dict[str, str]) -> Path:
    """Each relative path under ``root`` written with its text, folders made as needed; ``root``."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def spool_an_interrupted_upload(tmp_path: Path, data_dir: Path, tenant: str, text: bytes) -> str:
    """A data dir as a stopped server leaves it with an upload job queued and never run (its spooled copy under
    ``pending-jobs``): ``text`` uploaded as ``logs/pump.md`` for ``tenant``. Returns the ID its client was given."""
    import threading

    from agent_memory.stores.job_spool import SpooledJobs
    from agent_memory.stores.jobs import JobRegistry, JobSpec

    stuck = threading.Event()
    stopped = SpooledJobs(JobRegistry(lambda spec, job: stuck.wait(30) and {}, stop_wait_s=0), data_dir / "pending-jobs")
    upload = tmp_path / "request" / "pump.md"
    upload.parent.mkdir(parents=True, exist_ok=True)
    upload.write_bytes(text)
    job = stopped.submit(JobSpec(tenant, "upload", "logs/pump.md", len(text),
                                 {"filename": "logs/pump.md", "metadata": {}, "origin": None}, path=upload))
    stopped.close()
    stuck.set()
    return job.id
