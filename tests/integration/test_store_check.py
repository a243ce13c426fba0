"""`agent-memory check` on a small real embedded data dir damaged the ways an operator's mistakes damage one
(a catalog lost, a backup of the catalog restored over a newer data dir, the vector segments or the graph
removed): each disagreement is found, `--repair` mends what it can, and forgetting works while the catalog
is lost. Through the HTTP API and a CLI working through a server the same, within the caller's tenant."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import httpx
import pytest

from agent_memory.api import create_app
from agent_memory.api.testing import serve_in_thread
from agent_memory.core.config import load_settings
from agent_memory.core.errors import IngestError
from agent_memory.memory import Memory
from tests.helpers import embedded_cli_env, run_cli

NOTES = {"alpha.md": "Alice Weber works at Nordwerk in Bremen. Nordwerk builds pumps for ships.",
         "beta.md": "Bruno Lang leads the Kestrel team at Nordwerk. Kestrel ships the valve firmware.",
         "gamma.md": "Clara Stein moved to Lisbon in 2024. She runs the Lisbon office of Nordwerk."}
SECRET = "My locker combination at the Oslo office is 7741."


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A data dir of two tenants: acme with three notes (folder ``notes``) and a session of four messages,
    globex with one note; closed, so its files are whole (what a copy taken while nothing ran holds)."""
    root = tmp_path_factory.mktemp("check")
    (root / "notes").mkdir()
    for name, text in NOTES.items():
        (root / "notes" / name).write_text(text + "\n")
    with pytest.MonkeyPatch.context() as mp:
        embedded_cli_env(mp, root / "data")
        with Memory(tenant="acme") as memory:
            assert not memory.add_paths([root / "notes"]).store_error
            for content in (SECRET, "Noted.", "Clara Stein works at Nordwerk.", "Thanks."):
                role = "user" if content != "Noted." and content != "Thanks." else "assistant"
                memory.add_message("week-1", {"role": role, "content": content})
        with Memory(tenant="globex") as memory:
            memory.add("Dora Falk founded Globex in Utrecht.", source_id="about")
    return root


@pytest.fixture
def data_dir(pristine, tmp_path, monkeypatch):
    """A copy of the pristine data dir for one test to damage; the CLI points at it, and runs beside the notes
    (their manifests record where they were read)."""
    shutil.copytree(pristine / "data", tmp_path / "data")
    embedded_cli_env(monkeypatch, tmp_path / "data")
    monkeypatch.chdir(pristine)
    return tmp_path / "data"


def check(capsys, *argv: str) -> tuple[int, dict, str]:
    code, out, err = run_cli(capsys, ["check", *argv])
    return code, json.loads(out), err


def report_items(capsys, tenant: str) -> int:
    return check(capsys, "--tenant", tenant)[1]["tenants"][tenant]["vector_items"]


def locker_cited(tenant: str = "acme") -> bool:
    with Memory(tenant=tenant) as memory:
        return "7741" in memory.prompt("What is my locker combination at the Oslo office?", budget=400).prompt


def test_a_whole_data_dir_agrees(data_dir, capsys):
    code, report, err = check(capsys)
    assert code == 0 and report["ok"] and err == ""
    acme = report["tenants"]["acme"]
    assert set(report["tenants"]) == {"acme", "globex"}
    assert acme["catalog_sources"] >= 7 and acme["vector_items"] >= 7 and acme["graph_triples"] > 0
    assert acme["uncatalogued"] == acme["items_missing"] == acme["facts_missing"] == acme["problems"] == []


def test_a_lost_catalog_is_found_forget_still_removes_and_a_repair_refuses_to_delete_but_adopts(data_dir, capsys):
    (data_dir / "catalog.sqlite").unlink()
    code, report, err = check(capsys, "--tenant", "acme")
    acme = report["tenants"]["acme"]
    assert code == 1 and not report["ok"] and list(report["tenants"]) == ["acme"]
    assert "the catalog records none of the tenant's sources" in acme["problems"][0]
    assert {"notes/alpha.md", "week-1/m0"} <= {row["source_id"] for row in acme["uncatalogued"]}
    assert "--adopt" in err

    # stats says what is wrong rather than "no tenant holds any", and counts the tenants the vectors hold
    code, out, err = run_cli(capsys, ["stats", "--tenant", "acme"])
    items = json.loads(out)["items"]  # --tenant: the flat object GET /v1/stats answers
    assert code == 0 and items == acme["vector_items"] > 0
    assert "the catalog records none of its sources" in err and "agent-memory check" in err
    code, out, err = run_cli(capsys, ["stats"])
    assert code == 0 and set(json.loads(out)) == {"acme", "globex"}
    assert "the catalog records no tenant's sources, but the vectors hold items of acme, globex" in err
    # reindex moves the items of the tenants the catalog lost too
    code, out, _ = run_cli(capsys, ["reindex", "--all"])
    assert code == 0 and json.loads(out)["items"] == items + report_items(capsys, "globex")

    # forget works from the vectors: the note and the session's turns go, and say so
    code, out, _ = run_cli(capsys, ["forget", "notes/alpha.md", "--tenant", "acme"])
    assert code == 0 and json.loads(out)["matched"] == ["notes/alpha.md"] and json.loads(out)["items"] >= 1
    assert locker_cited()
    with Memory(tenant="acme") as memory:
        removed = memory.delete_session("week-1", forget_archived=True)
    assert removed["sources"] >= 2 and removed["items"] >= 2
    assert not locker_cited()

    # a repair removes nothing of a tenant whose catalog holds nothing: it names the backup and --adopt
    code, report, _ = check(capsys, "--repair")
    repair = report["tenants"]["globex"]["repair"]
    assert code == 1 and repair["removed"]["items"] == 0 and "backup" in repair["refused"]
    code, report, _ = check(capsys, "--repair", "--adopt")
    assert code == 0 and report["tenants"]["acme"]["repair"]["adopted"] >= 2
    assert check(capsys)[0] == 0
    code, out, _ = run_cli(capsys, ["forget", "notes/beta.md", "--tenant", "acme"])  # through the catalog again
    assert code == 0 and json.loads(out)["sources"] == 1


def test_adopted_turns_stay_their_sessions_so_an_export_imported_elsewhere_holds_each_turn_once(data_dir, tmp_path,
                                                                                                  capsys):
    (data_dir / "catalog.sqlite").unlink()
    assert check(capsys, "--repair", "--adopt")[0] == 0
    out = tmp_path / "acme.jsonl"

    def exported_turn_sources() -> list[str]:
        assert run_cli(capsys, ["export", "--tenant", "acme", "--out", str(out)])[0] == 0
        lines = [json.loads(line) for line in out.read_text().splitlines()]
        return [line["source_id"] for line in lines if line["type"] == "source" and line["kind"] == "turn"]

    # A data dir adopted before adoption claimed a session's turns: the turns are in the catalog, unclaimed.
    with sqlite3.connect(data_dir / "catalog.sqlite") as conn:
        conn.execute("DELETE FROM owners WHERE owner = 'session:week-1'")
    assert exported_turn_sources() == []
    check(capsys, "--repair", "--adopt")  # records nothing again (the catalog knows every source now)

    # Adopted as the archive records them: the session's messages alone carry its turns out.
    (data_dir / "catalog.sqlite").unlink()
    assert check(capsys, "--repair", "--adopt")[0] == 0
    with Memory(tenant="acme") as memory, pytest.raises(IngestError, match=r"session 'week-1' \(one of its archived"):
        memory.add("A note under a turn's ID.", source_id="week-1/m0")
    assert exported_turn_sources() == []
    fresh = tmp_path / "fresh"
    code, stdout, _ = run_cli(capsys, ["--data-dir", str(fresh), "import", str(out), "--json"])
    assert code == 0 and json.loads(stdout)["complete"]
    code, stdout, _ = run_cli(capsys, ["--data-dir", str(fresh), "list", "--tenant", "acme", "--kind", "turn"])
    assert code == 0 and [row["source_id"] for row in json.loads(stdout)["sources"]] == [
        f"week-1/m{seq}" for seq in range(4)]
    with Memory(data_dir=fresh, tenant="acme") as memory:
        assert len(memory.messages("week-1")) == 4
        passages = memory.prompt("What is my locker combination at the Oslo office?", budget=400).passages
    assert [p.source_id for p in passages if "7741" in p.text] == ["week-1/m0"]


def test_what_a_restored_older_catalog_does_not_know_is_removed(data_dir, tmp_path, capsys):
    """A backup's catalog restored over a newer data dir: what was stored since is in the vectors and the
    graph only; a repair removes it (it may be what a forget had removed), the rest stays."""
    older = tmp_path / "catalog-older.sqlite"
    shutil.copy2(data_dir / "catalog.sqlite", older)
    (tmp_path / "more").mkdir()
    (tmp_path / "more" / "delta.md").write_text("Erik Moll works at Nordwerk in Kiel.\n")
    assert run_cli(capsys, ["ingest", str(tmp_path / "more"), "--tenant", "acme"])[0] == 0
    shutil.copy2(older, data_dir / "catalog.sqlite")

    code, report, _ = check(capsys, "--tenant", "acme")
    acme = report["tenants"]["acme"]
    assert code == 1 and [row["source_id"] for row in acme["uncatalogued"]] == ["more/delta.md"]
    assert acme["uncatalogued"][0]["items"] >= 1 and acme["uncatalogued"][0]["triples"] >= 1
    code, report, _ = check(capsys, "--tenant", "acme", "--repair")
    removed = report["tenants"]["acme"]["repair"]["removed"]
    assert code == 0 and removed["sources"] == 1 and removed["items"] >= 1 and removed["triples"] >= 1
    assert check(capsys, "--tenant", "acme")[0] == 0
    code, out, _ = run_cli(capsys, ["list", "--tenant", "acme", "--prefix", "notes/"])
    assert [row["source_id"] for row in json.loads(out)["sources"]] == ["notes/alpha.md", "notes/beta.md", "notes/gamma.md"]


def test_items_lost_from_the_vectors_are_marked_and_the_next_ingest_writes_them_again(data_dir, capsys):
    for segments in (data_dir / "qdrant-edge").glob("*/segments"):
        shutil.rmtree(segments)
        segments.mkdir()
    for wal in (data_dir / "qdrant-edge").glob("*/wal"):
        shutil.rmtree(wal)
    # the bug this mends: the catalog calls the files unchanged, so ingesting them again brought nothing back
    code, out, _ = run_cli(capsys, ["ingest", "notes", "--tenant", "acme", "--json"])
    assert json.loads(out)["files_unchanged"] == 3

    code, report, _ = check(capsys, "--tenant", "acme")
    acme = report["tenants"]["acme"]
    assert code == 1 and acme["vector_items"] == 0 and "the vectors hold none" in acme["problems"][0]
    assert {"notes/alpha.md", "week-1/m0"} <= {row["source_id"] for row in acme["items_missing"]}
    code, report, err = check(capsys, "--tenant", "acme", "--repair")
    again = report["tenants"]["acme"]["repair"]["ingest_again"]
    assert code == 1 and "ingest again" in err
    assert [Path(f).name for f in again["files"]] == ["alpha.md", "beta.md", "gamma.md"]
    assert "week-1/m0" in again["sources"]
    code, out, _ = run_cli(capsys, ["ingest", "notes", "--tenant", "acme", "--json"])
    assert code == 0 and json.loads(out)["files_ingested"] == 3
    code, report, _ = check(capsys, "--tenant", "acme")
    assert {row["source_id"] for row in report["tenants"]["acme"]["items_missing"]} == set(again["sources"])


def test_a_lost_graph_is_extracted_again_from_the_stored_text(data_dir, capsys):
    before = json.loads(run_cli(capsys, ["stats"])[1])
    (data_dir / "graph").unlink()
    code, report, _ = check(capsys)
    assert code == 1 and all("the graph holds none" in row["problems"][0] for row in report["tenants"].values())
    code, report, _ = check(capsys, "--repair")
    assert code == 0 and report["tenants"]["acme"]["repair"]["facts_rebuilt"]["triples"] == before["acme"]["triples"]
    after = json.loads(run_cli(capsys, ["stats"])[1])
    assert {t: (s["entities"], s["triples"]) for t, s in after.items()} == \
        {t: (s["entities"], s["triples"]) for t, s in before.items()}
    assert check(capsys)[0] == 0


def test_through_the_api_and_a_cli_working_through_it_the_callers_tenant_alone(data_dir, tmp_path, capsys):
    older = tmp_path / "catalog-older.sqlite"
    shutil.copy2(data_dir / "catalog.sqlite", older)
    with Memory(tenant="acme") as memory:
        memory.add("A note stored after the backup.", source_id="later")
    with Memory(tenant="globex") as memory:
        memory.add("Globex's own later note.", source_id="later")
    shutil.copy2(older, data_dir / "catalog.sqlite")
    app = create_app(load_settings(data_dir=data_dir, triple_extractor="rules", tenant="acme"), warm=False)
    with serve_in_thread(app) as url:
        found = httpx.post(f"{url}/v1/check", timeout=120)
        assert found.status_code == 200 and list(found.json()["tenants"]) == ["acme"]
        assert [r["source_id"] for r in found.json()["tenants"]["acme"]["uncatalogued"]] == ["later"]
        refused = httpx.post(f"{url}/v1/check", params={"adopt": "true"}, timeout=120)
        assert refused.status_code == 422 and "repair" in refused.json()["error"]["message"]
        code, out, _ = run_cli(capsys, ["--server", url, "check", "--repair"])
        assert code == 0 and json.loads(out)["tenants"]["acme"]["repair"]["removed"]["sources"] == 1
    code, report, _ = check(capsys)
    assert code == 1 and report["tenants"]["acme"]["ok"]
    assert [r["source_id"] for r in report["tenants"]["globex"]["uncatalogued"]] == ["later"]


def test_adopt_goes_with_repair(data_dir, capsys):
    code, out, err = run_cli(capsys, ["check", "--adopt"])
    assert code == 2 and out == "" and "--adopt goes with --repair" in err


# ---- damaged files: one error naming the file and what to do, no half output -------------------------------

def test_a_malformed_catalog_is_one_error_saying_what_to_do_and_nothing_on_stdout(data_dir, capsys):
    with open(data_dir / "catalog.sqlite", "r+b") as file:
        file.truncate(1000)
    code, out, err = run_cli(capsys, ["stats", "--tenant", "acme"])
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "catalog.sqlite" in err and "malformed" in err
    assert "restore the data dir from a backup" in err and "check --repair --adopt" in err


def test_a_damaged_vector_segment_is_one_error_saying_what_to_do(data_dir, capsys):
    damaged = 0
    for path in (data_dir / "qdrant-edge").glob("*/segments/*/*"):
        if path.is_file():
            with open(path, "r+b") as file:
                file.truncate(10)
            damaged += 1
    assert damaged
    code, out, err = run_cli(capsys, ["stats", "--tenant", "acme"])
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "cannot open Qdrant Edge shard" in err and "Restore the data dir from a backup" in err
    assert "check --repair" in err
