"""A BERT cross-encoder (Hugging Face ``BertForSequenceClassification`` with one label) run by ONNX
Runtime, without torch: one relevance logit per (question, passage) pair.

The directory is the one transformers' ``save_pretrained`` writes, as ``cross-encoder/ms-marco-MiniLM-L-6-v2``
and the models ``benchmarks/train_cross_encoder.py`` trains are saved: ``config.json`` naming the
architecture, ``model.safetensors`` (the encoder's tensors with or without the ``bert.`` prefix, then
``pooler.dense.*`` and ``classifier.*``) and ``tokenizer.json``. The graph is the sentence encoder's
(onnx_bert.py) followed by BERT's pooler (dense and tanh over the first token) and the one-output
classifier. A pair is tokenized by the model's own ``tokenizer.json`` as transformers does for
``tokenizer(question, passage, truncation="only_second", max_length=...)``: ``[CLS] question [SEP]
passage [SEP]``, token types 0 then 1, only the passage cut. tests/integration/test_onnx_cross_encoder.py
compares the logits with the ones transformers recorded (scripts/record_cross_encoder_reference.py).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Sequence

import numpy as np

from agent_memory.core.built_once import BuiltOnce
from agent_memory.core.errors import ConfigError
from agent_memory.core.onnx_bert import (
    BertEncoderDir,
    UnsupportedModel,
    bert_encoder,
    input_infos,
    length_batches,
    padded_feeds,
    read_config,
)
from agent_memory.core.onnx_graph import GraphBuilder, graph_session, quiet_options

ARCHITECTURE = "BertForSequenceClassification"
HEAD_TENSORS = ("pooler.dense.weight", "pooler.dense.bias", "classifier.weight", "classifier.bias")
# What the pipeline passes unless the retrieval config says otherwise (RetrievalConfig.cross_encoder).
MAX_TOKENS = 192
BATCH = 64


def label_count(config: dict) -> int:
    """How many outputs the classifier has, as transformers reads a saved config: ``id2label``'s entries
    (what ``save_pretrained`` writes), else ``num_labels``, else its default of 2."""
    labels = config.get("id2label")
    if isinstance(labels, dict) and labels:
        return len(labels)
    return int(config.get("num_labels", 2))


class CrossEncoderDir(BertEncoderDir):
    """A saved one-label BERT sequence classifier; ConfigError naming the directory and what it holds otherwise."""

    def __init__(self, path: str | Path) -> None:
        from safetensors import SafetensorError

        root = Path(path).expanduser()
        if not root.is_dir():
            raise ConfigError(f"cross-encoder model {str(root)!r}: no such folder")
        try:
            config = read_config(root)
            architectures = config.get("architectures")
            if architectures != [ARCHITECTURE]:
                raise UnsupportedModel(f"{root}: architectures {architectures!r} in config.json, not "
                                       f"[{ARCHITECTURE!r}]")
            labels = label_count(config)
            if labels != 1:
                raise UnsupportedModel(f"{root}: a classifier of {labels} labels, not 1 (a cross-encoder gives "
                                       "one relevance logit per pair)")
            super().__init__(root, config)
            self.check_tensors(HEAD_TENSORS)
            shape = self.tensor_shapes()["classifier.weight"]
            if shape != [1, self.hidden]:
                raise UnsupportedModel(f"{root}: classifier.weight of shape {shape}, not [1, {self.hidden}]")
        except UnsupportedModel as exc:
            raise ConfigError(f"cross-encoder model {exc}") from exc
        except (OSError, ValueError, SafetensorError) as exc:  # a config.json or weights' header that does not read
            raise ConfigError(f"cross-encoder model {root}: {type(exc).__name__}: {exc}") from exc


def cross_encoder_graph(model: CrossEncoderDir):
    """The encoder, BERT's pooler over the first token and the classifier: logits [batch]."""
    from onnx import TensorProto, helper

    tensor = model.float_tensors()
    g = GraphBuilder()
    node, const = g.node, g.const
    x, _ = bert_encoder(g, model, tensor)
    first = node("Gather", [x, const("first_token", np.array(0, np.int64))], "first", axis=1)  # [batch, hidden]
    pooled = node("Add", [node("MatMul", [first, const("pooler.wt", tensor("pooler.dense.weight").T)], "pooler.xw"),
                          const("pooler.b", tensor("pooler.dense.bias"))], "pooler.y")
    pooled = node("Tanh", [pooled], "pooled")
    head = node("Add", [node("MatMul", [pooled, const("classifier.wt", tensor("classifier.weight").T)], "head.xw"),
                        const("classifier.b", tensor("classifier.bias"))], "head")  # [batch, 1]
    node("Reshape", [head, const("flat_logits", np.array([-1], np.int64))], "logits")
    return g.model("bert-cross-encoder", input_infos(),
                   [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch"])])


class OnnxCrossEncoder:
    """Scores passages against a question (``retrieval/rerank/cross_encoder.py``'s ``PassageScorer``).

    The directory is checked at once (its config, files and tensor names: milliseconds); the ONNX
    session is built on the first pair to score (the weights read and the graph written, or read from
    ``graph_cache``), so a process that never ranks pays nothing for it."""

    def __init__(self, path: str | Path, graph_cache: Path | None = None) -> None:
        from tokenizers import Tokenizer

        self.model = CrossEncoderDir(path)
        self.graph_cache = graph_cache
        self._tokenizer_file = str(self.model.root / "tokenizer.json")
        try:
            plain = Tokenizer.from_file(self._tokenizer_file)
        except Exception as exc:  # noqa: BLE001 - the Rust library's errors are plain Exceptions
            raise ConfigError(f"cross-encoder model {self.model.root}: tokenizer.json does not load: {exc}") from exc
        plain.no_truncation()
        plain.no_padding()
        self._plain = plain  # never changed: counts a question's tokens
        self._pairs_for: dict[tuple[int, str], Tokenizer] = {}
        self._lock = threading.Lock()
        self._session = BuiltOnce(self._build_session)

    def _build_session(self):
        root = self.model.root
        return graph_session("cross-encoder", lambda: cross_encoder_graph(self.model), quiet_options(),
                             cache_dir=self.graph_cache, inputs=[root / "model.safetensors", root / "config.json"])

    def _pair_tokenizer(self, max_tokens: int, strategy: str):
        """One tokenizer per cut, set once and never changed: threads scoring at once only share it."""
        from tokenizers import Tokenizer

        key = (max_tokens, strategy)
        with self._lock:
            if key not in self._pairs_for:
                tokenizer = Tokenizer.from_file(self._tokenizer_file)
                tokenizer.enable_truncation(max_length=max_tokens, strategy=strategy)
                tokenizer.no_padding()
                self._pairs_for[key] = tokenizer
            return self._pairs_for[key]

    def encode(self, question: str, passages: Sequence[str], max_tokens: int = MAX_TOKENS):
        """Each pair's token ids and token types, at most ``max_tokens`` (and the model's positions)."""
        limit = min(max_tokens, self.model.max_positions)
        asked = len(self._plain.encode(question, add_special_tokens=False).ids)
        # Only the passage is cut, as the model was trained; a question that leaves the passage no room
        # (longer than any it was trained on) is cut too rather than refused.
        fits = asked + self._plain.num_special_tokens_to_add(True) < limit
        tokenizer = self._pair_tokenizer(limit, "only_second" if fits else "longest_first")
        encodings = tokenizer.encode_batch([(question, passage) for passage in passages])
        return [e.ids for e in encodings], [e.type_ids for e in encodings]

    def score(self, question: str, passages: Sequence[str], *, max_tokens: int = MAX_TOKENS,
              batch: int = BATCH) -> list[float]:
        """One logit per passage (higher: more relevant to ``question``); pairs of similar length share a batch."""
        if not passages:
            return []
        ids, types = self.encode(question, passages, max_tokens)
        out = np.empty(len(ids), dtype=np.float32)
        for chunk in length_batches([len(i) for i in ids], batch):
            out[chunk] = self._session.get().run(None, padded_feeds(chunk, ids, types))[0]
        return [float(v) for v in out]

    def close(self) -> None:
        """Let the session's memory go (about the weights' size); a later score builds it again."""
        self._session = BuiltOnce(self._build_session)
