"""Throughput of the offline triple extractor on HotpotQA paragraphs.

    python benchmarks/bench_triples.py [--limit 2500] [--batch-size 32] [--no-cooccurrence]

Reads ../shared/eval/hotpotqa_dev250.jsonl (10 paragraphs per question, 2,500 in all),
runs RuleBasedExtractor.extract_many over the paragraphs (title + text, as the
pipeline would ingest them) and prints paragraphs/s, sentences/s, words/s, triples per
paragraph and the relation mix. The spaCy model load is timed separately.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_memory.core.text import split_sentences  # noqa: E402
from agent_memory.index.triples import EnglishExtractor, RuleBasedExtractor  # noqa: E402
from agent_memory.index.triples.english import load_nlp  # noqa: E402

DATA = ROOT.parent / "shared" / "eval" / "hotpotqa_dev250.jsonl"


def paragraphs(limit: int) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    with DATA.open(encoding="utf-8") as fh:
        for line in fh:
            q = json.loads(line)
            for c in q["contexts"]:
                out.append((f"{q['question_id']}/{c['id']}", f"{c['title']}. {c['paragraph_text']}"))
    return out[:limit]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=2500)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--no-cooccurrence", action="store_true")
    args = ap.parse_args()

    t0 = time.perf_counter()
    load_nlp()
    load_s = time.perf_counter() - t0

    paras = paragraphs(args.limit)
    texts = [t for _, t in paras]
    n_sent = sum(len(split_sentences(t)) for t in texts)
    n_words = sum(len(t.split()) for t in texts)
    extractor = RuleBasedExtractor(
        english=EnglishExtractor(cooccurrence=not args.no_cooccurrence, batch_size=args.batch_size)
    )

    t0 = time.perf_counter()
    results = extractor.extract_many(
        texts, tenant="bench", source_ids=[sid for sid, _ in paras], item_ids=[sid for sid, _ in paras]
    )
    secs = time.perf_counter() - t0

    n_triples = sum(len(r) for r in results)
    rels = collections.Counter(
        "related_to" if t.relation == "related_to" else ("is_a" if t.relation.endswith("is_a") else "verb/prep")
        for r in results for t in r
    )
    types = collections.Counter(ty for r in results for t in r for ty in (t.subject_type, t.object_type))
    empty = sum(1 for r in results if not r)
    report = {
        "paragraphs": len(texts),
        "sentences": n_sent,
        "words": n_words,
        "model_load_s": round(load_s, 2),
        "extract_s": round(secs, 2),
        "paragraphs_per_s": round(len(texts) / secs, 1),
        "sentences_per_s": round(n_sent / secs, 1),
        "words_per_s": round(n_words / secs, 0),
        "triples": n_triples,
        "triples_per_paragraph": round(n_triples / max(1, len(texts)), 2),
        "paragraphs_without_triples": empty,
        "relation_mix": dict(rels),
        "top_entity_types": dict(types.most_common(8)),
        "cooccurrence": not args.no_cooccurrence,
    }
    print(json.dumps(report, indent=2, ensure_ascii=False))
    sample = next((r for r in results if len(r) >= 3), [])
    for t in sample[:6]:
        print(f"  ({t.subject} [{t.subject_type}]) -{t.relation}-> ({t.object} [{t.object_type}])  conf={t.confidence}")


if __name__ == "__main__":
    main()
