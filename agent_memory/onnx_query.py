"""The question's embedding through ONNX Runtime: the same model, the same vectors, a third of the time.

A question is one short text, and for one short text sentence-transformers spends most of its time
around the model, not in it: all-MiniLM-L6-v2 took 17 ms on an 8-word question and 21 ms on a
31-word one (2-core machine, quiet), ONNX Runtime 5 and 9 ms, and the vectors agree to 1e-7. For
ingestion's batches of hundreds of texts torch is as fast or faster (1,000 HotpotQA paragraphs:
31 s against 33–38 s), so documents stay with sentence-transformers.

The model is exported from the loaded sentence-transformers model once (about 3 s) into a cache
directory (``AGENT_MEMORY_MODEL_CACHE``, default ``~/.cache/agent-memory/onnx``) and reused by every
later process. Only the plain pipeline (transformer → mean pooling → normalization) is exported;
any other model, or a machine where the export fails, embeds its questions with torch as before.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import os
import tempfile
import threading
import warnings
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def cache_dir() -> Path:
    root = os.environ.get("AGENT_MEMORY_MODEL_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "agent-memory" / "onnx"


def _plain_mean_pooling(model) -> bool:
    """True when the model is transformer → mean pooling → normalization, which is all this replays."""
    names = [type(module).__name__ for module in model]
    if names != ["Transformer", "Pooling", "Normalize"]:
        return False
    return getattr(model[1], "pooling_mode", None) == "mean"


def _model_key(path: str) -> str:
    """Changes when the weights or the configuration change, or torch exports differently."""
    import torch

    digest = hashlib.sha256(torch.__version__.encode())
    for name in sorted(os.listdir(path)):
        file = Path(path) / name
        if file.is_file() and (name.endswith((".json", ".safetensors", ".bin", ".txt"))):
            stat = file.stat()
            digest.update(f"{name}:{stat.st_size}".encode())
            if stat.st_size < 1_000_000:
                digest.update(file.read_bytes())
    return digest.hexdigest()[:20]


def _export(model, target: Path) -> None:
    import torch

    auto_model = model[0].auto_model.eval()

    class LastHiddenState(torch.nn.Module):
        def __init__(self, inner) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    sample = model.tokenizer(["a question", "a somewhat longer question here"], padding=True, return_tensors="pt")
    if "token_type_ids" not in sample:
        raise ValueError("the tokenizer gives no token_type_ids")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=target.parent, suffix=".onnx.part", delete=False) as tmp:
        part = Path(tmp.name)
    try:
        with warnings.catch_warnings():
            # The exporter warns of indexing with negative indices, which BERT's graph does not
            # do; tests/integration/test_onnx_query.py compares the vectors.
            warnings.simplefilter("ignore")
            torch.onnx.export(LastHiddenState(auto_model), tuple(sample[k] for k in INPUTS), str(part),
                              input_names=list(INPUTS), output_names=["last_hidden_state"],
                              dynamic_axes={k: {0: "batch", 1: "tokens"} for k in (*INPUTS, "last_hidden_state")},
                              opset_version=17, dynamo=False)
        part.chmod(0o644)
        part.replace(target)  # atomic: another process never reads half a file
    finally:
        part.unlink(missing_ok=True)


class OnnxQueryEncoder:
    """Embeds one question as the sentence-transformers model would, through ONNX Runtime."""

    def __init__(self, onnx_path: Path, tokenizer, max_length: int) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.inter_op_num_threads = 1
        # Its threads would otherwise spin after each call, against the routes' threads and the
        # other embedding model on the same cores (as OpenMP's did; see embedding.py).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
        self._tokenizer = tokenizer
        self._max_length = max_length
        # A fast tokenizer sets its truncation state on each call: two threads at once raise
        # "Already borrowed". The session itself is safe to share.
        self._tokenizing = threading.Lock()

    @classmethod
    def for_model(cls, model, path: str, name: str) -> "OnnxQueryEncoder | None":
        """An encoder for this loaded sentence-transformers model, or None (then torch embeds)."""
        try:
            import onnxruntime  # noqa: F401 - only to know it is there
        except ImportError:
            return None
        if not _plain_mean_pooling(model):
            return None
        try:
            safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in name)
            target = cache_dir() / f"{safe}-{_model_key(path)}.onnx"
            for attempt in range(2):
                if attempt or not target.exists():
                    _export(model, target)
                # Its own tokenizer: ingestion's batches use the model's in other threads.
                encoder = cls(target, copy.deepcopy(model.tokenizer), int(model.max_seq_length or 512))
                if encoder.agrees_with(model):
                    return encoder
            log.warning("questions are embedded with torch: the ONNX export of %s gives other vectors", path)
            return None
        except Exception as exc:  # noqa: BLE001 - a faster path, never a required one
            log.warning("questions are embedded with torch: the ONNX export of %s failed: %s", path, exc)
            return None

    def agrees_with(self, model, tolerance: float = 1e-4) -> bool:
        """Whether this encoder gives the model's own vectors: checked on every load, so an export
        of other weights (a cached file the key did not tell apart) is made again, never used."""
        probes = ["What did Caroline research last May?", "为什么2008年NBA总决赛被誉为梦幻对决？"]
        expected = np.asarray(model.encode(probes, normalize_embeddings=True, show_progress_bar=False))
        got = np.vstack([self.embed(text) for text in probes])
        return got.shape == expected.shape and float(np.abs(got - expected).max()) <= tolerance

    def embed(self, text: str) -> np.ndarray:
        with self._tokenizing:
            encoded = self._tokenizer([text], truncation=True, max_length=self._max_length, return_tensors="np")
        feeds = {k: np.asarray(encoded[k], dtype=np.int64) for k in INPUTS}
        hidden = self._session.run(None, feeds)[0][0]
        mask = feeds["attention_mask"][0].astype(np.float32)[:, None]
        vector = (hidden * mask).sum(axis=0) / max(float(mask.sum()), 1e-9)
        return (vector / max(float(np.linalg.norm(vector)), 1e-12)).astype(np.float32)
