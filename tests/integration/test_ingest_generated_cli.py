"""``agent-memory ingest`` leaves generated files (lockfiles, minified code, source maps) out of a folder's walk on
the real embedded stores: counted as ignored, read when named alone (and kept by later walks, as a file named
despite ``.gitignore`` is) or with ``--no-ignore``; stored by ``--no-ignore``, a later walk forgets them as now
ignored (ingest/ignore.py ``GENERATED_FILES``, ingest/missing.py)."""

from __future__ import annotations

import json

from tests.helpers import embedded_cli_env, run_cli, write_files


def _ingest(capsys, *argv: str) -> dict:
    code, out, err = run_cli(capsys, ["ingest", *argv, "--json"])
    assert code == 0, err
    return json.loads(out)


def _listed(capsys) -> list[str]:
    code, out, _ = run_cli(capsys, ["list"])
    assert code == 0
    return sorted(r["source_id"] for r in json.loads(out)["sources"])


def test_generated_files_are_left_out_of_a_walk_unless_named_or_no_ignore(tmp_path, monkeypatch, capsys):
    embedded_cli_env(monkeypatch, tmp_path / "data")
    write_files(tmp_path / "repo", {
        ".git/HEAD": "ref: refs/heads/main\n",
        "README.md": "# Kestrel\n\nOrla Vance leads the Kestrel platform team in Lyon.\n",
        "package-lock.json": json.dumps({"name": "kestrel", "lockfileVersion": 3, "packages": {
            "node_modules/left-pad": {"version": "1.3.0", "integrity": "sha512-XI5MPzVNApjAyhQzphX8BkmKsKUxD4LdyK24iZ"}}}),
        "app.min.js": "var a=function(){return'The Heron service answers on port 8080.'};",
        "src/x.py": "def greet():\n    return 'The Osprey cache warms in 3 s.'\n",
    })
    monkeypatch.chdir(tmp_path)
    report = _ingest(capsys, "repo", "-r")
    assert report["files_ingested"] == 2 and report["files_ignored"] == 2 and not report["files_skipped"], report
    assert report["ignored_generated"] == {"package-lock.json": 1, "*.min.js": 1}
    assert _listed(capsys) == ["repo/README.md", "repo/src/x.py"]
    code, out, _ = run_cli(capsys, ["-v", "ingest", "repo", "-r"])
    assert code == 0 and "files ignored    2 (2 generated: lockfiles, minified code, source maps)" in out, out
    assert "ignored as generated (built-in rules; read by --no-ignore" in out

    report = _ingest(capsys, "repo/package-lock.json")  # named alone: read, under the ID its folder's files keep
    assert report["files_ingested"] == 1 and report["files_ignored"] == 0, report
    assert _listed(capsys) == ["repo/README.md", "repo/package-lock.json", "repo/src/x.py"]

    report = _ingest(capsys, "repo", "-r", "--no-ignore")
    assert report["files_ignored"] == 0 and report["files_ingested"] == 1, report  # app.min.js
    assert "repo/app.min.js" in _listed(capsys)

    # A walk with the rules again: the minified file --no-ignore stored goes; the lockfile the user named stays.
    report = _ingest(capsys, "repo", "-r")
    assert report["now_ignored"] == ["repo/app.min.js"] and report["files_ignored"] == 2, report
    assert _listed(capsys) == ["repo/README.md", "repo/package-lock.json", "repo/src/x.py"]


def test_json_configs_and_data_rows_in_a_folder_are_read_and_found(tmp_path, monkeypatch, capsys):
    """Through the CLI, where a probe saw them skipped ("no text field"): a config file, data rows and a config
    object whose `context` key holds little of its text are read as their own text, and a prompt finds them."""
    embedded_cli_env(monkeypatch, tmp_path / "data")
    write_files(tmp_path / "conf", {
        "config.json": json.dumps({"service": "heron", "port": 8080, "owners": ["Orla Vance"], "replicas": 3}),
        "turbines.json": json.dumps([{"id": "T1", "site": "Brest", "capacity_mw": 3.2},
                                     {"id": "T2", "site": "Lorient", "capacity_mw": 4.1}]),
        "k8s.json": json.dumps({"name": "deploy-svc", "context": "prod-cluster", "replicas": 12,
                                "image": "registry.example/kestrel-gateway:4.2"}),
    })
    monkeypatch.chdir(tmp_path)
    report = _ingest(capsys, "conf", "-r")
    assert report["files_ingested"] == 3 and not report["files_skipped"], report
    assert _listed(capsys) == ["conf/config.json", "conf/k8s.json", "conf/turbines.json"]
    code, out, _ = run_cli(capsys, ["prompt", "Which image does deploy-svc run?", "--budget", "300"])
    assert code == 0 and "kestrel-gateway:4.2" in out and "[S:conf/k8s.json]" in out, out
