"""The walk honours ``.gitignore`` and ``.ignore`` rules as git does (ingest/ignore.py): nested files
relative to their own folder, negations, folder-only patterns, the parents' rules from the repository
root or else the ID base, a file named alone read although ignored; ignored files counted, never listed as skips."""

from __future__ import annotations

import json
from pathlib import Path

from agent_memory.ingest.discovery import discover_files, named_files
from agent_memory.ingest.missing import ignored_by
from agent_memory.ingest.report import IngestReport


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _walk(*paths: Path, recursive: bool = True, glob: str | None = None, ignore_rules: bool = True,
          report: IngestReport | None = None) -> list[str]:
    report = report if report is not None else IngestReport()
    found = discover_files(list(paths), recursive=recursive, glob=glob, report=report, ignore_rules=ignore_rules)
    return [p.relative_to(paths[0] if paths[0].is_dir() else paths[0].parent).as_posix() for p in found]


def test_nested_rules_apply_from_their_own_folder_and_negations_reinclude(tmp_path):
    repo = _tree(tmp_path / "repo", {
        ".gitignore": "*.log\nbuild/\n/top.txt\n",
        "top.txt": "x", "a.md": "x", "run.log": "x", "build/out.md": "x",
        "src/top.txt": "x",  # /top.txt is anchored to the root: not this one
        "src/.gitignore": "gen/\n!keep.log\n",
        "src/keep.log": "x", "src/other.log": "x", "src/gen/g.md": "x", "src/main.py": "x",
        "docs/gen/manual.md": "x",  # src's gen/ rule is src's alone
        "docs/build": "a file named build: build/ matches folders only",
    })
    report = IngestReport()
    assert _walk(repo, report=report) == ["a.md", "docs/build", "docs/gen/manual.md", "src/keep.log", "src/main.py",
                                          "src/top.txt"]
    assert report.files_ignored == 3  # top.txt, run.log, src/other.log
    assert report.ignored_folders == [str(repo / "build"), str(repo / "src" / "gen")]
    assert not report.files_skipped and not report.files  # counted, never listed one by one


def test_a_negated_file_under_an_ignored_folder_stays_out_as_in_git(tmp_path):
    repo = _tree(tmp_path / "repo", {".gitignore": "logs/\n!logs/keep.md\nlist/*\n!list/keep.md\n",
                                     "logs/keep.md": "x", "list/keep.md": "x", "list/drop.md": "x"})
    assert _walk(repo) == ["list/keep.md"]  # list/* ignores its files, not the folder: the negation works


def test_ignore_overrides_gitignore_and_the_repo_exclude_file_applies(tmp_path):
    repo = _tree(tmp_path / "repo", {".gitignore": "*.txt\n", ".ignore": "!notes.txt\nscratch.md\n",
                                     ".git/info/exclude": "local.md\n",
                                     "notes.txt": "x", "other.txt": "x", "scratch.md": "x", "local.md": "x",
                                     "kept.md": "x"})
    assert _walk(repo) == ["kept.md", "notes.txt"]


def test_the_parents_rules_apply_up_to_the_repository_root_only(tmp_path):
    _tree(tmp_path, {".gitignore": "*.md\n"})  # above the repository: not the project's rules
    repo = _tree(tmp_path / "repo", {".git/HEAD": "ref", ".gitignore": "*.tmp\nsecret/\n",
                                     "proj/.gitignore": "*.bak\n", "proj/src/a.md": "x", "proj/src/b.tmp": "x",
                                     "proj/src/c.bak": "x", "proj/src/secret/s.md": "x"})
    assert _walk(repo / "proj" / "src") == ["a.md"]
    assert _walk(repo / "proj" / "src", ignore_rules=False) == ["a.md", "b.tmp", "c.bak", "secret/s.md"]


def test_without_a_repository_the_rules_apply_from_the_id_base_down(tmp_path, monkeypatch):
    _tree(tmp_path, {".gitignore": "*.rst\n"})  # above the base: never
    outer = _tree(tmp_path / "outer", {".gitignore": "*.md\n", "inner/a.md": "x", "inner/b.txt": "x",
                                       "inner/c.rst": "x", "inner/d.py": "x", "inner/.gitignore": "*.txt\n"})
    # The default base of outer/inner is outer (IDs inner/...): outer's rules are the project's.
    assert _walk(outer / "inner") == ["c.rst", "d.py"]
    found = discover_files([outer / "inner"], recursive=True, glob=None, report=IngestReport(), base=outer / "inner")
    assert sorted(p.name for p in found) == ["a.md", "c.rst", "d.py"]  # named from inner itself: its rules only
    found = discover_files([outer / "inner"], recursive=True, glob=None, report=IngestReport(), base=tmp_path)
    assert sorted(p.name for p in found) == ["d.py"]  # --base above: every folder from it down
    monkeypatch.setenv("HOME", str(outer))  # a home folder's .gitignore: git's global excludes, not a project's
    assert _walk(outer / "inner") == ["a.md", "c.rst", "d.py"]


def test_a_nested_repository_starts_its_own_rules(tmp_path):
    repo = _tree(tmp_path / "repo", {".git/HEAD": "x", ".gitignore": "*.txt\n",
                                     "vendor/lib/.git/HEAD": "x", "vendor/lib/readme.txt": "x", "a.txt": "x"})
    assert _walk(repo) == ["vendor/lib/readme.txt"]


def test_a_file_named_by_user_is_read_although_ignored(tmp_path):
    repo = _tree(tmp_path / "repo", {".git/HEAD": "x", ".gitignore": "*.log\nbuild/\n", "run.log": "x",
                                     "build/out.md": "x", "a.md": "x"})
    report = IngestReport()
    found = named_files([repo, repo / "run.log", repo / "build" / "out.md"], recursive=True, glob=None,
                        report=report)
    assert [sid for _, sid in found] == ["repo/a.md", "run.log", "out.md"]
    assert report.files_ignored == 0  # run.log is read: not counted as ignored
    ignored = ignored_by(report, [path for path, _ in found])
    assert not ignored(str(repo / "build" / "out.md")) and ignored(str(repo / "build" / "other.md"))


def test_a_folder_named_although_its_parents_ignore_it_is_walked(tmp_path):
    repo = _tree(tmp_path / "repo", {".git/HEAD": "x", ".gitignore": "build/\n*.log\n",
                                     "build/.gitignore": "*.o\n", "build/out.md": "x", "build/x.o": "x",
                                     "build/run.log": "x"})
    report = IngestReport()
    assert _walk(repo / "build", report=report) == ["out.md", "run.log"]  # its own rules only
    assert any("walked as named" in w and "build" in w for w in report.warnings), report.warnings


def test_glob_and_no_recursion_count_only_what_would_be_read(tmp_path):
    repo = _tree(tmp_path / "repo", {".gitignore": "drop*\nbuild/\n", "drop.md": "x", "drop.txt": "x",
                                     "keep.md": "x", "build/b.md": "x"})
    report = IngestReport()
    assert _walk(repo, glob="*.md", recursive=False, report=report) == ["keep.md"]
    assert report.files_ignored == 1 and report.ignored_folders == []


def test_a_bad_pattern_is_a_warning_and_the_other_rules_hold(tmp_path):
    repo = _tree(tmp_path / "repo", {".gitignore": "*.log\n!\nfoo\\\n", "a.log": "x", "a.md": "x"})
    report = IngestReport()
    assert _walk(repo, report=report) == ["a.md"]
    bad = [w for w in report.warnings if "not a pattern" in w]
    assert len(bad) == 2 and "'!'" in bad[0] and str(repo / ".gitignore") in bad[0]


def test_the_report_counts_ignored_files_in_its_json_and_lists_folders_when_verbose(tmp_path):
    repo = _tree(tmp_path / "repo", {".gitignore": "*.log\nnode_modules/\n", "a.log": "x", "b.log": "x",
                                     "node_modules/pkg/index.js": "x", "a.md": "x"})
    report = IngestReport()
    _walk(repo, report=report)
    data = json.loads(json.dumps(report.to_dict()))
    assert data["files_ignored"] == 2 and data["ignored_folders"] == [str(repo / "node_modules")]
    assert "ignored_paths" not in data
    assert "files ignored    2 (and 1 folders not walked)" in report.render()
    assert "ignored folder:" not in report.render()
    assert f"ignored folder: {repo / 'node_modules'}" in report.render(verbose=True)
