"""Build the hand-written memory sets in languages nothing was tuned on (Japanese, Korean, Russian, German, Arabic,
Thai, French, Spanish, Italian, Portuguese) as LoCoMo-format files: one conversation each, the same story told in
each language (76 dated turns over five sessions, 28 questions: 24 single-hop, 2 temporal, 2 multi-hop, some
reworded), so rows compare across languages. Written for the probe of 2026-12-06
(docs/journal/2026-12-06-languages-nothing-was-tuned-on.md); French, Spanish, Italian and Portuguese, translated
from the German, for the Latin-script languages' routing. A native speaker has not checked them; names and places
are localised (the Spanish speaker learns Portuguese in Lisbon, where the others learn Spanish in Barcelona).

    python benchmarks/languages/build.py ja ko ru de ar th fr es it pt --out /tmp/lang
    agent-memory --data-dir /tmp/am/ko eval /tmp/lang/ko.json --budget 300,800 --out /tmp/out-ko
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

DATES = ["7:30 pm on 2 March, 2024", "8:15 pm on 16 March, 2024", "6:00 pm on 5 April, 2024",
         "9:10 pm on 28 April, 2024", "7:45 pm on 20 May, 2024"]
LANGUAGES = ("ja", "ko", "ru", "de", "ar", "th", "fr", "es", "it", "pt")


def build(lang: str) -> dict:
    """One language's set: its story file's sessions (speaker 0 or 1, text, the tags of the facts a turn tells)
    and questions (question, answer, the tags of their evidence, category)."""
    story = importlib.import_module(lang)
    conversation: dict = {"speaker_a": story.A, "speaker_b": story.B}
    tags: dict[str, str] = {}
    for number, turns in enumerate(story.SESSIONS, 1):
        conversation[f"session_{number}_date_time"] = DATES[number - 1]
        rows = []
        for index, (who, text, *told) in enumerate(turns, 1):
            dia = f"D{number}:{index}"
            rows.append({"speaker": story.A if who == 0 else story.B, "dia_id": dia, "text": text})
            for tag in told:
                if tag in tags:
                    raise ValueError(f"{lang}: the fact {tag!r} is told twice ({tags[tag]}, {dia})")
                tags[tag] = dia
        conversation[f"session_{number}"] = rows
    qa = [{"question": q, "answer": a, "evidence": [tags[t] for t in evidence], "category": category}
          for q, a, evidence, category in story.QA]
    return {"sample_id": f"{lang}-1", "conversation": conversation, "qa": qa}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("languages", nargs="*", metavar="LANG", help=f"any of {', '.join(LANGUAGES)} (default: all)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    unknown = sorted(set(args.languages) - set(LANGUAGES))
    if unknown:
        parser.error(f"no set for {', '.join(unknown)}: the languages are {', '.join(LANGUAGES)}")
    args.out.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(Path(__file__).parent))
    for lang in args.languages or LANGUAGES:
        record = build(lang)
        (args.out / f"{lang}.json").write_text(json.dumps([record], ensure_ascii=False, indent=1), encoding="utf-8")
        turns = sum(len(v) for k, v in record["conversation"].items() if k.startswith("session_") and isinstance(v, list))
        print(f"{lang}: {turns} turns, {len(record['qa'])} questions -> {args.out / f'{lang}.json'}")


if __name__ == "__main__":
    main()
