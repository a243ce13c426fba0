#!/usr/bin/env bash
# The test command: installs everything, starts a real Neo4j (Java + Maven) and a real PostgreSQL
# (Debian's packages) on loopback, runs the suite.
# Extra arguments go to pytest (e.g. scripts/test.sh tests/unit -x).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/install.sh || exit 1
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TRANSFORMERS_VERBOSITY=error TOKENIZERS_PARALLELISM=false

# Lint before anything starts: the layers (import-linter contracts in pyproject.toml), then ruff.
.venv/bin/lint-imports || { echo "test.sh: an import breaks the layers (see above)" >&2; exit 1; }
.venv/bin/ruff check . || { echo "test.sh: ruff check failed (see above)" >&2; exit 1; }

# Debian Chromium for the debug page's browser test (skips with a reason where it cannot be installed).
if ! command -v chromium >/dev/null 2>&1 && [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null 2>&1 \
        || echo "test.sh: could not install chromium; the browser test will skip" >&2
fi

neo4j_started=0
if [[ -z "${AGENT_MEMORY_NEO4J_URI:-}" ]]; then
    if command -v java >/dev/null 2>&1 && command -v mvn >/dev/null 2>&1; then
        if exports="$(bash scripts/neo4j-test-server.sh start)"; then
            eval "$exports"
            neo4j_started=1
        else
            echo "test.sh: Neo4j could not be started; the Neo4j contract tests will skip" >&2
        fi
    else
        echo "test.sh: java/mvn missing; the Neo4j contract tests will skip" >&2
    fi
fi
postgres_started=0
if [[ -z "${AGENT_MEMORY_POSTGRES_URL:-}" ]]; then
    if exports="$(bash scripts/postgres-test-server.sh start)"; then
        eval "$exports"
        postgres_started=1
    else
        echo "test.sh: PostgreSQL could not be started; the PostgreSQL contract tests will skip" >&2
    fi
fi
cleanup() {
    [[ $neo4j_started == 1 ]] && bash scripts/neo4j-test-server.sh stop >/dev/null 2>&1
    [[ $postgres_started == 1 ]] && bash scripts/postgres-test-server.sh stop >/dev/null 2>&1
    return 0
}
trap cleanup EXIT

# The tests run in parallel (pytest-xdist), one worker per core up to four: each worker loads the models once
# (about 1.5 GB), and the tests that share the servers work in tenants and schemas of their own. Test by test
# (--dist load), not file by file: grouped by file, Schemathesis's generated tests ran as 2 of their 58.
# AGENT_MEMORY_TEST_WORKERS=0 runs them in one process.
workers="${AGENT_MEMORY_TEST_WORKERS:-$(python3 -c 'import os; print(min(4, len(os.sched_getaffinity(0))))')}"
.venv/bin/python -m pytest -q -p no:cacheprovider -n "$workers" --dist load "$@"
status=$?
# pytest's "no tests collected" (5) is a failure here too: a suite that runs nothing proves nothing.
exit $status
