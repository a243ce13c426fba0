"""`agent-memory backup DEST`: a consistent copy of an embedded data dir that opens as it is: taken by the CLI
on a data dir no process holds, by the server that owns it, and by ``Memory.backup`` while a writer appends
(the catalog, the vectors and the sessions of the copy agree); on a server with API keys, from an admin key alone;
refused before it starts for a destination that holds anything or cannot be written, and for stores on servers
(naming their own backup tools)."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from pathlib import Path

import httpx
import pytest

from agent_memory import Memory
from agent_memory.api import create_app
from agent_memory.api.testing import serve_in_thread, wait_ready
from agent_memory.core.config import load_settings
from agent_memory.core.records import SearchFilter
from agent_memory.services import build_services
from tests.helpers import embedded_cli_env, run_cli

NOTES = {"notes/pumps": "Pump P-7 in Hall Nordwerk moves 40 litres a minute since the March overhaul.",
         "notes/scanner": "Scanner Quovadis counted 44 pallets in Hall Nordwerk on Tuesday."}
MESSAGES = ["Hi, I am setting up the Oslo office.", "My locker combination at the Oslo office is 7741.",
            "Noted: locker combination 7741 at the Oslo office.", "Which hall holds pump P-7 again?"]
QUESTION = "What is my locker combination at the Oslo office, and how much does pump P-7 move?"


def _fill(data_dir: Path) -> None:
    with Memory(data_dir=data_dir, tenant="acme") as memory:
        for source_id, text in NOTES.items():
            memory.add(text, source_id=source_id)
        for n, content in enumerate(MESSAGES):
            memory.add_message("oslo", {"role": "user" if n % 2 == 0 else "assistant", "content": content})


def _answers(data_dir: Path) -> tuple[str, list[dict]]:
    with Memory(data_dir=data_dir, tenant="acme") as memory:
        return memory.prompt(QUESTION, session_id="oslo", budget=600).prompt, memory.view("oslo", budget=2000)


@pytest.fixture
def cli_env(tmp_path, monkeypatch):
    embedded_cli_env(monkeypatch, tmp_path / "data")
    return tmp_path


def test_a_backup_opens_as_the_data_dir_it_copies(cli_env, capsys):
    source, copy = cli_env / "data", cli_env / "backup"
    _fill(source)
    code, out, err = run_cli(capsys, ["backup", str(copy)])
    assert code == 0, err
    report = json.loads(out)
    assert report["destination"] == str(copy.resolve()) and report["sources"] >= 6 and report["items"] >= 6
    assert {"catalog.sqlite", "sessions.sqlite3", "graph", "index-format.json"} <= set(report["copied"])
    assert any(name.startswith("qdrant-edge/memory_") for name in report["copied"])
    # The lock and the embedding cache stay behind; no SQLite log is needed beside the copies.
    assert sorted(p.name for p in copy.iterdir()) == ["catalog.sqlite", "graph", "index-format.json",
                                                      "qdrant-edge", "sessions.sqlite3"]
    assert _answers(copy) == _answers(source)
    code, out, _ = run_cli(capsys, ["--data-dir", str(copy), "stats", "--tenant", "acme"])
    assert code == 0 and json.loads(out)["sources"] == 6

    code, _, err = run_cli(capsys, ["backup", str(copy)])  # never over files
    assert code == 2 and f"{copy.resolve()} is not empty" in err
    code, _, err = run_cli(capsys, ["backup", str(source / "inside")])
    assert code == 2 and "inside the data dir" in err and not (source / "inside").exists()


def test_a_backup_taken_while_a_writer_appends_holds_a_catalog_and_vectors_that_agree(cli_env, capsys):
    tmp_path = cli_env
    source, copy = tmp_path / "data", tmp_path / "backup"
    settings = load_settings(data_dir=source, triple_extractor="rules", qdrant_url=None, neo4j_uri=None,
                             postgres_url=None)
    written, stop = [], threading.Event()
    with Memory(settings=settings, tenant="acme") as memory:
        def write() -> None:
            while not stop.is_set():
                n = len(written)
                if n % 2:
                    memory.add(f"Shipment {n} left Hall Nordwerk with {n * 3} pallets.", source_id=f"live/doc-{n}")
                else:
                    memory.add_message("live", {"role": "user", "content": f"Checkpoint {n}: gate {n} is clear."})
                written.append(n)

        writer = threading.Thread(target=write)
        writer.start()
        try:
            while len(written) < 4:
                stop.wait(0.05)
            report = memory.backup(copy)
            before = len(written)
            while len(written) < before + 4:  # the writer went on after the copy
                stop.wait(0.05)
        finally:
            stop.set()
            writer.join()
    assert report["sources"] and report["items"]
    catalog = sqlite3.connect(copy / "catalog.sqlite")
    entries = {sid: json.loads(items) for sid, items in
               catalog.execute("SELECT source_id, item_ids FROM sources WHERE tenant = 'acme'")}
    catalog.close()
    copied_settings = settings.model_copy(update={"data_dir": copy})
    with build_services(copied_settings) as services:
        stored = {item.id: item.source_id for item in services.vectors.scroll(SearchFilter(tenant="acme"))}
        archived = services.sessions.store.archived_through(("acme/live", ""))
        messages = len(services.sessions.store.load_messages(("acme/live", "")))
    assert len(stored) == report["items"]
    assert set(stored.values()) <= set(entries)  # every item's source is in the catalog: forget finds it
    assert {i for ids in entries.values() for i in ids} <= set(stored)  # every catalog item is searchable
    # No message is marked archived that the copy's long-term memory lacks.
    assert archived < messages and {f"live/m{seq}" for seq in range(archived + 1)} <= set(stored.values())
    code, out, err = run_cli(capsys, ["--data-dir", str(copy), "check"])  # the catalog, vectors and graph agree
    assert code == 0 and json.loads(out)["ok"], out + err


def test_a_backup_through_the_server_that_owns_the_data_dir(cli_env, capsys):
    source, copy = cli_env / "data", cli_env / "backup"
    _fill(source)
    settings = load_settings(data_dir=source)
    with serve_in_thread(create_app(settings), owns=source) as url, httpx.Client(base_url=url, timeout=60) as http:
        wait_ready(http)
        code, out, err = run_cli(capsys, ["backup", str(copy)])
        assert code == 0, err
        assert "served by" in err and json.loads(out)["destination"] == str(copy.resolve())
        relative = http.post("/v1/backup", json={"destination": "relative/folder"})
        assert relative.status_code == 422 and "absolute" in relative.json()["error"]["message"]
        taken = http.post("/v1/backup", json={"destination": str(copy)})
        assert taken.status_code == 400 and "is not empty" in taken.json()["error"]["message"]
        http.post("/v1/documents", json={"source_id": "notes/after", "text": "Written after the backup."})
    with build_services(settings.model_copy(update={"data_dir": copy})) as services:
        assert services.catalog.count("acme") == 6 and services.catalog.get("acme", "notes/after") is None


ACME_KEY, GLOBEX_KEY, ADMIN_KEY = "key-acme-0123456789abcdef", "key-globex-0123456789abcdef", "adm-0123456789abcdef"


def _wait(http: httpx.Client, accepted: httpx.Response, key: str) -> dict:
    assert accepted.status_code == 202, accepted.text
    for _ in range(600):
        job = http.get(accepted.json()["url"], headers={"X-API-Key": key}).json()
        if job["status"] in ("done", "failed"):
            return job
        threading.Event().wait(0.1)
    raise AssertionError(f"the job did not end: {job}")


def test_a_server_with_api_keys_takes_a_backup_from_an_admin_key_alone(cli_env, capsys, monkeypatch):
    source = cli_env / "data"
    _fill(source)
    with Memory(data_dir=source, tenant="globex") as memory:
        memory.add("Globex ships turbines from Hall Sud.", source_id="notes/turbines")
    settings = load_settings(data_dir=source, api_keys={ACME_KEY: "acme", GLOBEX_KEY: "globex"},
                             admin_keys=[ADMIN_KEY])
    with serve_in_thread(create_app(settings), owns=source) as url, httpx.Client(base_url=url, timeout=60) as http:
        wait_ready(http)
        # A tenant's key: 403, saying an admin key is needed and how to configure one; nothing is copied.
        refused = http.post("/v1/backup", json={"destination": str(cli_env / "by-tenant")},
                            headers={"X-API-Key": ACME_KEY})
        message = refused.json()["error"]["message"]
        assert refused.status_code == 403 and "admin key" in message and "AGENT_MEMORY_ADMIN_KEYS" in message
        assert "'acme'" in message and not (cli_env / "by-tenant").exists()
        # The admin key: the job is queued, read back with that key (a tenant's key does not find it).
        accepted = http.post("/v1/backup", json={"destination": str(cli_env / "by-admin")},
                             headers={"Authorization": f"Bearer {ADMIN_KEY}"})
        job = _wait(http, accepted, ADMIN_KEY)
        assert job["status"] == "done" and job["result"]["sources"] == 7, job
        assert http.get(accepted.json()["url"], headers={"X-API-Key": ACME_KEY}).status_code == 404
        # An admin key is no tenant's key: it reads and writes no tenant's memory.
        for method, path in (("GET", "/v1/stats"), ("GET", "/v1/whoami"), ("POST", "/v1/search")):
            answer = http.request(method, path, headers={"X-API-Key": ADMIN_KEY}, json={"query": "pumps"})
            assert answer.status_code == 403 and "an admin key reaches none" in answer.json()["error"]["message"]
        # The check: a tenant's key checks its tenant, the admin key every tenant.
        mine = http.post("/v1/check", headers={"X-API-Key": ACME_KEY}).json()
        every = http.post("/v1/check", headers={"X-API-Key": ADMIN_KEY}).json()
        assert set(mine["tenants"]) == {"acme"} and set(every["tenants"]) == {"acme", "globex"}
        assert every["ok"] and every["tenants"]["globex"]["catalog_sources"] == 1

        # The CLI through the server that owns the data dir: the admin key from AGENT_MEMORY_ADMIN_KEY.
        monkeypatch.setenv("AGENT_MEMORY_API_KEY", ACME_KEY)
        code, _, err = run_cli(capsys, ["backup", str(cli_env / "cli-tenant")])
        assert code != 0 and "AGENT_MEMORY_ADMIN_KEY" in err and not (cli_env / "cli-tenant").exists()
        monkeypatch.setenv("AGENT_MEMORY_ADMIN_KEY", "not-an-admin-key-0123456789")
        code, _, err = run_cli(capsys, ["backup", str(cli_env / "cli-wrong")])
        assert code == 2 and "refused the admin key in AGENT_MEMORY_ADMIN_KEY" in err
        assert "not-an-admin-key" not in err
        code, _, err = run_cli(capsys, ["check"])
        assert code == 2 and "refused the admin key in AGENT_MEMORY_ADMIN_KEY" in err
        monkeypatch.setenv("AGENT_MEMORY_ADMIN_KEY", ADMIN_KEY)
        code, out, err = run_cli(capsys, ["backup", str(cli_env / "cli-admin")])
        assert code == 0, err
        assert json.loads(out)["destination"] == str((cli_env / "cli-admin").resolve())
        # check: the admin key checks every tenant; with --tenant, the API key's tenant is checked.
        code, out, err = run_cli(capsys, ["check"])
        assert code == 0, err
        assert set(json.loads(out)["tenants"]) == {"acme", "globex"}
        code, out, err = run_cli(capsys, ["check", "--tenant", "acme"])
        assert code == 0, err
        assert set(json.loads(out)["tenants"]) == {"acme"}
    with build_services(settings.model_copy(update={"data_dir": cli_env / "cli-admin"})) as services:
        assert services.catalog.count("acme") == 6 and services.catalog.count("globex") == 1


def test_an_unusable_destination_is_refused_before_a_job_starts(cli_env, capsys):
    source = cli_env / "data"
    _fill(source)
    a_file = cli_env / "a-file"
    a_file.write_text("not a folder")
    unusable = {"/proc/agent-memory-backup": "takes no new folder", str(a_file): "is no folder",
                str(a_file / "below"): f"{a_file} is a file, not a folder",
                str(source / "inside"): "inside the data dir"}
    settings = load_settings(data_dir=source)
    with serve_in_thread(create_app(settings, warm=False)) as url, httpx.Client(base_url=url, timeout=60) as http:
        for destination, reason in unusable.items():
            refused = http.post("/v1/backup", json={"destination": destination})
            message = refused.json()["error"]["message"]
            assert refused.status_code == 400 and reason in message, message
            assert Path(destination).name in message
    for destination, reason in unusable.items():  # the CLI on the data dir says the same
        code, _, err = run_cli(capsys, ["backup", destination])
        assert code == 2 and reason in err, err
    # Through the server that owns the data dir (this machine's), the refusal names the data dir the user
    # named, not the "<data dir>" the server shows its clients.
    with serve_in_thread(create_app(settings, warm=False), owns=source):
        code, _, err = run_cli(capsys, ["backup", str(source / "inside")])
        assert code != 0 and "inside the data dir" in err and str(source.resolve()) in err, err
        assert "<data dir>" not in err
    assert not Path("/proc/agent-memory-backup").exists() and not (source / "inside").exists()


def test_a_destination_the_system_cannot_look_up_is_refused_naming_it(cli_env, capsys):
    """A name past the file system's length limit was a 500 through the API (the stat's ENAMETOOLONG) and an
    unexpected OSError from the CLI; a NUL byte a bare 'embedded null byte'. Now each is refused, naming it."""
    source = cli_env / "data"
    _fill(source)
    too_long = "/tmp/" + "n" * 300
    refusals = {too_long: "File name too long", too_long + "/below": "File name too long",
                "/tmp/a\x00b": "embedded null byte"}
    settings = load_settings(data_dir=source)
    with serve_in_thread(create_app(settings, warm=False)) as url, httpx.Client(base_url=url, timeout=60) as http:
        for destination, reason in refusals.items():
            refused = http.post("/v1/backup", json={"destination": destination})
            message = refused.json()["error"]["message"]
            assert refused.status_code == 400 and reason in message and repr(destination) in message, message
    for destination in (too_long, too_long + "/below", "~no-such-user-here/backup"):
        code, _, err = run_cli(capsys, ["backup", destination])
        assert code == 2 and "is no path this system can use" in err and repr(destination) in err, err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a folder without write permission")
def test_a_read_only_destination_is_refused_before_a_job_starts(cli_env, capsys):
    _fill(cli_env / "data")
    locked = cli_env / "locked"
    locked.mkdir(mode=0o555)
    try:
        code, _, err = run_cli(capsys, ["backup", str(locked / "backup")])
        assert code == 2 and "cannot be written" in err and str(locked) in err
        code, _, err = run_cli(capsys, ["backup", str(locked)])
        assert code == 2 and "takes no new file" in err
    finally:
        locked.chmod(0o755)


def test_the_report_counts_sources_and_files_apart(cli_env, capsys):
    source = cli_env / "data"
    _fill(source)  # 2 documents and 4 turns: 6 sources
    (cli_env / "manual.md").write_text("# Pump P-7\n\nOil the bearings every 200 hours.\n")
    (cli_env / "records.jsonl").write_text('{"id": "r1", "text": "Gate 3 closes at 18:00."}\n'
                                           '{"id": "r2", "text": "Gate 4 closes at 20:00."}\n')
    code, _, err = run_cli(capsys, ["ingest", str(cli_env / "manual.md"), str(cli_env / "records.jsonl"),
                                    "--tenant", "acme"])
    assert code == 0, err
    code, out, err = run_cli(capsys, ["backup", str(cli_env / "backup")])
    assert code == 0, err
    report = json.loads(out)
    # The text file is a source; the JSONL file holds two. Each file's record counts as a file, not a source.
    code, checked, _ = run_cli(capsys, ["check", "--tenant", "acme"])
    assert report["files"] == 2 and report["sources"] == json.loads(checked)["tenants"]["acme"]["catalog_sources"]
    assert report["sources"] == 6 + 1 + 2


def test_a_deployment_on_servers_is_refused_naming_their_backup_tools(cli_env, capsys, monkeypatch):
    (cli_env / "data").mkdir()
    monkeypatch.setenv("AGENT_MEMORY_QDRANT_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("AGENT_MEMORY_NEO4J_URI", "bolt://127.0.0.1:9")
    code, _, err = run_cli(capsys, ["backup", str(cli_env / "backup")])
    assert code == 2 and "snapshots" in err and "neo4j-admin database dump" in err
    assert not (cli_env / "backup").exists()


def test_a_backup_the_disk_cannot_hold_is_refused_before_it_writes(cli_env, capsys, monkeypatch):
    from agent_memory.core import diskspace

    _fill(cli_env / "data")
    monkeypatch.setattr(diskspace, "free_bytes", lambda path: 1048576)  # the free space read is injected
    code, _, err = run_cli(capsys, ["backup", str(cli_env / "backup")])
    assert code == 2 and "the backup needs about" in err and "1.0 MB free" in err
    assert "AGENT_MEMORY_MIN_FREE_MB" in err  # the same filesystem as the data dir: its reserve is kept
    assert not (cli_env / "backup").exists()


def test_a_failed_backup_leaves_nothing_at_its_destination(cli_env, capsys, monkeypatch):
    from agent_memory.core.errors import StoreError
    from agent_memory.stores.ladybug_graph import LadybugGraphStore

    def fail(self, path):
        raise StoreError("copying the LadybugDB graph failed: disk gone")

    _fill(cli_env / "data")
    monkeypatch.setattr(LadybugGraphStore, "snapshot_to", fail)  # after the catalog, sessions and vectors
    given = cli_env / "given"
    given.mkdir()
    code, _, err = run_cli(capsys, ["backup", str(given)])
    assert code == 2 and "disk gone" in err
    assert given.is_dir() and not list(given.iterdir())  # the empty folder given stays, emptied
    code, _, err = run_cli(capsys, ["backup", str(cli_env / "new" / "backup")])
    assert code == 2 and not (cli_env / "new" / "backup").exists()
