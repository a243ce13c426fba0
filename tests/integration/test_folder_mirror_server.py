"""A folder job through the server that owns the data dir mirrors the folder as a local one does
(test_folder_mirror.py): the stored files its walk would reach that are gone from the client's disk are
forgotten from every store, and only those; ``--keep-missing`` keeps them. The CLI asks the server which
files it recorded under the folder (``GET /v1/files``), checks them on its own disk and forgets the gone
ones by ID, a batch in one request (``DELETE /v1/sources?file_ids=``; ingest/missing.py). A failure to list or forget is in the report, never a crash."""

from __future__ import annotations

import json

import httpx
import pytest

from agent_memory.api import create_app
from agent_memory.api.testing import serve_in_thread
from agent_memory.cli import main
from agent_memory.core.config import load_settings
from agent_memory.core.errors import StoreUnavailableError
from agent_memory.remote import KEY_ENV, RemoteError, RemoteMemory
from tests.helpers import embedded_cli_env, unreadable_folder

TEAM = "# Team\n\nOrla Vance leads the Kestrel platform team in Lyon.\n"
ALL = ["notes/budget.md", "notes/sub/deep.md", "notes/team.md", "notes/todo.txt"]


@pytest.fixture()
def served(tmp_path, monkeypatch):
    """The notes folder, and a server in this process owning the CLI's data dir (as `serve` would)."""
    data = tmp_path / "data"
    embedded_cli_env(monkeypatch, data)
    monkeypatch.delenv(KEY_ENV, raising=False)
    notes = tmp_path / "notes"
    (notes / "sub").mkdir(parents=True)
    (notes / "team.md").write_text(TEAM)
    (notes / "budget.md").write_text("# Budget\n\nThe Heron project budget is 40,000 euros for 2026.\n")
    (notes / "todo.txt").write_text("Renew the Pelican domain before March.\n")
    (notes / "sub" / "deep.md").write_text("# Deep\n\nThe Osprey archive lives on the Tromso server.\n")
    monkeypatch.chdir(tmp_path)
    with serve_in_thread(create_app(load_settings(data_dir=data), warm=False), owns=data) as url:
        yield tmp_path, url


def ingest(capsys, *argv) -> tuple[int, dict, str]:
    capsys.readouterr()
    code = main(["ingest", *argv, "--json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err


def listed(capsys, *server: str) -> list[str]:
    capsys.readouterr()
    assert main([*server, "list"]) == 0
    return [r["source_id"] for r in json.loads(capsys.readouterr().out)["sources"]]


def test_a_renamed_file_is_forgotten_through_the_server(served, capsys):
    root, _ = served
    code, report, err = ingest(capsys, "notes", "-r")
    assert code == 0 and report["files_ingested"] == 4 and "working through its HTTP API" in err, err
    (root / "notes" / "team.md").rename(root / "notes" / "crew.md")
    code, report, _ = ingest(capsys, "notes", "-r")
    assert code == 0 and report["gone_from_disk"] == ["notes/team.md"], report
    assert report["files_ingested"] == 1 and report["files_unchanged"] == 3 and report["sources_removed"] >= 1
    assert [str(root / "notes" / "team.md"), "removed: gone from disk"] in report["files"]
    assert not [w for w in report["warnings"] if "gone from disk" in w]
    assert listed(capsys) == ["notes/budget.md", "notes/crew.md", "notes/sub/deep.md", "notes/todo.txt"]
    capsys.readouterr()
    assert main(["inspect", str(root / "notes" / "team.md")]) == 1  # no manifest records that path now
    capsys.readouterr()
    assert main(["prompt", "--json", "Who leads the Kestrel platform team?", "--budget", "400"]) == 0
    result = json.loads(capsys.readouterr().out)
    cited = {p["source_id"] for p in result["passages"]}
    assert "notes/crew.md" in cited and "notes/team.md" not in cited and "notes/team.md" not in result["prompt"]


def test_a_deleted_file_is_kept_with_keep_missing_through_the_server(served, capsys):
    root, _ = served
    assert ingest(capsys, "notes", "-r")[0] == 0
    (root / "notes" / "budget.md").unlink()
    code, report, _ = ingest(capsys, "notes", "-r", "--keep-missing")
    assert code == 0 and report["gone_from_disk"] == [] and not report["warnings"] and listed(capsys) == ALL
    capsys.readouterr()
    assert main(["-v", "ingest", "notes", "-r"]) == 0
    out = capsys.readouterr().out
    assert "removed, gone from disk: 1" in out and "gone from disk: notes/budget.md" in out
    assert listed(capsys) == ALL[1:]


def test_only_what_this_walk_reaches_is_removed_through_the_server(served, capsys):
    root, url = served
    (root / "notes2").mkdir()
    (root / "notes2" / "other.md").write_text("# Other\n\nThe Crane depot opens at six.\n")
    assert ingest(capsys, "notes", "notes2", "-r")[0] == 0
    with RemoteMemory(url) as remote:  # no file behind it, though its ID reads as a path under the folder
        remote.add("Typed note: the Finch meeting moved to Friday.", source_id="notes/typed.md")
    everything = sorted([*ALL, "notes/typed.md", "notes2/other.md"])
    (root / "notes2" / "other.md").unlink()  # gone, but under notes2/, not notes/
    (root / "notes" / "todo.txt").unlink()
    (root / "notes" / "sub" / "deep.md").unlink()
    # Outside the glob, and below the folder without -r: not this walk's files.
    code, report, _ = ingest(capsys, "notes", "--glob", "*.md")
    assert code == 0 and report["gone_from_disk"] == [] and listed(capsys) == everything
    # Files given one by one never remove anything, and keep the IDs their folder job gave them.
    code, report, _ = ingest(capsys, "notes/team.md", "notes/budget.md")
    assert code == 0 and report["gone_from_disk"] == [] and listed(capsys) == everything
    code, report, _ = ingest(capsys, "notes", "--glob", "*.txt")  # the walk reaches todo.txt now
    assert report["gone_from_disk"] == ["notes/todo.txt"]
    code, report, _ = ingest(capsys, "notes", "-r")
    assert report["gone_from_disk"] == ["notes/sub/deep.md"]
    assert listed(capsys) == ["notes/budget.md", "notes/team.md", "notes/typed.md", "notes2/other.md"]


def test_a_missing_folder_forgets_nothing_through_the_server(served, capsys):
    root, _ = served
    assert ingest(capsys, "notes", "-r")[0] == 0
    (root / "notes").rename(root / "moved-away")
    code, report, _ = ingest(capsys, "notes", "-r")
    assert code == 1 and report["paths_missing"] == ["notes"] and report["gone_from_disk"] == []
    assert listed(capsys) == ALL


def test_an_unreadable_folder_forgets_nothing_through_the_server(served, capsys, monkeypatch):
    root, _ = served
    assert ingest(capsys, "notes", "-r")[0] == 0
    (root / "notes" / "todo.txt").unlink()  # gone, yet a folder that cannot be listed vouches for nothing
    folder = root / "notes"
    with unreadable_folder(monkeypatch, folder):
        code, report, _ = ingest(capsys, "notes", "-r")
    assert code == 1 and report["gone_from_disk"] == [] and "unreadable folder" in report["files_failed"][0][1]
    assert listed(capsys) == ALL


def test_a_server_named_with_dash_dash_server_says_gone_files_were_not_looked_for(served, capsys):
    root, url = served
    # --server: no client_path is sent (the server may be on another machine), so no path is recorded.
    capsys.readouterr()
    assert main(["--server", url, "ingest", "--json", "notes", "-r"]) == 0
    (root / "notes" / "todo.txt").unlink()
    capsys.readouterr()
    assert main(["--server", url, "ingest", "--json", "notes", "-r"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["gone_from_disk"] == [] and "notes/todo.txt" in listed(capsys, "--server", url)
    (note,) = [w for w in report["warnings"] if "gone from disk" in w]
    assert "not looked for" in note and "--server" in note and url in note
    capsys.readouterr()
    assert main(["--server", url, "ingest", "--json", "notes", "-r", "--keep-missing"]) == 0
    assert not json.loads(capsys.readouterr().out)["warnings"]


def test_failures_to_list_or_forget_are_in_the_report(served, capsys, monkeypatch):
    root, _ = served
    assert ingest(capsys, "notes", "-r")[0] == 0
    (root / "notes" / "todo.txt").unlink()
    gone = str(root / "notes" / "todo.txt")

    def refused(*_args, **_kwargs):
        raise RemoteError(503, "store_unavailable", "the catalog did not answer")

    with monkeypatch.context() as patch:  # the listing fails: a warning, nothing forgotten, the job goes on
        patch.setattr(RemoteMemory, "files_under", refused)
        code, report, _ = ingest(capsys, "notes", "-r")
    assert code == 0 and report["gone_from_disk"] == [] and report["files_unchanged"] == 3
    # Each step that needed the listing says so: gone files not looked for, IDs not read.
    assert len(report["warnings"]) == 2
    assert all(str(root / "notes") in w and "the catalog did not answer" in w for w in report["warnings"])
    assert listed(capsys) == ALL

    with monkeypatch.context() as patch:  # the forget fails: a failure of the job naming the file
        patch.setattr(RemoteMemory, "forget_files", refused)
        code, report, _ = ingest(capsys, "notes", "-r")
    assert code == 1 and report["gone_from_disk"] == [] and [gone, "failed"] in report["files"]
    assert report["files_failed"][0][0] == gone and "'notes/todo.txt'" in report["files_failed"][0][1]
    assert listed(capsys) == ALL

    def unreachable(*_args, **_kwargs):
        raise StoreUnavailableError("the server did not answer: connection refused")

    with monkeypatch.context() as patch:  # the server stops answering: the job stops before any upload
        patch.setattr(RemoteMemory, "files_under", unreachable)
        code, report, _ = ingest(capsys, "notes", "-r")
    assert code == 1 and "connection refused" in report["store_error"] and report["gone_from_disk"] == []
    assert {outcome for _, outcome in report["files"]} == {"not attempted"}
    assert listed(capsys) == ALL


def test_gone_files_are_forgotten_a_batch_per_request(served, capsys, monkeypatch):
    root, _ = served
    many = root / "notes" / "many"
    many.mkdir()
    for n in range(12):
        (many / f"note-{n:02}.md").write_text(f"# Note {n}\n\nThe Heron depot {n} opens at {n}:00.\n")
    assert ingest(capsys, "notes", "-r")[0] == 0
    gone = [f"notes/many/note-{n:02}.md" for n in (1, 4, 5, 8, 11)]
    for file_id in gone:
        (root / file_id).unlink()
    requests = []
    real = RemoteMemory.request

    def counted(self, method, path, **kwargs):
        requests.append((method, path))
        return real(self, method, path, **kwargs)

    monkeypatch.setattr(RemoteMemory, "request", counted)
    code, report, _ = ingest(capsys, "notes", "-r")
    assert code == 0 and sorted(report["gone_from_disk"]) == gone and report["files_unchanged"] == 4 + 7, report
    assert report["sources_removed"] == 5 and report["items_deleted"] >= 5
    assert [str(root / file_id) for file_id in gone] == sorted(p for p, o in report["files"] if o == "removed: gone from disk")
    assert [r for r in requests if r[0] == "DELETE"] == [("DELETE", "/v1/sources")]  # one request for the five
    assert len(listed(capsys)) == 4 + 7
    # More than a batch holds: one request per batch, every file forgotten and reported.
    for n in (0, 2, 3):
        (many / f"note-{n:02}.md").unlink()
    monkeypatch.setattr("agent_memory.core.limits.MAX_FORGET_IDS", 2)
    requests.clear()
    code, report, _ = ingest(capsys, "notes", "-r")
    assert code == 0 and sorted(report["gone_from_disk"]) == [f"notes/many/note-{n:02}.md" for n in (0, 2, 3)]
    assert [r[0] for r in requests].count("DELETE") == 2 and len(listed(capsys)) == 4 + 4


def test_many_ids_forgotten_in_one_request_over_http(served, capsys):
    _, url = served
    assert ingest(capsys, "notes", "-r")[0] == 0
    with httpx.Client(base_url=url) as http:
        answer = http.delete("/v1/sources", params={"file_ids": ["notes/todo.txt", "notes/sub/deep.md", "notes/nope"]})
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["file_ids"] == ["notes/todo.txt", "notes/sub/deep.md", "notes/nope"]
        assert body["not_found"] == ["notes/nope"] and body["sources"] == 2 and body["files"] == 2
        for params, said in (({}, "got neither"), ({"prefix": "notes/", "file_ids": "notes/team.md"}, "got both")):
            refused = http.delete("/v1/sources", params=params)
            assert refused.status_code == 422 and said in refused.json()["error"]["message"]
        too_many = http.delete("/v1/sources", params={"file_ids": [f"n/{i}" for i in range(101)]})
        assert too_many.status_code == 422 and "file_ids" in too_many.json()["error"]["message"]
    assert listed(capsys) == ["notes/budget.md", "notes/team.md"]


def test_files_under_a_folder_over_http(served, capsys):
    root, url = served
    (root / "notes2").mkdir()
    (root / "notes2" / "other.md").write_text("# Other\n\nThe Crane depot opens at six.\n")
    assert ingest(capsys, "notes", "notes2", "-r")[0] == 0
    with httpx.Client(base_url=url, timeout=60) as client:
        answer = client.get("/v1/files", params={"under": str(root / "notes")})
        assert answer.status_code == 200, answer.text
        files = answer.json()["files"]
        assert sorted(f["file_id"] for f in files) == ALL  # notes2/ shares the prefix "notes" but is not under it
        assert {f["path"] for f in files} == {str(root / sid) for sid in ALL}
        paged = client.get("/v1/files", params={"under": str(root / "notes") + "/", "offset": 1, "limit": 2})
        assert [f["file_id"] for f in paged.json()["files"]] == [f["file_id"] for f in files][1:3]
        refused = client.get("/v1/files", params={"under": "notes"})
        assert refused.status_code == 422 and "'notes'" in refused.json()["error"]["message"]
        # A folder named with "..", "." or doubled slashes is the same folder (it listed nothing).
        for spelled in (f"{root}/notes2/../notes", f"{root}/./notes", f"{root}//notes/"):
            again = client.get("/v1/files", params={"under": spelled})
            assert again.status_code == 200 and again.json()["files"] == files, spelled


def test_an_uploads_client_path_is_recorded_in_one_spelling(served):
    """A direct API client may spell the file's path with ".", ".." or doubled slashes: it is recorded as the
    CLI sends it (normalized), so the folder's listing, and a mirror of it, find the file."""
    root, url = served
    folder = str(root / "notes")
    with httpx.Client(base_url=url, timeout=60) as client:
        sent = client.post("/v1/documents", files={"file": ("team.md", TEAM.encode())},
                           data={"client_path": f"/{folder}/./sub/..//team.md"})
        assert sent.status_code == 200, sent.text
        listed = client.get("/v1/files", params={"under": folder}).json()["files"]
        assert [f["path"] for f in listed] == [f"{folder}/team.md"]
        relative = client.post("/v1/documents", files={"file": ("team.md", TEAM.encode())},
                               data={"client_path": "notes/team.md"})
        assert relative.status_code == 422 and "'notes/team.md'" in relative.json()["error"]["message"]
        # An upload is named alone unless the client says its walk reached it; the listing says which.
        assert [f["named_by_user"] for f in listed] == [True]
        walked = client.post("/v1/documents", files={"file": ("walked.md", b"# W\n\nThe Wren shed is blue.\n")},
                             data={"client_path": f"{folder}/walked.md", "named_by_user": "false"})
        assert walked.status_code == 200, walked.text
        listed = client.get("/v1/files", params={"under": folder}).json()["files"]
        assert [(f["path"], f["named_by_user"]) for f in listed] == [(f"{folder}/team.md", True),
                                                                   (f"{folder}/walked.md", False)]
        bad = client.post("/v1/documents", files={"file": ("w.md", b"# W\n\nx\n")}, data={"named_by_user": "maybe"})
        assert bad.status_code == 422 and "named_by_user" in bad.json()["error"]["message"] and "'maybe'" in bad.text
        # A field the upload does not take is refused by name, as a JSON body's key is: nothing stored.
        typo = client.post("/v1/documents", files={"file": ("t.md", b"# T\n\nThe Osprey cache.\n")},
                           data={"sourceid": "notes/t.md"})
        message = typo.json()["error"]["message"]
        assert typo.status_code == 422 and "'sourceid'" in message and "did you mean 'source_id'" in message
        assert client.get("/v1/sources/t.md").status_code == 404


def test_a_file_given_alone_keeps_the_id_its_folder_job_gave_it_through_the_server(served, capsys):
    """As a local job does (file_ingestion._stored_id): ``ingest notes/ -r`` stored ``notes/team.md``, and
    ``ingest notes/team.md`` through the server refreshes that source, not a second ``team.md``."""
    root, _ = served
    assert ingest(capsys, "notes", "-r")[0] == 0
    (root / "notes" / "team.md").write_text(TEAM.replace("Lyon", "Nantes"))
    code, report, _ = ingest(capsys, "notes/team.md")
    assert code == 0 and report["files_ingested"] == 1
    assert listed(capsys) == ALL
    code, report, _ = ingest(capsys, str(root / "notes" / "sub" / "deep.md"))  # absolute, one folder deeper
    assert code == 0 and listed(capsys) == ALL
    (root / "loose.md").write_text("# Loose\n\nThe Wren shed is blue.\n")
    assert ingest(capsys, "loose.md")[0] == 0  # never stored: named from the folder holding it
    assert listed(capsys) == sorted([*ALL, "loose.md"])


def test_a_subfolder_job_names_its_files_as_the_store_already_names_them_through_the_server(served, capsys):
    """As locally (test_source_ids.py): ``ingest notes/sub -r`` refreshes ``notes/sub/deep.md`` and names a
    new file there ``notes/sub/new.md``, not ``sub/…``."""
    root, _ = served
    assert ingest(capsys, "notes", "-r")[0] == 0
    (root / "notes" / "sub" / "new.md").write_text("# New\n\nThe Finch meeting moved to Friday.\n")
    code, report, _ = ingest(capsys, "notes/sub", "-r")
    assert code == 0 and report["files_unchanged"] == 1 and report["files_ingested"] == 1
    assert listed(capsys) == sorted([*ALL, "notes/sub/new.md"])


def test_a_key_file_or_an_unsupported_one_is_skipped_on_this_machine_and_never_sent(served, capsys, monkeypatch):
    root, _ = served
    (root / "notes" / "cert.pem").write_text("-----BEGIN PRIVATE KEY-----\nPEMMARKER\n")
    (root / "notes" / "prod.env").write_text("API_KEY=supersecret\n")
    (root / "notes" / ".env").write_text("DB_PASSWORD=hunter2\n")  # hidden: read only when named, as here
    (root / "notes" / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (root / "keys").mkdir()
    (root / "keys" / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    (root / "notes" / "link.md").symlink_to(root / "keys" / "id_rsa")  # an innocent name for the key
    sent: list[str] = []
    upload = RemoteMemory.upload
    monkeypatch.setattr(RemoteMemory, "upload", lambda self, path, *a, **k: (sent.append(path.name),
                                                                              upload(self, path, *a, **k))[1])
    code, report, _ = ingest(capsys, "notes", "-r", str(root / "notes" / ".env"))
    assert code == 0 and report["files_ingested"] == 4
    assert sorted(sent) == ["budget.md", "deep.md", "team.md", "todo.txt"]
    reasons = {path.rsplit("/", 1)[-1]: reason for path, reason in report["files_skipped"]}
    assert reasons["photo.png"].startswith("unsupported extension '.png'")
    for name in ("cert.pem", "prod.env", ".env"):
        assert reasons[name].startswith(f"not read: {name!r} is where secrets usually live"), reasons
    assert reasons["link.md"].startswith("not read: 'link.md' (a link to 'id_rsa')"), reasons


def test_the_client_s_text_encodings_are_said_not_to_apply_through_a_server(served, capsys, monkeypatch):
    root, _ = served
    monkeypatch.setenv("AGENT_MEMORY_TEXT_ENCODINGS", "gb18030")
    (root / "gbk").mkdir()
    (root / "gbk" / "diary.txt").write_bytes("我和李娜在西湖边喝茶。\n".encode("gbk"))
    code, report, err = ingest(capsys, "gbk")
    # Named with the fixture's AGENT_MEMORY_TRIPLE_EXTRACTOR, in the one note of the settings not applying.
    assert ("AGENT_MEMORY_TEXT_ENCODINGS, AGENT_MEMORY_TRIPLE_EXTRACTOR set here do not apply through a server: "
            "its own settings do (it reads the files it is sent in the encodings its own "
            "AGENT_MEMORY_TEXT_ENCODINGS names)") in err, err
    [(_, reason)] = report["files_skipped"]  # the server's setting names none
    assert "invalid UTF-8 at byte 0" in reason


def test_server_side_settings_set_here_are_named_once_as_not_applying(served, capsys, monkeypatch):
    """A chunk size set for the CLI is the server's business through it: one note names it (not the client's
    own settings: the data dir, set by the fixture); without such a variable, no note."""
    monkeypatch.delenv("AGENT_MEMORY_TRIPLE_EXTRACTOR")  # the fixture's, server-side too
    code, report, err = ingest(capsys, "notes/team.md")
    assert code == 0 and report["files_ingested"] == 1
    assert "set here" not in err and "AGENT_MEMORY_DATA_DIR" not in err, err
    # 64, not 16: 16 is below the default overlap (32), which the CLI refuses with and without a server.
    monkeypatch.setenv("AGENT_MEMORY_CHUNK_TOKENS", "64")
    code, report, err = ingest(capsys, "notes/team.md")
    assert code == 0 and report["files_unchanged"] == 1
    [note] = [line for line in err.splitlines() if "set here" in line]
    assert note == ("note: AGENT_MEMORY_CHUNK_TOKENS set here does not apply through a server: its own "
                    "settings do"), note


def test_a_server_that_goes_away_mid_job_leaves_the_rest_not_sent_and_says_how_to_go_on(served, capsys, monkeypatch):
    """`serve` killed during a folder upload: the report called the file in flight FAILED though the server had
    spooled it and stored it at its next start, and said nothing of the files never sent (a probe)."""
    sent = []
    real = RemoteMemory.upload

    def dies_at_the_second(self, path, *args, **kwargs):
        sent.append(path)
        if len(sent) == 2:
            raise StoreUnavailableError(f"the server at {self.url} did not answer: Connection reset by peer")
        return real(self, path, *args, **kwargs)

    monkeypatch.setattr(RemoteMemory, "upload", dies_at_the_second)
    code, report, _ = ingest(capsys, "notes", "-r")
    assert code != 0 and report["files_ingested"] == 1 and len(sent) == 2
    [(in_flight, why)] = report["files_failed"]
    assert in_flight == str(sent[1]) and "may or may not be stored" in why and "Connection reset" in why
    outcomes = dict(report["files"])
    assert sorted(outcome for outcome in outcomes.values()) == ["failed", "ingested", "not attempted", "not attempted"]
    assert any("2 files not sent" in w and "run the same command again" in w for w in report["warnings"])
