#!/usr/bin/env bash
# The main job on embedded defaults: install, ingest the sample corpus, print a prompt for a sample question.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/install.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_VERBOSITY=error
export AGENT_MEMORY_DATA_DIR="${AGENT_MEMORY_DATA_DIR:-data}"
exec .venv/bin/agent-memory demo "$@"
