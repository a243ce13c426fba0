"""The triples ingestion reads from the dev sets, written out to compare two versions of the extraction rules.

    python benchmarks/triples_identity.py --out main.json [--locomo 5] [--hotpot 50] [--cmrc 0] [--eval-dir DIR]
    python benchmarks/triples_identity.py --compare main.json branch.json

Builds the items ingestion stores (``ItemBuilder``: LoCoMo's transcript turns, HotpotQA's and CMRC's paragraphs as
documents, no summaries) and runs ``graph_writes.extract_triples`` over them with the rule extractor and the
default settings' speaker relations, as the ingestion job does. ``--out`` writes every triple (its sides, types,
relation, evidence, confidence, source, date) per data set with a digest; ``--compare`` prints, per data set, the
counts, whether the two are identical, and the triples only one of them holds. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
EVAL = ROOT.parent / "shared" / "eval"
FIXED_DATE = 1_700_000_000.0
FIELDS = ("subject", "relation", "object", "subject_type", "object_type", "evidence", "confidence", "source_id",
          "valid_from")


def datasets(eval_dir: Path, locomo: int, hotpot: int, cmrc: int) -> dict[str, tuple[list, list]]:
    """Data set name -> (documents, turns), as benchmarks/bench_ingest.py loads them."""
    from agent_memory.core.records import Document
    from agent_memory.evaluation.datasets import load_dataset
    from agent_memory.ingest.transcripts import locomo_turns

    out: dict[str, tuple[list, list]] = {}
    if locomo:
        records = json.loads((eval_dir / "locomo_dev.json").read_text())[:locomo]
        out["locomo"] = ([], [t for rec in records for t in locomo_turns(rec, "locomo")])
    if hotpot:
        docs = []
        for line in (eval_dir / "hotpotqa_dev250.jsonl").read_text().splitlines()[:hotpot]:
            record = json.loads(line)
            docs += [Document(source_id=f"{record['question_id']}/{c['id']}", title=c["title"],
                              text=c["paragraph_text"], tenant="hotpot") for c in record["contexts"]]
        out["hotpot"] = (docs, [])
    if cmrc:
        data = load_dataset(eval_dir / "cmrc2018_trial.json")
        out["cmrc"] = (data.material(data.tenants_for(data.questions)[0]).documents[:cmrc], [])
    return out


def triples_of(documents: list, turns: list) -> list[dict]:
    from agent_memory.core.config import load_settings
    from agent_memory.core.tokens import make_counter
    from agent_memory.index.triples import RuleBasedExtractor
    from agent_memory.ingest.graph_writes import extract_triples, speaker_relations
    from agent_memory.ingest.items import ItemBuilder, SummaryTokens
    from agent_memory.ingest.splitting import Splitter
    from agent_memory.ingest.summarize import make_summarizer

    settings = load_settings(llm_model=None, qdrant_url=None, neo4j_uri=None, postgres_url=None)
    counter = make_counter(settings.tokenizer)
    builder = ItemBuilder(Splitter(counter, settings.chunk_tokens, settings.chunk_overlap_tokens),
                          make_summarizer(counter, None), SummaryTokens(0, 0, 0), summaries=False)
    for doc in documents:  # a fixed date: a triple of a document is dated by it (its valid_from)
        doc.created_at = doc.created_at or FIXED_DATE
    units = [builder.document(doc) for doc in documents]
    units += [builder.turn(turn, seq) for seq, turn in enumerate(turns)]
    triples, _, _ = extract_triples(RuleBasedExtractor(), units, speaker_relations=speaker_relations(settings))
    return [{name: getattr(t, name) for name in FIELDS} for t in triples]


def write(args) -> None:
    out = {}
    for name, (documents, turns) in datasets(args.eval_dir, args.locomo, args.hotpot, args.cmrc).items():
        rows = triples_of(documents, turns)
        digest = hashlib.sha256(json.dumps(rows, ensure_ascii=False, sort_keys=True).encode()).hexdigest()
        out[name] = {"texts": len(documents) + len(turns), "triples": rows, "sha256": digest}
        print(f"{name}: {len(documents) + len(turns)} texts, {len(rows)} triples, sha256 {digest[:16]}")
    args.out.write_text(json.dumps(out, ensure_ascii=False, indent=0))


def compare(before_path: Path, after_path: Path, sample: int) -> None:
    before, after = (json.loads(p.read_text()) for p in (before_path, after_path))
    for name in before.keys() & after.keys():
        a, b = before[name], after[name]
        key = lambda row: json.dumps(row, ensure_ascii=False, sort_keys=True)  # noqa: E731
        kept_before, kept_after = ({key(r) for r in side["triples"]} for side in (a, b))
        gone = [r for r in a["triples"] if key(r) not in kept_after]
        new = [r for r in b["triples"] if key(r) not in kept_before]
        print(f"{name}: {a['texts']} texts; {len(a['triples'])} -> {len(b['triples'])} triples; "
              f"{'identical' if a['sha256'] == b['sha256'] else 'different'}; {len(gone)} gone, {len(new)} new")
        for label, rows in (("gone", gone), ("new", new)):
            for row in rows[:sample]:
                print(f"  {label}: {row['subject']} | {row['relation']} | {row['object']}    [{row['evidence'][:90]}]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, help="write the triples here")
    parser.add_argument("--compare", type=Path, nargs=2, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--eval-dir", type=Path, default=EVAL, help="the dev sets (default: ../shared/eval)")
    parser.add_argument("--locomo", type=int, default=5, help="LoCoMo conversations (0: none)")
    parser.add_argument("--hotpot", type=int, default=50, help="HotpotQA records, 10 paragraphs each (0: none)")
    parser.add_argument("--cmrc", type=int, default=0, help="CMRC paragraphs (0: none)")
    parser.add_argument("--sample", type=int, default=10, help="changed triples shown per data set and side")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.compare:
        compare(*args.compare, args.sample)
    elif args.out:
        write(args)
    else:
        parser.error("--out or --compare")


if __name__ == "__main__":
    main()
