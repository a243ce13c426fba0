"""The import contracts in pyproject.toml can fail: a deliberate bad import in a temporary copy of the
package is reported broken by ``lint-imports``, and the untouched copy is kept."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).parent / "lint-imports"


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    into = tmp_path_factory.mktemp("house")
    shutil.copytree(ROOT / "agent_memory", into / "agent_memory", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", into / "pyproject.toml")
    return into


def lint(where: Path, contract: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(LINT), "--no-cache", "--contract", contract], cwd=where, capture_output=True,
                          text=True, env={"PYTHONPATH": str(where), "PATH": str(LINT.parent)}, timeout=300)


def with_line(copy: Path, tmp_path: Path, module: str, line: str) -> Path:
    """A second copy where ``module`` (a path under agent_memory/) also holds ``line``."""
    bad = tmp_path / "bad"
    shutil.copytree(copy, bad)
    target = bad / module
    if target.exists():
        target.write_text(target.read_text() + f"\n{line}\n")
    else:
        target.write_text(f'"""A module no layer names."""\n{line}\n')
    return bad


@pytest.mark.parametrize("contract", ["layers", "drivers", "backends"])
def test_the_package_as_it_is_keeps_each_contract(copy, contract):
    done = lint(copy, contract)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(("contract", "module", "line"), [
    # a core module reaching up into the stores, the ingestion or the evaluation
    ("layers", "agent_memory/core/text.py", "import agent_memory.stores.catalog"),
    ("layers", "agent_memory/core/roles.py", "import agent_memory.ingest.pipeline"),
    ("layers", "agent_memory/retrieval/fusion.py", "import agent_memory.evaluation.runner"),
    ("layers", "agent_memory/stores/base.py", "import agent_memory.conversation.session"),
    # a module no layer names (the contract is exhaustive)
    ("layers", "agent_memory/helpers.py", "import json"),
    # one store driver importing another
    ("drivers", "agent_memory/stores/neo4j_graph.py", "import agent_memory.stores.ladybug_graph"),
    # a backend library outside the store drivers
    ("backends", "agent_memory/retrieval/pipeline.py", "import qdrant_client"),
    ("backends", "agent_memory/core/text.py", "import sqlite3"),
])
def test_a_bad_import_breaks_its_contract(copy, tmp_path, contract, module, line):
    done = lint(with_line(copy, tmp_path, module, line), contract)
    assert done.returncode != 0 and "BROKEN" in done.stdout, done.stdout + done.stderr


def test_one_package_is_installed():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["tool"]["setuptools"]["packages"]["find"]["include"] == ["agent_memory*"]
    assert project["tool"]["importlinter"]["root_packages"] == ["agent_memory"]
    # no generic top-level packages beside it: every layer is a folder of agent_memory (an older checkout
    # may leave bytecode caches in those folders; what counts is source code)
    assert not list(ROOT.glob("ingest/**/*.py")) and not list(ROOT.glob("retrieval/**/*.py"))
