"""`agent-memory stats | list | inspect | gc` on a small corpus ingested through the CLI."""

from __future__ import annotations

import json

import httpx
import pytest

from agent_memory.api import create_app
from agent_memory.api.testing import serve_in_thread
from agent_memory.cli import main
from agent_memory.core.config import load_settings
from tests.helpers import embedded_cli_env


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("upkeep-cli")
    (root / "corpus").mkdir()
    (root / "corpus" / "keep.md").write_text("# Pumps\n\nPump P-7 in Hall Nordwerk moves 40 litres a minute.\n")
    (root / "corpus" / "scan.md").write_text("# Scan\n\nScanner Quovadis counted 44 pallets in Hall Nordwerk.\n")
    with pytest.MonkeyPatch.context() as mp:
        embedded_cli_env(mp, root / "data")
        # Sources under the scan file's ID (relative to the folder holding the path given) expire
        # at once (0 days): the gc pass takes them.
        mp.setenv("AGENT_MEMORY_TTL_DAYS", json.dumps({"source:corpus/scan": 0}))
        assert main(["ingest", str(root / "corpus"), "--json"]) == 0
        yield root


def run(capsys, argv):
    capsys.readouterr()
    code = main(argv)
    return code, capsys.readouterr().out


def test_stats_list_inspect_then_gc(data_dir, capsys):
    code, out = run(capsys, ["stats", "--tenant", "default"])
    before = json.loads(out)
    assert code == 0 and before["sources"] == 2 and before["items_per_kind"]["chunk"] == 2
    assert before["expiring_soon"] == 1 and before["entities"] > 0

    code, out = run(capsys, ["list", "--kind", "chunk", "--limit", "1"])
    listed = json.loads(out)
    page = listed["sources"]
    assert code == 0 and len(page) == 1 and page[0]["kinds"] == ["chunk"]
    # The page says how many there are in all and where the next one starts.
    assert listed["total"] >= 2 and listed["next_offset"] == 1 and listed["offset"] == 0 and listed["limit"] == 1
    code, out = run(capsys, ["list", "--offset", "1"])
    rest = json.loads(out)
    assert rest["sources"][0]["source_id"] != page[0]["source_id"] or rest["total"] == 1
    assert rest["next_offset"] is None and rest["total"] == len(rest["sources"]) + 1

    scan_id = next(r["source_id"] for r in json.loads(run(capsys, ["list"])[1])["sources"] if r["source_id"].endswith("scan.md"))
    code, out = run(capsys, ["inspect", scan_id])
    found = json.loads(out)
    assert code == 0 and found["catalog"]["triples"] >= 1 and "expires_at" in found["items"][0]["metadata"]
    assert "Quovadis" in found["items"][0]["text"]

    code, out = run(capsys, ["gc"])
    assert code == 0 and json.loads(out)["expired"]["sources"] == 1
    assert run(capsys, ["inspect", scan_id])[0] == 1  # gone from catalog and stores
    after = json.loads(run(capsys, ["stats"])[1])["default"]
    assert after["sources"] == 1 and after["expiring_soon"] == 0


def test_prompt_with_a_metadata_filter(data_dir, capsys):
    def used(where: str) -> set[str]:
        code, out = run(capsys, ["prompt", "What moves 40 litres a minute?", "--json", "--where", where])
        assert code == 0
        return {p["source_id"] for p in json.loads(out)["passages"]}

    assert any(s.endswith("keep.md") for s in used('{"importance": 0.5}'))
    assert used('{"team": "nobody"}') == set()
    capsys.readouterr()
    assert main(["prompt", "x", "--where", '{"team": {"after": 1}}']) == 2
    assert "gte" in capsys.readouterr().err
    # Date ranges: no ingested file carries a "published" date, so nothing is inside; a bad date is named.
    assert used('{"published": {"gte": "2024-03-01", "lte": "2024-06-30"}}') == set()
    capsys.readouterr()
    assert main(["prompt", "x", "--where", '{"published": {"gte": "2024-02-30"}}']) == 2
    assert "'2024-02-30'" in capsys.readouterr().err


def test_stats_has_one_shape_locally_through_a_server_and_over_http(data_dir, capsys):
    """One tenant's counts are one flat object everywhere (``--tenant T``, ``GET /v1/stats``); without
    ``--tenant`` the CLI prints them by tenant, locally and through a server alike."""
    code, out = run(capsys, ["stats", "--tenant", "default"])
    local = json.loads(out)
    assert code == 0 and local["sources"] >= 1 and "default" not in local
    assert json.loads(run(capsys, ["stats"])[1]) == {"default": local}
    with serve_in_thread(create_app(load_settings(), warm=False)) as url:
        answered = httpx.get(f"{url}/v1/stats", timeout=60)
        assert answered.status_code == 200 and answered.json() == local
        code, out = run(capsys, ["--server", url, "stats", "--tenant", "default"])
        assert code == 0 and json.loads(out) == local
        code, out = run(capsys, ["--server", url, "stats"])
        assert code == 0 and json.loads(out) == {"default": local}
