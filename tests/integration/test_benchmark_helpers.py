"""The ingestion benchmarks' own measuring code runs against the pipeline as it is now.

Benchmarks are not tests and their figures are never asserted; but their helpers reach into the
pipeline (which calls to time, which texts the job embeds), and a refactor of the pipeline once
left ``bench_scale.py`` failing after a 3-minute ingestion. These run the helpers on a few items.
"""

from __future__ import annotations

import sys
from pathlib import Path

from agent_memory.core.records import Document, TurnRecord
from agent_memory.ingest.pipeline import IngestionPipeline
from agent_memory.services import build_services

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bench_scale  # noqa: E402

DOCS = [Document(source_id="p1", title="Ada Lovelace", text="Ada Lovelace was born in London in 1815."),
        Document(source_id="p2", title="鲁迅", text="鲁迅生于浙江绍兴，是中国现代文学的奠基人。")]
TURNS = [TurnRecord(session_id="s1", turn_id=str(i), speaker=speaker, text=text)
         for i, (speaker, text) in enumerate([("Mel", "Can you lend me the tent?"),
                                              ("Caroline", "Sure, I'll bring it tomorrow!")])]


def test_the_stage_clock_times_every_stage_of_an_ingestion(settings):
    clock = bench_scale.StageClock()
    with build_services(settings) as services:
        pipeline = IngestionPipeline(services)
        clock.attach(services, pipeline)
        pipeline.ingest_documents(DOCS)
        pipeline.ingest_turns(TURNS)
    for stage in ("embedding", "sparse", "vector writes", "graph writes", "catalog",
                  "triples (extraction, beside embedding)"):
        assert stage in clock.seconds, stage


def test_the_bare_encode_reads_each_item_and_each_turn_context_once(settings):
    units = [("doc", DOCS[0]), ("doc", DOCS[1]), ("turns", TURNS)]
    raw = bench_scale.raw_encode_rate(settings, units, limit=100)
    # Two chunks (short paragraphs: one chunk each, no summary), two turns, and the second turn's
    # context (the first turn's is its own text, embedded once).
    assert raw["texts"] == 5
    assert raw["texts_per_s"] > 0
