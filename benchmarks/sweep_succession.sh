#!/usr/bin/env bash
# The succession stage's choices (docs/journal/2026-12-07-what-holds-now.md), side by side in one run per set: the
# served default beside it off, its bonuses at other weights and its best-N gate at 20 and 40, on the updates
# kind of one seed, both languages, at 200 and 300 tokens:
#
#   benchmarks/sweep_succession.sh SEED WORK_DIR
#   benchmarks/sweep_succession.sh 13 /tmp/succession13
#
# WORK_DIR keeps the generated material (WORK_DIR/material) and one data dir per language (WORK_DIR/en, WORK_DIR/zh):
# the first run ingests (a few minutes a language), a second run of the same seed asks again on those stores.
# Seed 12 chose the weights; 13 and 14 hold them out. Prints each set's table of soft / strict per system.
set -euo pipefail
seed=$1; work=$2
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="$here/.venv/bin/python"
source_dir="${AGENT_MEMORY_EVAL_SOURCE:-$here/../shared/eval}"
mkdir -p "$work"
if [ ! -f "$work/material/en_users_updates.json" ]; then
  PYTHONPATH="$here" "$py" "$here/benchmarks/make_dev_material.py" --source "$source_dir" --out "$work/material" \
    --seed "$seed" --kinds en_users_updates,zh_users_updates
fi
for lang in en zh; do
  AGENT_MEMORY_NO_PROGRESS=1 "$py" -m agent_memory.cli --data-dir "$work/$lang" eval \
    "$work/material/${lang}_users_updates.json" --budget 200,300 --no-baselines --out "$work/out-$lang" \
    --compare 'off={"present_recency": 0, "before_anchor": 0}' \
    --compare 'now3={"present_recency": 3}' \
    --compare 'before6={"before_anchor": 6}' \
    --compare 'top20={"succession_top": 20}' \
    --compare 'top40={"succession_top": 40}' > "$work/$lang.log"
  echo "== ${lang}_users_updates, seed $seed"
  grep -A9 '^| system' "$work/out-$lang/locomo.md" | grep -E '^\| (system|product)'
done
