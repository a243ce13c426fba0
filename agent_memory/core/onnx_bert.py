"""A sentence-transformers BERT model (all-MiniLM-L6-v2 by default) run by ONNX Runtime, without torch.

torch's Linux wheels from PyPI bring CUDA with them: 5.2 GB of the 6.9 GB environment, for a
model that only ever runs on the CPU here, and one CI machine ran out of disk installing it. This
module reads the model directory sentence-transformers would (``config.json``, the
``model.safetensors`` weights, ``tokenizer.json``, ``modules.json`` and the pooling config) and
writes the BERT encoder as an ONNX graph, node by node, over those weights, followed by the same
masked mean pooling and normalization. Texts are tokenized by the model's own ``tokenizer.json``
(the Rust ``tokenizers`` library that transformers' fast tokenizer wraps), stripped and truncated
as sentence-transformers does.

The vectors are sentence-transformers' own: tests/integration/test_onnx_bert.py compares them with
vectors it recorded (scripts/record_minilm_reference.py), and with the model's live output where
the ``sentence-transformers`` extra is installed. Any other architecture or pooling is left to
sentence-transformers (``pip install 'agent-memory[sentence-transformers]'``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from agent_memory.core.built_once import BuiltOnce
from agent_memory.core.onnx_graph import GraphBuilder, graph_session, quiet_options

INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class UnsupportedModel(ValueError):
    """The directory holds a model this module does not replay (then sentence-transformers runs it)."""


def _read_json(path: Path) -> dict | list:
    return json.loads(path.read_text(encoding="utf-8"))


def read_config(root: Path) -> dict:
    """A model directory's ``config.json`` (UnsupportedModel where it has none)."""
    path = root / "config.json"
    if not path.exists():
        raise UnsupportedModel(f"{root} has no config.json")
    config = _read_json(path)
    if not isinstance(config, dict):
        raise UnsupportedModel(f"{root}: config.json holds a JSON {type(config).__name__}, not an object")
    return config


class BertEncoderDir:
    """What the encoder's graph and the tokenizer need from any BERT model directory (the sentence
    embedder's here, the cross-encoder's in onnx_cross_encoder.py): ``config.json``'s sizes, the
    ``model.safetensors`` weights and ``tokenizer.json``."""

    def __init__(self, root: Path, config: dict) -> None:
        self.root = root
        if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu" \
                or config.get("position_embedding_type", "absolute") != "absolute":
            raise UnsupportedModel(f"{root}: {config.get('model_type')!r} with {config.get('hidden_act')!r}, "
                                   "not a BERT encoder with exact GELU and absolute positions")
        for name in ("model.safetensors", "tokenizer.json"):
            if not (root / name).exists():
                raise UnsupportedModel(f"{root} has no {name}")
        self.config = config
        self.hidden = int(config["hidden_size"])
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.max_positions = int(config.get("max_position_embeddings", 512))

    def tensor_shapes(self) -> dict[str, list[int]]:
        """The weights' names (without an architecture's ``bert.`` prefix) and shapes, read from the
        safetensors header alone (no tensor is loaded)."""
        from safetensors import safe_open

        with safe_open(str(self.root / "model.safetensors"), framework="numpy") as handle:
            return {name.removeprefix("bert."): list(handle.get_slice(name).get_shape()) for name in handle.keys()}

    def tensor_names(self) -> set[str]:
        return set(self.tensor_shapes())

    def check_tensors(self, more: Sequence[str] = ()) -> None:
        """UnsupportedModel naming the first weight the encoder (and ``more``, a head's) needs that the
        file lacks: told when the model is chosen, not when the graph is first built."""
        names = self.tensor_names()
        e = "embeddings"
        needed = [f"{e}.{part}" for part in ("position_embeddings.weight", "word_embeddings.weight",
                                             "token_type_embeddings.weight", "LayerNorm.weight", "LayerNorm.bias")]
        needed += [f"encoder.layer.{layer}.{role}.{kind}" for layer in range(self.layers)
                   for role in BERT_NAMES.values() for kind in ("weight", "bias")]
        missing = next((name for name in [*needed, *more] if name not in names), None)
        if missing is not None:
            raise UnsupportedModel(f"{self.root}: no tensor {missing!r} in model.safetensors")

    def weights(self) -> dict[str, np.ndarray]:
        from safetensors.numpy import load_file

        tensors = load_file(str(self.root / "model.safetensors"))
        # Some exports prefix every name with the architecture ("bert.embeddings...").
        return {name.removeprefix("bert."): value for name, value in tensors.items()}

    def float_tensors(self) -> Callable[[str], np.ndarray]:
        """The weights read once, each looked up by name as float32 (UnsupportedModel naming one missing)."""
        weights = self.weights()

        def tensor(name: str) -> np.ndarray:
            if name not in weights:
                raise UnsupportedModel(f"{self.root}: no tensor {name!r} in model.safetensors")
            return weights[name].astype(np.float32)

        return tensor


class BertModelDir(BertEncoderDir):
    """A sentence-transformers model directory: the encoder, then mean pooling and normalization."""

    def __init__(self, path: str | Path) -> None:
        root = Path(path)
        modules = root / "modules.json"
        if not modules.exists():
            raise UnsupportedModel(f"{root} has no modules.json")
        pipeline = _read_json(modules)
        kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in pipeline]
        if kinds != ["Transformer", "Pooling", "Normalize"]:
            raise UnsupportedModel(f"{root}: modules {kinds}, not Transformer → Pooling → Normalize")
        pooling_config = _read_json(root / (pipeline[1].get("path") or "1_Pooling") / "config.json")
        modes = sorted(k for k, v in pooling_config.items() if k.startswith("pooling_mode") and v is True)
        if modes != ["pooling_mode_mean_tokens"]:
            raise UnsupportedModel(f"{root}: pooling {modes}, not mean pooling")
        super().__init__(root, read_config(root))
        st_path = root / "sentence_bert_config.json"
        st_config = _read_json(st_path) if st_path.exists() else {}
        self.max_length = min(int(st_config.get("max_seq_length") or self.max_positions), self.max_positions)
        self.lower_case = bool(st_config.get("do_lower_case", False))


BERT_NAMES = {  # the encoder's roles (onnx_graph.py) → HF BertModel's tensor names within each layer
    "query": "attention.self.query", "key": "attention.self.key", "value": "attention.self.value",
    "attention_out": "attention.output.dense", "ffn_in": "intermediate.dense", "ffn_out": "output.dense",
    "attention": "attention.output.LayerNorm", "ffn": "output.LayerNorm",
}


def bert_encoder(g: GraphBuilder, model: BertEncoderDir, tensor: Callable[[str], np.ndarray]) -> tuple[str, str]:
    """BERT's embeddings and encoder layers (HF ``BertModel`` without its pooler) written into ``g`` over
    the inputs input_ids, attention_mask, token_type_ids [batch, tokens]: the names of the hidden states
    [batch, tokens, hidden] and of the attention mask as floats [batch, tokens], for a head to read."""
    from onnx import TensorProto

    node, const = g.node, g.const

    def linear(x: str, layer: int, role: str) -> str:
        name = f"encoder.layer.{layer}.{BERT_NAMES[role]}"
        product = node("MatMul", [x, const(f"{name}.wt", tensor(f"{name}.weight").T)], f"{name}.xw")
        return node("Add", [product, const(f"{name}.b", tensor(f"{name}.bias"))], f"{name}.y")

    def norm(x: str, layer: int, role: str) -> str:
        name = f"encoder.layer.{layer}.{BERT_NAMES[role]}"
        return g.layer_norm(x, tensor(f"{name}.weight"), tensor(f"{name}.bias"), model.eps, name)

    const("one", np.array(1.0, np.float32))
    const("masked", np.array(np.finfo(np.float32).min, np.float32))  # transformers' additive mask value
    const("axis0", np.array([0], np.int64))
    const("axis1", np.array([1], np.int64))
    const("axis2", np.array([2], np.int64))
    const("mask_axes", np.array([1, 2], np.int64))

    e = "embeddings"
    # The first `tokens` rows of the position table, `tokens` as a 1-D [T] read off the input's shape.
    tokens = node("Slice", [node("Shape", ["input_ids"], "ids.shape"), "axis1", "axis2"], "tokens")
    positions = node("Slice", [const("pos", tensor(f"{e}.position_embeddings.weight")), "axis0", tokens, "axis0"],
                     "posv")
    words = node("Gather", [const("word", tensor(f"{e}.word_embeddings.weight")), "input_ids"], "words")
    types = node("Gather", [const("types", tensor(f"{e}.token_type_embeddings.weight")), "token_type_ids"], "typev")
    embedded = node("Add", [node("Add", [words, positions], "words_pos"), types], "embedded")
    x = g.layer_norm(embedded, tensor(f"{e}.LayerNorm.weight"), tensor(f"{e}.LayerNorm.bias"), model.eps, e)
    mask = node("Cast", ["attention_mask"], "mask", to=TensorProto.FLOAT)
    # (1 - mask) * min, as transformers builds the extended attention mask: [batch, 1, 1, tokens].
    bias = node("Mul", [node("Sub", ["one", node("Unsqueeze", [mask, "mask_axes"], "mask4")], "unmask"), "masked"],
                "mask_bias")
    return g.encoder_layers(x, model.layers, model.hidden, model.heads, linear, norm, mask_bias=bias), mask


def input_infos() -> list:
    """The graph inputs every BERT graph here takes: ``INPUTS``, int64 [batch, tokens]."""
    from onnx import TensorProto, helper

    return [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "tokens"]) for name in INPUTS]


def encoder_graph(model: BertModelDir):
    """BERT's encoder (HF ``BertModel``) as an ONNX graph over the model's float32 weights, then
    sentence-transformers' mean pooling over the attention mask and normalization to unit length.
    Inputs: input_ids, attention_mask, token_type_ids [batch, tokens]; output: vectors [batch, hidden]."""
    from onnx import TensorProto, helper

    g = GraphBuilder()
    node, const = g.node, g.const
    x, mask = bert_encoder(g, model, model.float_tensors())
    const("last_axis", np.array([-1], np.int64))
    const("tiny", np.array(1e-9, np.float32))  # sentence-transformers' clamp of the token count
    const("norm_eps", np.array(1e-12, np.float32))  # torch.nn.functional.normalize's eps
    # Mean over the real tokens (sentence-transformers' Pooling), then unit length (its Normalize).
    mask3 = node("Unsqueeze", [mask, "last_axis"], "mask3")
    summed = node("ReduceSum", [node("Mul", [x, mask3], "masked_x"), "axis1"], "summed", keepdims=0)
    counts = node("Max", [node("ReduceSum", [mask3, "axis1"], "counts", keepdims=0), "tiny"], "counts_clamped")
    pooled = node("Div", [summed, counts], "pooled")
    length = node("Max", [node("ReduceL2", [pooled, "last_axis"], "l2", keepdims=1), "norm_eps"], "l2_clamped")
    node("Div", [pooled, length], "vectors")
    return g.model("sentence-transformers-bert", input_infos(),
                   [helper.make_tensor_value_info("vectors", TensorProto.FLOAT, ["batch", model.hidden])])


class OnnxBertEncoder:
    """Embeds texts as sentence-transformers' ``encode(..., normalize_embeddings=True)`` would.

    The ONNX session is built on the first text to embed (about 2 s: the weights are read and the graph
    written), so a command that never embeds (``list``, ``inspect``, ``stats``, an ingestion of unchanged
    files) never pays for it; what is checked at once is that the model is one this module replays."""

    def __init__(self, path: str | Path, graph_cache: Path | None = None) -> None:
        from tokenizers import Tokenizer

        self.graph_cache = graph_cache  # onnx_graph.graph_session
        self.model = BertModelDir(path)
        self.model.check_tensors()
        self.dimension = self.model.hidden
        tokenizer = Tokenizer.from_file(str(self.model.root / "tokenizer.json"))
        # tokenizer.json carries its own settings (this model's: pad and cut at 128); these are
        # sentence-transformers' for the model: cut at max_seq_length, pad to the batch's longest.
        tokenizer.enable_truncation(max_length=self.model.max_length)
        tokenizer.no_padding()
        # Set once, never changed: threads encoding at once only share it (transformers' wrapper
        # sets truncation on every call, which is what raises "Already borrowed" across threads).
        self._tokenizer = tokenizer
        self._session = BuiltOnce(self._build_session)

    def _build_session(self):
        root = self.model.root
        return graph_session("bert", lambda: encoder_graph(self.model), quiet_options(), cache_dir=self.graph_cache,
                             inputs=[root / "model.safetensors", root / "config.json"])

    def _ids(self, texts: Sequence[str]) -> list[list[int]]:
        prepared = [str(t).strip() for t in texts]  # sentence-transformers strips each text
        if self.model.lower_case:
            prepared = [t.lower() for t in prepared]
        return [encoding.ids for encoding in self._tokenizer.encode_batch(prepared)]

    def embed(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """Unit vectors [len(texts), hidden]; texts of similar length share a batch (less padding)."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        ids = self._ids(texts)
        out = np.empty((len(ids), self.dimension), dtype=np.float32)
        for chunk in length_batches([len(i) for i in ids], batch_size):
            out[chunk] = self._session.get().run(None, padded_feeds(chunk, ids))[0]
        return out


def padded_feeds(chunk: Sequence[int], ids: Sequence[Sequence[int]],
                 types: Sequence[Sequence[int]] | None = None) -> dict[str, np.ndarray]:
    """A BERT graph's ``INPUTS`` for the texts ``chunk`` indexes in ``ids`` (and their token ``types``; none:
    all 0), padded to the chunk's first, its longest (``length_batches``): [len(chunk), longest] int64."""
    width = len(ids[chunk[0]])
    input_ids = np.zeros((len(chunk), width), dtype=np.int64)
    token_types = np.zeros((len(chunk), width), dtype=np.int64)
    attention = np.zeros((len(chunk), width), dtype=np.int64)
    for row, i in enumerate(chunk):
        input_ids[row, :len(ids[i])] = ids[i]
        attention[row, :len(ids[i])] = 1
        if types is not None:
            token_types[row, :len(ids[i])] = types[i]
    return {"input_ids": input_ids, "attention_mask": attention, "token_type_ids": token_types}


# A text joins a batch only if it is at least this share of the batch's longest: no text is
# padded by more than a tenth of the batch's width. With fixed batches of 64 over length-sorted
# texts, a small call (an ingestion batch of a few hundred texts of all lengths) pads short texts
# to long ones: on the mixed corpus of benchmarks/bench_ingest.py, MiniLM's four calls in the job
# took 17.5 s against 12.8-13.6 s batched this way, and one call over the same texts 14.7 against
# 13.2-13.6 (best of three, interleaved; the vectors agree within 3e-8).
BATCH_LENGTH_SHARE = 0.9


def length_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices into ``lengths``, longest first, in batches of at most ``batch_size`` where every
    length is at least ``BATCH_LENGTH_SHARE`` of the batch's first (its longest)."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    for i in order:
        batch = batches[-1] if batches else None
        if batch and len(batch) < batch_size and lengths[i] >= BATCH_LENGTH_SHARE * lengths[batch[0]]:
            batch.append(i)
        else:
            batches.append([i])
    return batches
