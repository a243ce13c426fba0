"""Issue 32, storage faults: a full disk, a corrupted catalog, a read-only data dir. Each becomes a
503 ``store_error`` with its reason (a CLI: one line, the traceback only with ``-v``), never a
crash or a 500, and what was acknowledged stays."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest

os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")

from agent_memory.api.testing import serve_in_subprocess, wait_ready  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
ENV = {"AGENT_MEMORY_TRIPLE_EXTRACTOR": "none", "AGENT_MEMORY_QDRANT_URL": None, "AGENT_MEMORY_NEO4J_URI": None,
       "AGENT_MEMORY_POSTGRES_URL": None, "AGENT_MEMORY_LLM_MODEL": None, "AGENT_MEMORY_API_KEYS": None,
       "AGENT_MEMORY_NO_PROGRESS": "1"}
RESERVE_MB = 16


@pytest.fixture
def small_fs(tmp_path):
    """A 192 MB tmpfs (root only; a new data dir preallocates about 100 MB: each Edge collection's in-memory
    payload storage persists into a 32 MB page); skipped where it cannot be mounted."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=192m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {done.stderr.decode().strip() or done.returncode}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def _free_mb(path: Path) -> float:
    stat = os.statvfs(path)
    return stat.f_bavail * stat.f_frsize / 1048576


def test_a_full_disk_is_a_503_and_every_acknowledged_write_stays(small_fs, tmp_path):
    data_dir = small_fs / "data"
    env = {**ENV, "AGENT_MEMORY_MIN_FREE_MB": str(RESERVE_MB)}
    with serve_in_subprocess(data_dir, env=env, log=tmp_path / "serve.log") as url, \
            httpx.Client(base_url=url, timeout=120) as http:
        wait_ready(http)
        first = http.post("/v1/documents", json={"source_id": "doc-0", "text": "The first note mentions Velmora."})
        assert first.status_code == 200, first.text
        # Ballast leaves a little more than the reserve (1.5 MB): the writes below cross it.
        ballast = small_fs / "ballast"
        with ballast.open("wb") as out:
            out.write(b"\0" * int(max(0.0, _free_mb(small_fs) - RESERVE_MB - 1.5) * 1048576))
        acknowledged, appended, refused = ["doc-0"], 0, []
        for n in range(1, 400):
            # Words no two notes share, 25 of them: a note and a message take about 0.2 MB of the disk (mostly the
            # stores' own bookkeeping), so some eight are acknowledged before the reserve is crossed; notes of 400
            # such words took 0.85 MB each, and ten times as long to store.
            text = f"Note {n} about the harbour of Velmora: " + " ".join(uuid.uuid4().hex for _ in range(25))
            posted = http.post("/v1/documents", json={"source_id": f"doc-{n}", "text": text})
            message = http.post("/v1/sessions/s-full/messages",
                                json={"message": {"role": "user", "content": f"message {n}: {text[:2000]}"}})
            for response in (posted, message):
                assert response.status_code in (200, 503), response.text
                if response.status_code == 503:
                    assert response.json()["error"]["code"] == "store_error", response.text
                    refused.append(response.json()["error"]["message"])
            acknowledged += [f"doc-{n}"] if posted.status_code == 200 else []
            appended += message.status_code == 200
            if posted.status_code == 503 and message.status_code == 503:
                break
        assert refused and "reserve" in refused[-1] and str(data_dir) not in refused[-1]
        # The process lives, reads go on, and everything acknowledged is there.
        assert http.get("/healthz").status_code == 200
        for source_id in acknowledged:
            assert http.get(f"/v1/sources/{source_id}").status_code == 200, source_id
        assert http.get("/v1/sessions/s-full/view?budget=1000000").status_code == 200
        asked = http.post("/v1/ask", json={"question": "What does the first note mention?", "budget": 400})
        assert asked.status_code == 200, asked.text
        # Space again: writes resume.
        ballast.unlink()
        again = http.post("/v1/documents", json={"source_id": "doc-after", "text": "Written after space came back."})
        assert again.status_code == 200, again.text
        # Every acknowledged message is stored, and no refused one: the next takes the next number.
        later = http.post("/v1/sessions/s-full/messages", json={"message": {"role": "user", "content": "later"}})
        assert later.status_code == 200 and later.json()["seq"] == appended, later.text
    assert "reserve" in (tmp_path / "serve.log").read_text()  # the refusal was logged


def _cli(data_dir: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ENV}
    env.update({k: v for k, v in ENV.items() if v is not None})
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "agent_memory.cli", "--data-dir", str(data_dir), *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def _corrupt(path: Path) -> None:
    path.write_bytes(b"this is not a SQLite database " * 200)
    for extra in ("-wal", "-shm"):
        Path(str(path) + extra).unlink(missing_ok=True)


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    """A data dir holding the sample docs, ingested once (by the CLI, in this process) for the tests to copy."""
    from agent_memory.cli import main
    from tests.helpers import embedded_cli_env

    data_dir = tmp_path_factory.mktemp("issue32") / "data"
    with pytest.MonkeyPatch.context() as mp:
        embedded_cli_env(mp, data_dir)
        mp.chdir(ROOT)  # where _cli runs the CLI
        for name, value in ENV.items():
            if value is None:
                mp.delenv(name, raising=False)
            else:
                mp.setenv(name, value)
        assert main(["ingest", str(ROOT / "agent_memory" / "samples" / "docs")]) == 0
    return data_dir


def _copy_of(ingested: Path, tmp_path: Path) -> Path:
    """A data dir of the test's own, holding what ``ingested`` holds."""
    shutil.copytree(ingested, tmp_path / "data")
    return tmp_path / "data"


def test_a_corrupted_catalog_is_a_store_error_on_every_surface(ingested, tmp_path):
    data_dir = _copy_of(ingested, tmp_path)
    _corrupt(data_dir / "catalog.sqlite")
    # CLI: one line naming the fault; the traceback only with -v.
    listed = _cli(data_dir, "stats")
    assert listed.returncode != 0 and "Traceback" not in listed.stderr, listed.stderr
    lines = [line for line in listed.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "catalog" in lines[0] and "not a database" in lines[0], listed.stderr
    assert "Traceback" in _cli(data_dir, "-v", "stats").stderr
    # HTTP: readyz says why; documents and ask are 503 store_error with the reason, not 500.
    with serve_in_subprocess(data_dir, env=ENV, log=tmp_path / "serve.log") as url, \
            httpx.Client(base_url=url, timeout=120) as http:
        ready = http.get("/readyz")
        deadline = time.monotonic() + 120  # the warm-up's end, however slow the machine: a poll, not a timing
        while not ("catalog" in ready.text and "loading" not in ready.text) and time.monotonic() < deadline:
            time.sleep(0.1)
            ready = http.get("/readyz")
        assert ready.status_code == 503 and "not a database" in ready.text
        for response in (http.post("/v1/documents", json={"source_id": "x", "text": "A new note."}),
                         http.post("/v1/ask", json={"question": "Which vector store is embedded?"}),
                         http.get("/v1/sources/x")):
            assert response.status_code == 503, response.text
            error = response.json()["error"]
            assert error["code"] == "store_error" and "not a database" in error["message"], error
            assert str(data_dir) not in error["message"]
        assert http.get("/healthz").status_code == 200


def test_a_read_only_data_dir_is_one_clear_cli_line(ingested, tmp_path):
    data_dir = _copy_of(ingested, tmp_path)
    readonly = tmp_path / "ro"
    readonly.mkdir()
    done = subprocess.run(["mount", "--bind", "-o", "ro", str(data_dir), str(readonly)], capture_output=True)
    if done.returncode != 0:
        shutil.rmtree(readonly)
        pytest.skip(f"cannot bind-mount read-only here: {done.stderr.decode().strip()}")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(readonly)], capture_output=True)
        ingest = _cli(readonly, "ingest", str(ROOT / "agent_memory" / "samples" / "docs" / "embedded-stores.md"))
        assert ingest.returncode != 0 and "Traceback" not in ingest.stderr, ingest.stderr
        assert [line for line in ingest.stderr.splitlines() if line.startswith("error:")], ingest.stderr
    finally:
        subprocess.run(["umount", "-l", str(readonly)], capture_output=True)


def test_a_new_data_dir_on_a_small_disk_is_refused_naming_the_space_it_needs(tmp_path, monkeypatch, capsys):
    """A new collection's files take about 48 MB at once on some filesystems (tmpfs): on an 80 MB disk, above
    the 64 MB reserve, the first ingest died of SIGBUS with no message. The free space read is injected."""
    from agent_memory.core import diskspace
    from tests.helpers import embedded_cli_env, run_cli

    embedded_cli_env(monkeypatch, tmp_path / "data")
    note = tmp_path / "note.md"
    note.write_text("The X-300 sensor replaced the X-200 in March.")
    monkeypatch.setattr(diskspace, "free_bytes", lambda path: 80 * 1048576)
    code, _, err = run_cli(capsys, ["ingest", str(note)])
    assert code != 0 and "Traceback" not in err
    assert "80.0 MB free" in err and "112 MB in all" in err and "AGENT_MEMORY_MIN_FREE_MB" in err, err
    assert not list((tmp_path / "data").glob("qdrant-edge/*/segments"))  # no shard begun
    monkeypatch.setattr(diskspace, "free_bytes", lambda path: 113 * 1048576)
    code, _, err = run_cli(capsys, ["ingest", str(note)])
    assert code == 0, err
