"""What an install outside the repository needs is inside the package and listed as its package data."""

from __future__ import annotations

import glob
from pathlib import Path

import tomllib

from agent_memory.core.sample_corpus import SAMPLES

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "agent_memory"


def _package_data() -> set[Path]:
    """The files setuptools puts in the wheel and sdist beside the modules: the package-data globs, as it
    expands them (glob, relative to the package folder)."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["agent_memory"]
    return {PACKAGE / found for pattern in patterns for found in glob.glob(pattern, root_dir=PACKAGE, recursive=True)}


def test_the_sample_corpus_is_package_data():
    # `agent-memory demo` ingests it: from a wheel's install there is no repository around the package.
    assert SAMPLES.is_dir() and SAMPLES.parent == PACKAGE
    files = {p for p in SAMPLES.rglob("*") if p.is_file()}
    assert {"embedded-stores.md", "planning-session.json"} <= {p.name for p in files}
    assert files <= _package_data(), sorted(str(p.relative_to(PACKAGE)) for p in files - _package_data())
    assert not (REPO / "samples").exists()
