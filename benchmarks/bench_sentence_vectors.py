"""What sentence vectors cost at ingestion: LongMemEval haystacks ingested with them and without, alternated.

    python benchmarks/bench_sentence_vectors.py [--haystacks 2] [--rounds 2] [--triples rules|none]

Each round ingests the turns of the first --haystacks haystacks of ../shared/eval/longmemeval_s_dev30.json
(a tenant each, as the harness does) into a fresh data dir through the product's pipeline, once with the
served setting (``sentence_vector_speakers`` ["user"]) and once with none, in alternating order, and prints
the job's seconds, the texts it embedded, the sentence vectors stored and the ratio of the two times.
Ranking is measured by ``agent-memory eval`` (docs/journal/evaluation-diary.md), not here.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_memory.core.config import load_settings  # noqa: E402
from agent_memory.core.records import SearchFilter  # noqa: E402
from agent_memory.index.sentences import sentence_texts  # noqa: E402
from agent_memory.ingest.pipeline import IngestionPipeline  # noqa: E402
from agent_memory.ingest.report import IngestReport  # noqa: E402
from agent_memory.ingest.transcripts import longmemeval_turns  # noqa: E402
from agent_memory.services import build_services  # noqa: E402

EVAL = Path(__file__).resolve().parents[1].parent / "shared" / "eval"


def ingest(turns, speakers: list[str], triples: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-sentences-") as tmp:
        settings = load_settings(data_dir=Path(tmp), triple_extractor=triples, sentence_vector_speakers=speakers,
                                 qdrant_url=None, neo4j_uri=None, postgres_url=None, llm_model=None)
        with build_services(settings) as services:
            report = IngestReport()
            start = time.perf_counter()
            IngestionPipeline(services).ingest_turns(turns, report)
            seconds = time.perf_counter() - start
            items = [i for t in {t.tenant for t in turns} for i in services.vectors.scroll(SearchFilter(tenant=t))]
            sentences = sum(len(sentence_texts(i, settings)) for i in items)
        return {"seconds": seconds, "embedded": report.embeddings_computed, "items": len(items), "sentences": sentences}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--haystacks", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--triples", choices=["rules", "none"], default="rules")
    args = parser.parse_args()
    records = json.loads((EVAL / "longmemeval_s_dev30.json").read_text(encoding="utf-8"))[: args.haystacks]
    turns = [t for r in records for t in longmemeval_turns(r, f"lme-{r['question_id']}")]
    results: dict[str, list[dict]] = {"with": [], "without": []}
    for round_ in range(args.rounds):
        order = ["with", "without"] if round_ % 2 == 0 else ["without", "with"]
        for variant in order:
            found = ingest(turns, ["user"] if variant == "with" else [], args.triples)
            results[variant].append(found)
            print(f"round {round_ + 1} {variant:7s} {found['seconds']:7.1f} s  embedded {found['embedded']:6d}  "
                  f"items {found['items']}  sentence vectors {found['sentences'] if variant == 'with' else 0}",
                  flush=True)
    ratios = [w["seconds"] / o["seconds"] for w, o in zip(results["with"], results["without"])]
    print(f"{len(turns)} turns, triples {args.triples}: time with / without sentence vectors "
          + " / ".join(f"{r:.2f}" for r in ratios))


if __name__ == "__main__":
    main()
