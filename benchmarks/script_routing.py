"""Which stored texts of the evaluation sets change embedding space between two routing rules
(``multilingual_scripts`` "cjk", "non_latin" or "non_english", agent_memory/core/embedding_spaces.py): every string
of every file (a turn, a paragraph, a question), read in place. A text that changes space changes how it ranks;
one that does not ranks as before.

    python benchmarks/script_routing.py ../shared/eval [--before cjk] [--after non_latin] [--share 0.1] [--show 5]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from agent_memory.core.embedding_spaces import SCRIPT_SHARES, reads_multilingual


def strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def records(path: Path):
    if path.suffix == ".jsonl":
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    yield json.loads(line)
    else:
        yield json.loads(path.read_text(encoding="utf-8"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--before", choices=sorted(SCRIPT_SHARES), default="cjk")
    parser.add_argument("--after", choices=sorted(SCRIPT_SHARES), default="non_latin")
    parser.add_argument("--share", type=float, default=0.1)
    parser.add_argument("--show", type=int, default=3)
    args = parser.parse_args()
    for path in sorted(p for p in args.folder.iterdir() if p.suffix in (".json", ".jsonl")):
        texts = {s for record in records(path) for s in strings(record) if len(s) >= 8}
        before = {t for t in texts if reads_multilingual(t, args.before, args.share)}
        after = {t for t in texts if reads_multilingual(t, args.after, args.share)}
        moved = sorted(before ^ after)
        print(f"{path.name}: {len(texts)} distinct texts, {len(moved)} change space "
              f"({len(before)} multilingual under {args.before}, {len(after)} under {args.after})")
        for text in moved[:args.show]:
            print("   ", repr(text[:160]))


if __name__ == "__main__":
    main()
