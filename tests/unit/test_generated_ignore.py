"""Generated files (lockfiles, minified bundles, source maps: ``ignore.GENERATED_FILES``) are left out of folder
walks below every folder's own rules: counted as ignored and said to be generated, read when named alone, with
``--no-ignore`` (``ignore_rules=False``), or when a folder's rule re-includes them (``!yarn.lock``)."""

from __future__ import annotations

import json
from pathlib import Path

from agent_memory.ingest.discovery import discover_files, named_files
from agent_memory.ingest.ignore import GENERATED_FILES, generated
from agent_memory.ingest.missing import ignored_by
from agent_memory.ingest.report import IngestReport

LOCK = '{"name": "app", "lockfileVersion": 3, "packages": {}}\n'


def _repo(root: Path, extra: dict[str, str] | None = None) -> Path:
    files = {".git/HEAD": "ref: refs/heads/main\n", "README.md": "# App\n", "package-lock.json": LOCK,
             "app.min.js": "var a=1;", "src/x.py": "x = 1\n", **(extra or {})}
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _walk(repo: Path, report: IngestReport, **options) -> list[str]:
    found = discover_files([repo], recursive=True, glob=None, report=report, **options)
    return [path.relative_to(repo).as_posix() for path in found]


def test_the_builtin_patterns_name_lockfiles_minified_code_and_source_maps():
    for name in ("package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "bun.lockb",
                 "Cargo.lock", "poetry.lock", "Pipfile.lock", "uv.lock", "composer.lock", "Gemfile.lock", "go.sum",
                 "flake.lock", "vendor.min.js", "site.min.css", "app.js.map"):
        assert generated(name) is not None, name
    for name in ("package.json", "Cargo.toml", "go.mod", "app.js", "site.css", "roadmap.md", "CARGO.LOCK.md"):
        assert generated(name) is None, name
    assert generated("app.min.js") == "*.min.js" and "package-lock.json" in GENERATED_FILES


def test_a_walk_leaves_generated_files_out_and_counts_them_as_ignored(tmp_path):
    repo = _repo(tmp_path / "repo", {"dist/app.js.map": "{}", "docs/yarn.lock": "# yarn\n"})
    report = IngestReport()
    assert _walk(repo, report) == ["README.md", "src/x.py"]
    assert report.files_ignored == 4 and not report.files_skipped and not report.ignored_folders
    data = json.loads(json.dumps(report.to_dict()))
    assert data["files_ignored"] == 4 and "generated_paths" not in data
    assert data["ignored_generated"] == {"*.min.js": 1, "*.map": 1, "yarn.lock": 1, "package-lock.json": 1}
    assert "files ignored    4 (4 generated: lockfiles, minified code, source maps)" in report.render()
    verbose = report.render(verbose=True)
    assert "ignored as generated (built-in rules; read by --no-ignore" in verbose and "package-lock.json 1" in verbose
    assert "ignored as generated" not in report.render()


def test_no_ignore_reads_them_and_naming_one_alone_reads_it(tmp_path):
    repo = _repo(tmp_path / "repo")
    assert _walk(repo, IngestReport(), ignore_rules=False) == ["README.md", "app.min.js", "package-lock.json",
                                                               "src/x.py"]
    report = IngestReport()
    found = named_files([repo, repo / "package-lock.json"], recursive=True, glob=None, report=report)
    assert sorted(sid for _, sid in found) == ["package-lock.json", "repo/README.md", "repo/src/x.py"]
    assert report.files_ignored == 1 and report.ignored_generated == {"*.min.js": 1}  # the named one is read
    ignored = ignored_by(report, [path for path, _ in found])
    assert ignored(str(repo / "app.min.js")) and not ignored(str(repo / "package-lock.json"))


def test_a_repositorys_own_rules_decide_before_the_builtin_ones(tmp_path):
    repo = _repo(tmp_path / "repo", {".gitignore": "!package-lock.json\n*.md\n", "yarn.lock": "# yarn\n"})
    report = IngestReport()
    assert _walk(repo, report) == ["package-lock.json", "src/x.py"]
    assert report.files_ignored == 3 and report.ignored_generated == {"*.min.js": 1, "yarn.lock": 1}


def test_only_files_are_generated_never_a_folder(tmp_path):
    repo = _repo(tmp_path / "repo", {"maps.map/notes.md": "# Notes\n"})
    assert "maps.map/notes.md" in _walk(repo, IngestReport())
