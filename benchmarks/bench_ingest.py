"""Ingestion job throughput beside the raw encode throughput of the same model on the same texts.

    python benchmarks/bench_ingest.py [--hotpot-limit N] [--locomo-limit N] [--cmrc-limit N]
        [--triples rules|none]

Ingests HotpotQA paragraphs and CMRC paragraphs (as documents: English and Chinese, one tenant
each) and LoCoMo turns (as a transcript) from ../shared/eval into a fresh data dir through the
product's pipeline, then encodes the very texts the job embedded with the bare models (no cache),
in the same process, and prints both rates and their ratio. A second ingestion of the same input
must write and embed nothing.

The process is warm before the clock starts, as a running worker is: it has ingested one short
English and one short Chinese document into another tenant, so the models, spaCy, jieba's
dictionary and the entity-name table are loaded (once per process: 3-4 s on this machine, which a
job of a few hundred files would otherwise be charged).
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
from agent_memory.core.records import Document  # noqa: E402
from agent_memory.evaluation.datasets import load_dataset  # noqa: E402
from agent_memory.index.context import session_context_texts  # noqa: E402
from agent_memory.index.items import embedding_text  # noqa: E402
from agent_memory.ingest.paragraph_ids import paragraph_source_id  # noqa: E402
from agent_memory.ingest.pipeline import IngestionPipeline  # noqa: E402
from agent_memory.ingest.report import IngestReport  # noqa: E402
from agent_memory.ingest.transcripts import locomo_turns  # noqa: E402
from agent_memory.services import build_services  # noqa: E402

EVAL = Path(__file__).resolve().parents[1].parent / "shared" / "eval"


def load_inputs(hotpot_limit: int | None, locomo_limit: int | None, cmrc_limit: int = 0):
    docs, seen = [], set()
    for line in (EVAL / "hotpotqa_dev250.jsonl").read_text().splitlines():
        for ctx in json.loads(line)["contexts"]:
            sid = paragraph_source_id(ctx["title"], ctx["paragraph_text"])
            if sid not in seen:
                seen.add(sid)
                docs.append(Document(source_id=sid, title=ctx["title"], text=ctx["paragraph_text"], tenant="hotpot"))
    turns = [t for rec in json.loads((EVAL / "locomo_dev.json").read_text())[:locomo_limit]
             for t in locomo_turns(rec, "locomo")]
    # CMRC's paragraphs as the harness ingests them (its loader: source IDs, titles, one tenant).
    cmrc = load_dataset(EVAL / "cmrc2018_trial.json")
    chinese = cmrc.material(cmrc.tenants_for(cmrc.questions)[0]).documents[:cmrc_limit] if cmrc_limit else []
    return docs[:hotpot_limit] + chinese, turns


def embedded_contexts(turn_items, previous_max_words: int) -> list[str]:
    """What the job embeds beyond a session's own texts: each turn read after the one before it
    (its stored context vector, agent_memory/index/context.py); a context equal to a turn's own text (a
    session's first turn) is not embedded twice."""
    own = {embedding_text(pieces[0]) for pieces in turn_items if pieces}
    return [t for t in session_context_texts(turn_items, previous_max_words) if t not in own]


def bare_encode(services, texts: list[str]) -> float:
    """Seconds to encode ``texts`` with the bare models (no cache), each text in its space."""
    spaces = services.embedder.spaces_for(texts)
    started = time.perf_counter()
    for space in set(spaces):
        bare = services.embedder.embedders[space].inner
        bare.embed_documents([t for t, s in zip(texts, spaces) if s == space])
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hotpot-limit", type=int, default=None, help="first N paragraphs (default all)")
    parser.add_argument("--locomo-limit", type=int, default=None, help="first N conversations (default all)")
    parser.add_argument("--cmrc-limit", type=int, default=0, help="first N Chinese paragraphs (default none)")
    parser.add_argument("--triples", default="rules", choices=["rules", "none"])
    args = parser.parse_args()
    docs, turns = load_inputs(args.hotpot_limit, args.locomo_limit, args.cmrc_limit)
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(data_dir=Path(tmp), triple_extractor=args.triples)
        with build_services(settings) as services:
            pipeline = IngestionPipeline(services)
            # Loads are not ingestion: a worker that has run once (see the docstring).
            pipeline.ingest_documents([Document(source_id="warm-en", text="Ada Lovelace lived in London.",
                                                tenant="warm-up"),
                                       Document(source_id="warm-zh", text="鲁迅生于绍兴。", tenant="warm-up")])
            first = IngestReport()
            started = time.perf_counter()
            pipeline.ingest_documents(docs, first)
            pipeline.ingest_turns(turns, first)
            first.seconds = time.perf_counter() - started

            second = IngestReport()
            started = time.perf_counter()
            pipeline.ingest_documents(docs, second)
            pipeline.ingest_turns(turns, second)
            second.seconds = time.perf_counter() - started

            # The same texts the job embedded, through the bare model: the ceiling for the job.
            texts = []
            for doc in docs:
                texts += [embedding_text(i) for i in pipeline.builder.document(doc).items]
            turn_items = [pipeline.builder.turn(turn, seq).items for seq, turn in enumerate(turns)]
            for items in turn_items:
                texts += [embedding_text(i) for i in items]
            contexts = embedded_contexts(turn_items, settings.turn_context_previous_max_words)
            encode_s = bare_encode(services, texts)
            context_s = bare_encode(services, contexts)

    job_rate = first.items_written / first.seconds
    encode_rate = len(texts) / encode_s
    print(f"inputs: {len(docs)} paragraphs ({args.cmrc_limit} Chinese), {len(turns)} turns; triples: {args.triples}")
    print(f"job:    {first.items_written} items ({first.chunks} chunks, {first.summaries} summaries, "
          f"{first.turns} turns), {first.triples} triples in {first.seconds:.1f} s = {job_rate:.1f} items/s")
    print(f"encode: {len(texts)} texts (chunks, summaries, turns) in {encode_s:.1f} s = "
          f"{encode_rate:.1f} texts/s with {services.embedder.name}")
    print(f"ratio job/encode: {job_rate / encode_rate:.2f}")
    print(f"the job also embeds {len(contexts)} turn contexts ({context_s:.1f} s bare): job time against the "
          f"bare encode of everything it embeds = {(encode_s + context_s) / first.seconds:.2f}")
    print(f"second run: {second.items_written} items written, {second.embeddings_computed} embeddings, "
          f"{second.sources_unchanged} sources unchanged, {second.seconds:.1f} s")


if __name__ == "__main__":
    main()
