"""A tiny random BERT cross-encoder (2 layers, hidden 32), written from a fixed seed with numpy alone.

scripts/record_cross_encoder_reference.py (torch and transformers) and tests/integration/test_onnx_cross_encoder.py
(neither) each write the same directory with :func:`write_tiny_model`: the weights are 4 MB (MiniLM's
vocabulary of 30,522 tokens), too large to keep as a fixture, and regenerate in milliseconds. Only numpy,
safetensors, the standard library and the package's core (``core/embedding.py``: the standard library and numpy
at import) here: the recording environment holds nothing else of the package's dependencies.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

from agent_memory.core.embedding import packaged_minilm_path

SEED = 20261206
HIDDEN, LAYERS, HEADS, INTERMEDIATE, POSITIONS = 32, 2, 2, 64, 512
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt")
# The fixture's pairs: the cut is small, so the long passage is truncated and the batch is padded.
MAX_TOKENS = 48
QUESTION = "What did Caroline research last May?"
PAIRS = [
    (QUESTION, "Caroline: I spent last May researching adoption agencies for LGBTQ+ families."),
    (QUESTION, "Melanie: We went camping by the lake with the kids."),
    (QUESTION, "Caroline: " + "The harbour at dawn was quiet, the boats rocking on the swell. " * 12),
    ("为什么2008年NBA总决赛被誉为梦幻对决？", "2008年NBA总决赛由波士顿凯尔特人对阵洛杉矶湖人，两队是联盟历史上最著名的宿敌。"),
    (QUESTION, ""),
]


def tiny_weights(vocabulary: int, prefix: str = "bert.") -> dict[str, np.ndarray]:
    """Every tensor of HF ``BertForSequenceClassification`` (one label), drawn from ``SEED``: weights large
    enough that attention is far from uniform and the logits spread (about ±1)."""
    rng = np.random.default_rng(SEED)

    def normal(*shape: int, scale: float = 0.3) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    def norm(name: str) -> dict[str, np.ndarray]:
        return {f"{name}.weight": 1.0 + normal(HIDDEN, scale=0.1), f"{name}.bias": normal(HIDDEN, scale=0.1)}

    def linear(name: str, out: int, into: int) -> dict[str, np.ndarray]:
        return {f"{name}.weight": normal(out, into), f"{name}.bias": normal(out, scale=0.1)}

    e = "embeddings"
    tensors = {f"{e}.word_embeddings.weight": normal(vocabulary, HIDDEN),
               f"{e}.position_embeddings.weight": normal(POSITIONS, HIDDEN),
               f"{e}.token_type_embeddings.weight": normal(2, HIDDEN), **norm(f"{e}.LayerNorm")}
    for layer in range(LAYERS):
        p = f"encoder.layer.{layer}"
        for role in ("query", "key", "value"):
            tensors |= linear(f"{p}.attention.self.{role}", HIDDEN, HIDDEN)
        tensors |= linear(f"{p}.attention.output.dense", HIDDEN, HIDDEN) | norm(f"{p}.attention.output.LayerNorm")
        tensors |= linear(f"{p}.intermediate.dense", INTERMEDIATE, HIDDEN) | linear(f"{p}.output.dense", HIDDEN,
                                                                                   INTERMEDIATE)
        tensors |= norm(f"{p}.output.LayerNorm")
    tensors |= linear("pooler.dense", HIDDEN, HIDDEN)
    out = {f"{prefix}{name}": value for name, value in tensors.items()}
    return out | linear("classifier", 1, HIDDEN)


def tiny_config(vocabulary: int) -> dict:
    """config.json as transformers' ``save_pretrained`` writes it for this model."""
    return {"architectures": ["BertForSequenceClassification"], "model_type": "bert", "hidden_act": "gelu",
            "hidden_size": HIDDEN, "num_hidden_layers": LAYERS, "num_attention_heads": HEADS,
            "intermediate_size": INTERMEDIATE, "max_position_embeddings": POSITIONS, "type_vocab_size": 2,
            "vocab_size": vocabulary, "layer_norm_eps": 1e-12, "pad_token_id": 0,
            "position_embedding_type": "absolute", "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0,
            "id2label": {"0": "LABEL_0"}, "label2id": {"LABEL_0": 0}}


def write_tiny_model(directory: Path, prefix: str = "bert.") -> Path:
    """The tiny model's directory (config, weights, MiniLM's tokenizer files); ``prefix`` '' writes the
    tensors' names without ``bert.``, as some exports do."""
    from safetensors.numpy import save_file

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    source = Path(packaged_minilm_path())  # whose tokenizer the tiny model reads with
    vocabulary = json.loads((source / "config.json").read_text(encoding="utf-8"))["vocab_size"]
    for name in TOKENIZER_FILES:
        if (source / name).exists():
            shutil.copyfile(source / name, directory / name)
    (directory / "config.json").write_text(json.dumps(tiny_config(vocabulary), indent=2), encoding="utf-8")
    save_file(tiny_weights(vocabulary, prefix), str(directory / "model.safetensors"), metadata={"format": "pt"})
    return directory
