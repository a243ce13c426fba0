"""A digest of the keyword terms and words of every string in data files, to show a tokenization change
leaves them alone.

    PYTHONPATH=OLD_TREE python benchmarks/terms_digest.py FILES...   # the code before the change
    PYTHONPATH=NEW_TREE python benchmarks/terms_digest.py FILES...   # and after: the same digest, or not

Every string anywhere in each JSON / JSONL file (questions, turns, titles, paragraphs) is read by
``keyword_terms`` (what the keyword index stores and a question searches) and ``words`` (what the
evaluation's metric counts); one hash over all of them is printed with the number of strings. Equal
digests mean the change moves no keyword term of those sets, so their prompts cannot move by it.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator

from agent_memory.core.text import keyword_terms, words


def strings(value) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for inner in value.values():
            yield from strings(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from strings(inner)


def main(paths: list[str]) -> None:
    digest, count = hashlib.sha256(), 0
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            data = [json.loads(line) for line in handle if line.strip()] if path.endswith(".jsonl") else json.load(handle)
        for text in strings(data):
            digest.update(("\x00".join(keyword_terms(text)) + "\x01" + "\x00".join(words(text)) + "\x02").encode())
            count += 1
    print(count, digest.hexdigest()[:16])


if __name__ == "__main__":
    main(sys.argv[1:])
