"""The embedding cache on SQLite: vectors keyed by (model, content hash), surviving restarts."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Sequence

import numpy as np


class EmbeddingCache:
    """SQLite table of vectors keyed by (model, content hash); survives restarts."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(str(path), check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS embeddings (model TEXT, hash TEXT, vector BLOB, PRIMARY KEY (model, hash))"
        )
        self._lock = threading.Lock()

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(hashes))
        with self._lock:
            for start in range(0, len(unique), 500):
                part = unique[start : start + 500]
                marks = ",".join("?" * len(part))
                rows = self._conn.execute(
                    f"SELECT hash, vector FROM embeddings WHERE model=? AND hash IN ({marks})", [model, *part]
                ).fetchall()
                for h, blob in rows:
                    found[h] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_many(self, model: str, items: dict[str, np.ndarray]) -> None:
        with self._lock, self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?)",
                [(model, h, np.asarray(v, dtype=np.float32).tobytes()) for h, v in items.items()],
            )

    def close(self) -> None:
        self._conn.close()
