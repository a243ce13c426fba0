"""Paths and small helpers shared by test modules (fixtures live in conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EVAL_DIR = REPO.parent / "shared" / "eval"
SAMPLES = REPO / "samples"


def eval_file(name: str) -> Path:
    path = EVAL_DIR / name
    if not path.exists():
        pytest.skip(f"evaluation data {path} is not present (it lives in ../shared/eval beside the checkout)")
    return path
