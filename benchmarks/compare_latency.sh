#!/usr/bin/env bash
# Latency through the API of an older commit beside the working tree, alternated, on a kept store:
#
#   benchmarks/compare_latency.sh REF SIZE DATA_DIR [ROUNDS]
#   benchmarks/compare_latency.sh f448576 10000 /tmp/scale10k 2
#
# DATA_DIR is a store bench_scale.py built (--data-dir). Each round runs bench_scale.py --sizes SIZE
# --questions 100 on it, first from a worktree of REF, then from this tree: each run starts its own
# server, so both read cold caches, and alternating spreads the machine's drift over both. The
# worktree is made beside this repository (so that ../shared/eval resolves the same) and removed at
# the end. Prints /v1/prompt and /v1/ask p50 / p95 and the stages' p50 / p95 per run.
set -euo pipefail
ref=$1; size=$2; data=$3; rounds=${4:-2}
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="$here/.venv/bin/python"
tree="$(dirname "$here")/latency-$(git -C "$here" rev-parse --short "$ref")"
out="$(mktemp -d)"
git -C "$here" worktree add -q --detach "$tree" "$ref"
trap 'git -C "$here" worktree remove --force "$tree"; rm -rf "$out"' EXIT
for round in $(seq 1 "$rounds"); do
    for side in "$ref" HEAD; do
        root="$here"; [[ "$side" == "$ref" ]] && root="$tree"
        json="$out/$side-$round.json"
        (cd "$root" && "$py" benchmarks/bench_scale.py --sizes "$size" --questions 100 --data-dir "$data" \
            --out "$json" > "$out/$side-$round.log" 2>&1)
        "$py" - "$json" "$side" "$round" <<'PY'
import json, sys
path, side, round_ = sys.argv[1:]
lat = json.load(open(path))["sizes"][0]["latency"]
stages = ", ".join(f"{k} {v['p50']:.0f}/{v['p95']:.0f}" for k, v in lat["stages"].items() if k != "fusion")
print(f"{side:>10} round {round_}: /v1/prompt {lat['request']['p50']:.0f}/{lat['request']['p95']:.0f}"
      f"  /v1/ask {lat['ask_request']['p50']:.0f}/{lat['ask_request']['p95']:.0f} ms  ({stages})")
PY
    done
done
