"""Which stored texts of the evaluation sets change embedding space between the two routing rules
(``multilingual_scripts`` "cjk" and "non_latin", agent_memory/core/embedding_spaces.py): every string of every
file (a turn, a paragraph, a question), read in place. A text that changes space changes how it ranks; one that
does not ranks as before.

    python benchmarks/script_routing.py ../shared/eval [--share 0.1] [--show 5]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from agent_memory.core.embedding_spaces import SCRIPT_SHARES


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
    parser.add_argument("--share", type=float, default=0.1)
    parser.add_argument("--show", type=int, default=3)
    args = parser.parse_args()
    cjk, non_latin = SCRIPT_SHARES["cjk"], SCRIPT_SHARES["non_latin"]
    for path in sorted(p for p in args.folder.iterdir() if p.suffix in (".json", ".jsonl")):
        texts = {s for record in records(path) for s in strings(record) if len(s) >= 8}
        moved = [t for t in texts if (cjk(t) >= args.share) != (non_latin(t) >= args.share)]
        print(f"{path.name}: {len(texts)} distinct texts, {len(moved)} change space "
              f"({sum(cjk(t) >= args.share for t in texts)} multilingual before, "
              f"{sum(non_latin(t) >= args.share for t in texts)} after)")
        for text in moved[:args.show]:
            print("   ", repr(text[:160]))


if __name__ == "__main__":
    main()
