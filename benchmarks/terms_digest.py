"""A digest of the keyword terms, words and sentences of every string in data files, to show a tokenization
change leaves them alone.

    PYTHONPATH=OLD_TREE python benchmarks/terms_digest.py FILES...   # the code before the change
    PYTHONPATH=NEW_TREE python benchmarks/terms_digest.py FILES...   # and after: the same digest, or not

Every string anywhere in each JSON / JSONL file (questions, turns, titles, paragraphs) is read by
``keyword_terms`` (what the keyword index stores and a question searches), ``words`` (what the
evaluation's metric counts), ``split_sentences`` (sentence vectors, summaries, compaction) and
``sentence_units`` (what compression chooses among); one hash over all of them is printed with the number
of strings. Equal digests mean the change moves no keyword term or sentence of those sets, so their
prompts cannot move by it.

Which strings moved, when the digests differ:

    PYTHONPATH=OLD_TREE python benchmarks/terms_digest.py --lines old.tsv FILES...
    PYTHONPATH=NEW_TREE python benchmarks/terms_digest.py --against old.tsv FILES...

``--lines`` writes one line per string (file, its place among the file's strings, its hash); ``--against``
reads such a file and prints, per file, how many strings there are and how many read the same, then each
string that does not (its terms and sentences as this tree reads them).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
from collections.abc import Iterator

from agent_memory.core.text import keyword_terms, split_sentences, words
from agent_memory.retrieval.compress import sentence_units


def strings(value) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for inner in value.values():
            yield from strings(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from strings(inner)


def reading(text: str) -> str:
    """Everything this tree makes of one string, as one text: terms, words, sentences, compression units."""
    return "\x02".join("\x00".join(part) for part in (
        keyword_terms(text), words(text), split_sentences(text), sentence_units(text))) + "\x03"


def file_strings(path: str) -> list[str]:
    with open(path, encoding="utf-8") as handle:
        data = [json.loads(line) for line in handle if line.strip()] if path.endswith(".jsonl") else json.load(handle)
    return list(strings(data))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--lines", help="write one hash per string to this file")
    parser.add_argument("--against", help="compare with a --lines file written by another tree")
    parser.add_argument("--show", type=int, default=20, help="how many moved strings --against prints")
    args = parser.parse_args()
    before: dict[tuple[str, int], str] = {}
    if args.against:
        with open(args.against, encoding="utf-8") as handle:
            for line in handle:
                name, place, value = line.rstrip("\n").split("\t")
                before[(name, int(place))] = value
    out = open(args.lines, "w", encoding="utf-8") if args.lines else None
    digest, count, shown = hashlib.sha256(), 0, 0
    for path in args.files:
        name = os.path.basename(path)
        same = total = 0
        for place, text in enumerate(file_strings(path)):
            read = reading(text)
            digest.update(read.encode())
            count += 1
            total += 1
            value = hashlib.sha256(read.encode()).hexdigest()[:16]
            if out:
                out.write(f"{name}\t{place}\t{value}\n")
            if args.against:
                if before.get((name, place)) == value:
                    same += 1
                elif shown < args.show:
                    shown += 1
                    print(f"  moved: {name} #{place}: {text[:200]!r}\n    terms {keyword_terms(text)[:40]}\n"
                          f"    sentences {split_sentences(text)[:8]}")
        if args.against:
            print(f"{name}: {total} strings, {same} identical")
    if out:
        out.close()
    print(count, digest.hexdigest()[:16])


if __name__ == "__main__":
    main()
