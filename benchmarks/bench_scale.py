"""Retrieval through the API and ingestion at scale: one collection shared by 10 tenants.

    python benchmarks/bench_scale.py --sizes 10000 30000 100000 --out benchmarks/results/scale-cpu.json \
        --plot docs/scale-latency.png
    python benchmarks/bench_scale.py --device cuda ...      # benchmarks/gpu_scale.sh on the accelerator

Items are real texts from ../shared/eval: HotpotQA paragraphs and CMRC contexts as documents,
LoCoMo conversations and LongMemEval haystack sessions as transcripts, interleaved, so every
tenant holds the same mix. Each tenant is a copy ("t0" … "t9"), ingested round by round until
the collection holds the next size; at each size the API (default configuration, embedded
stores, served on loopback by uvicorn) answers ``--questions`` POST /v1/prompt, each from a
random tenant's key, so each question is filtered to its tenant. Printed and saved: p50/p95 of
the whole request and of each retrieval stage per size; for ingestion, items/s beside the raw
throughput of the bare model on the same texts, peak memory (ru_maxrss), and the seconds spent
in embedding, sparse encoding, triples, graph writes, vector writes and the catalog.

The embedding cache is part of the product: a tenant's copy embeds nothing the first tenant
did not (the report says how many embeddings were computed), so the first copy's rate is
printed apart from the whole run's.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_memory.core.config import load_settings  # noqa: E402
from agent_memory.core.records import Document, SearchFilter  # noqa: E402
from agent_memory.ingest.paragraph_ids import paragraph_source_id  # noqa: E402
from agent_memory.ingest.pipeline import IngestionPipeline  # noqa: E402
from agent_memory.ingest.report import IngestReport  # noqa: E402
from agent_memory.ingest.transcripts import locomo_turns, longmemeval_turns  # noqa: E402
from agent_memory.services import build_services  # noqa: E402

EVAL = Path(__file__).resolve().parents[1].parent / "shared" / "eval"


def corpus() -> tuple[list[tuple[str, object]], list[str]]:
    """Units ("doc", Document) or ("turns", [TurnRecord]) interleaved by dataset, and questions."""
    hotpot, questions, seen = [], [], set()
    for line in (EVAL / "hotpotqa_dev250.jsonl").read_text().splitlines():
        record = json.loads(line)
        questions.append(record["question_text"])
        for ctx in record["contexts"]:
            sid = paragraph_source_id(ctx["title"], ctx["paragraph_text"])
            if sid not in seen:
                seen.add(sid)
                hotpot.append(("doc", Document(source_id=sid, title=ctx["title"], text=ctx["paragraph_text"])))
    cmrc = []
    for article in json.loads((EVAL / "cmrc2018_trial.json").read_text())["data"]:
        for i, para in enumerate(article["paragraphs"]):
            cmrc.append(("doc", Document(source_id=f"cmrc/{article['id']}/{i}", title=article.get("title", ""),
                                         text=para["context"])))
            questions += [qa["question"] for qa in para["qas"][:1]]
    sessions = []
    for record in json.loads((EVAL / "locomo_dev.json").read_text()):
        by_session = defaultdict(list)
        for turn in locomo_turns(record, "default"):
            by_session[turn.session_id].append(turn)
        sessions += [("turns", turns) for turns in by_session.values()]
        questions += [qa["question"] for qa in record["qa"][:40]]
    lme, seen_sessions = [], set()
    for record in json.loads((EVAL / "longmemeval_s_dev30.json").read_text()):
        questions.append(record["question"])
        by_session = defaultdict(list)
        for turn in longmemeval_turns(record, "default"):
            by_session[turn.session_id].append(turn)
        for session_id, turns in by_session.items():
            if session_id not in seen_sessions:
                seen_sessions.add(session_id)
                lme.append(("turns", turns))
    units, lists = [], [hotpot, sessions, lme, cmrc]
    for i in range(max(map(len, lists))):
        units += [lst[i] for lst in lists if i < len(lst)]
    return units, questions


def for_tenant(unit, tenant: str):
    kind, value = unit
    if kind == "doc":
        return kind, Document(source_id=value.source_id, title=value.title, text=value.text, tenant=tenant)
    return kind, [type(t)(**{**t.__dict__, "tenant": tenant}) for t in value]


class StageClock:
    """Seconds spent in each service call the ingestion makes (wrapped on the instances)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    def wrap(self, obj, method: str, stage: str) -> None:
        inner = getattr(obj, method)

        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self.seconds[stage] += time.perf_counter() - started

        setattr(obj, method, timed)

    def attach(self, services, pipeline) -> None:
        self.wrap(services.embedder, "embed_documents", "embedding")
        self.wrap(services.sparse_encoder, "encode_documents", "sparse")
        self.wrap(services.vectors, "upsert", "vector writes")
        self.wrap(services.graph, "merge_triples", "graph writes")
        # Extraction runs in a thread beside the embedding (agent_memory/ingest/pipeline.py, graph_writes.py), so
        # its seconds overlap the embedding's; graph writes are timed on their own.
        self.wrap(pipeline.extractor, "extract_many", "triples (extraction, beside embedding)")
        for method in ("get", "get_many", "put_many", "owners", "claim", "delete"):
            if hasattr(services.catalog, method):
                self.wrap(services.catalog, method, "catalog")


def ingest_round(settings, units, tenants, positions, per_tenant_target, clock, reports) -> int:
    """Ingest each tenant's copy up to ``per_tenant_target`` items; returns the collection's size."""
    with build_services(settings) as services:
        pipeline = IngestionPipeline(services)
        clock.attach(services, pipeline)
        for tenant in tenants:
            report = reports.setdefault(tenant, IngestReport())
            while positions[tenant] < len(units):
                if services.vectors.count(SearchFilter(tenant=tenant)) >= per_tenant_target:
                    break
                batch = [for_tenant(u, tenant) for u in units[positions[tenant]: positions[tenant] + 10]]
                positions[tenant] += len(batch)
                started = time.perf_counter()
                docs = [v for k, v in batch if k == "doc"]
                if docs:
                    pipeline.ingest_documents(docs, report)
                for kind, turns in batch:
                    if kind == "turns":
                        pipeline.ingest_turns(turns, report)
                report.seconds += time.perf_counter() - started
        return services.vectors.count()


def latency(settings, tenants, questions, n, rng) -> dict:
    """``n`` questions, each from a random tenant's key, against ``agent-memory serve`` in a process
    of its own on the same data dir: POST /v1/prompt (the debug dump, with the pipeline's stage
    timings) and POST /v1/ask (retrieval-only: passages and prompt), both timed at the client.
    Each endpoint gets its own draw of questions, so neither reads caches the other just warmed."""
    import httpx

    from agent_memory.api.testing import serve_in_subprocess, wait_ready

    keys = {f"key-{t}": t for t in tenants}
    env = {"AGENT_MEMORY_API_KEYS": json.dumps(keys), "AGENT_MEMORY_LLM_MODEL": "", "AGENT_MEMORY_QDRANT_URL": None,
           "AGENT_MEMORY_NEO4J_URI": None, "AGENT_MEMORY_POSTGRES_URL": None, "AGENT_MEMORY_NO_PROGRESS": "1"}
    totals, asks, stages = [], [], defaultdict(list)
    with serve_in_subprocess(settings.data_dir, env) as url, httpx.Client(base_url=url, timeout=120) as client:
        wait_ready(client)
        for _ in range(n):
            question, headers = rng.choice(questions), {"X-API-Key": rng.choice(list(keys))}
            started = time.perf_counter()
            resp = client.post("/v1/prompt", json={"question": question}, headers=headers)
            totals.append((time.perf_counter() - started) * 1000)
            resp.raise_for_status()
            for stage, ms in resp.json()["timings_ms"].items():
                stages[stage].append(ms)
            question, headers = rng.choice(questions), {"X-API-Key": rng.choice(list(keys))}
            started = time.perf_counter()
            client.post("/v1/ask", json={"question": question}, headers=headers).raise_for_status()
            asks.append((time.perf_counter() - started) * 1000)
    return {"request": pct(totals), "ask_request": pct(asks), "stages": {k: pct(v) for k, v in stages.items()},
            "n": len(totals)}


def pct(values: list[float]) -> dict:
    xs = sorted(values)
    pick = lambda p: round(xs[min(len(xs) - 1, int(len(xs) * p))], 1)  # noqa: E731
    return {"p50": pick(0.5), "p95": pick(0.95), "max": round(xs[-1], 1)}


def raw_encode_rate(settings, units, limit: int) -> dict:
    """The bare models (no cache) on the first tenant's texts, as the job embeds them: each item's
    text and, for a turn, its context text (agent_memory/index/context.py), each by the model of its space."""
    from bench_ingest import bare_encode, embedded_contexts  # the same measure in both benchmarks

    from agent_memory.index.items import embedding_text

    texts: list[str] = []
    items = 0
    with build_services(settings.model_copy(update={"data_dir": Path(tempfile.mkdtemp())})) as services:
        builder = IngestionPipeline(services).builder
        for kind, value in units:
            if kind == "doc":
                built = builder.document(value).items
                items += len(built)
                texts += [embedding_text(i) for i in built]
            else:
                turns = [builder.turn(turn, seq).items for seq, turn in enumerate(value)]
                items += sum(map(len, turns))
                texts += [embedding_text(i) for pieces in turns for i in pieces]
                texts += embedded_contexts(turns, settings.turn_context_previous_max_words)
            if len(texts) >= limit:
                break
        texts = texts[:limit]
        spaces = services.embedder.spaces_for(texts)
        bare = {space: services.embedder.embedders[space].inner for space in set(spaces)}
        for space, model in bare.items():
            model.embed_documents([t for t, s in zip(texts, spaces) if s == space][:64])  # load and warm
        seconds = bare_encode(services, texts)
    return {"texts": len(texts), "texts_per_s": round(len(texts) / seconds, 1),
            "texts_per_item": round(len(texts) / max(items, 1), 3),
            "by_space": {space: spaces.count(space) for space in bare}}


def table(results: list[dict], path: Path) -> None:
    """Latency against size as CSV: one row per size, p50/p95 of the request and of every stage."""
    stages = sorted({s for r in results for s in r["latency"]["stages"]})
    rows = ["items,request_p50,request_p95," + ",".join(f"{s}_p50,{s}_p95" for s in stages)]
    for r in results:
        lat = r["latency"]
        cells = [r["items"], lat["request"]["p50"], lat["request"]["p95"]]
        for stage in stages:
            cells += [lat["stages"].get(stage, {}).get("p50", ""), lat["stages"].get(stage, {}).get("p95", "")]
        rows.append(",".join(map(str, cells)))
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def plot(results: list[dict], path: Path) -> None:
    """A PNG of latency against size (matplotlib); without matplotlib, the CSV table only."""
    try:
        import matplotlib
    except ImportError:
        print(f"matplotlib is not installed: no {path}, the CSV table beside it has the figures", file=sys.stderr)
        return

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [r["items"] for r in results]
    fig, ax = plt.subplots(figsize=(7, 4))
    for label, key in (("request p50", "p50"), ("request p95", "p95")):
        ax.plot(sizes, [r["latency"]["request"][key] for r in results], marker="o", label=label)
    stage_names = sorted({s for r in results for s in r["latency"]["stages"]},
                         key=lambda s: -results[-1]["latency"]["stages"].get(s, {}).get("p95", 0))[:4]
    for stage in stage_names:
        ax.plot(sizes, [r["latency"]["stages"].get(stage, {}).get("p95", 0) for r in results], linestyle="--",
                marker=".", label=f"{stage} p95")
    ax.set_xscale("log")
    ax.set_xlabel("items in the collection (10 tenants)")
    ax.set_ylabel("ms")
    ax.set_title("POST /v1/prompt latency against collection size")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 30_000, 100_000],
                        help="collection sizes (items, all tenants) measured in one run, ingested incrementally")
    parser.add_argument("--tenants", type=int, default=10, help="tenant copies sharing the collection")
    parser.add_argument("--questions", type=int, default=60, help="questions per size")
    parser.add_argument("--data-dir", help="default: a fresh temp dir")
    parser.add_argument("--device", default=None, help="embedding device (cpu, cuda); default: the model's choice")
    parser.add_argument("--encode-sample", type=int, default=2000,
                        help="texts of the first tenant embedded by the bare models for the raw rate")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--plot", type=Path, help="latency against size: a PNG (matplotlib) and a CSV beside it")
    args = parser.parse_args()
    if args.device:
        # The product runs MiniLM through ONNX Runtime on the CPU; on another device this benchmark
        # runs it through sentence-transformers (the extra, with a torch for that device).
        import sentence_transformers

        from agent_memory.core import embedding
        from agent_memory.core.onnx_bert import UnsupportedModel

        def through_torch(*_a, **_kw):
            raise UnsupportedModel(f"--device {args.device}: sentence-transformers runs the model")

        embedding.OnnxBertEmbedder = through_torch

        load = sentence_transformers.SentenceTransformer.__init__

        def on_device(self, *a, device=None, **kw):
            load(self, *a, device=args.device, **kw)

        sentence_transformers.SentenceTransformer.__init__ = on_device
    units, questions = corpus()
    data_dir = Path(args.data_dir or tempfile.mkdtemp(prefix="agent-memory-scale-"))
    settings = load_settings(data_dir=data_dir, qdrant_url=None, neo4j_uri=None, postgres_url=None, llm_model=None)
    tenants = [f"t{i}" for i in range(args.tenants)]
    positions = {t: 0 for t in tenants}
    clock, reports, results, rng = StageClock(), {}, [], random.Random(7)
    ingest_s = 0.0
    for size in sorted(args.sizes):
        started = time.perf_counter()
        items = ingest_round(settings, units, tenants, positions, size // args.tenants, clock, reports)
        ingest_s += time.perf_counter() - started
        if items < size:  # the corpus ran out (about 30k items per tenant copy)
            print(f"warning: {items} items reached for a target of {size}", file=sys.stderr)
        result = {"target": size, "items": items, "ingest_seconds_so_far": round(ingest_s, 1),
                  "peak_rss_mb_so_far": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                  "latency": latency(settings, tenants, questions, args.questions, rng)}
        results.append(result)
        print(json.dumps(result), flush=True)
        if args.out:  # each size as soon as it is measured: a long run interrupted keeps what it has
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps({"sizes": results, "ingest_seconds_so_far": round(ingest_s, 1)}, indent=1))
    first = reports[tenants[0]]
    written = sum(r.items_written for r in reports.values())
    raw = raw_encode_rate(settings, units[: positions[tenants[0]]], args.encode_sample)
    ingestion = {
        "items_written": written, "seconds": round(ingest_s, 1), "items_per_s": round(written / ingest_s, 1),
        "first_tenant": {"items": first.items_written, "seconds": round(first.seconds, 1),
                         "items_per_s": round(first.items_written / max(first.seconds, 1e-9), 1),
                         "embeddings_computed": first.embeddings_computed},
        "embeddings_computed": sum(r.embeddings_computed for r in reports.values()),
        # The bare models' rate on the same texts, and the item rate it allows (texts per item: turns
        # embed a context text too): the ceiling the first tenant's items/s is compared with.
        "raw_encode": {**raw, "items_per_s_ceiling": round(raw["texts_per_s"] / max(raw["texts_per_item"], 1e-9), 1)},
        "stage_seconds": {k: round(v, 1) for k, v in sorted(clock.seconds.items(), key=lambda kv: -kv[1])},
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "triples": sum(r.triples for r in reports.values()),
    }
    print(json.dumps({"ingestion": ingestion}, indent=1))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"sizes": results, "ingestion": ingestion, "data_dir": str(data_dir)}, indent=1))
    if args.plot:
        args.plot.parent.mkdir(parents=True, exist_ok=True)
        table(results, args.plot.with_suffix(".csv"))
        plot(results, args.plot)


if __name__ == "__main__":
    main()
