"""What a session append costs in Python, where archiving finishes before ``Memory.add_message`` returns.

    python benchmarks/bench_append_cost.py [--seed 7] [--scale 1.0] [--window 8000] [--profile out.prof]
        [--json out.json]

Appends the agent trajectories of ``wm_trajectories.py`` message by message, timing each append, and
prints p50 / p95 of all appends and of tool-result appends (a tool result's append queues the archive of
its call and results). Right after the message that plants a fact, it asks the fact's question
(``Memory.prompt`` with the session, 2,000 tokens), which waits for what the archive still has queued: it
prints how many of those prompts hold the fact and their p50 / p95 (the wait included), the time from an
append to its turn being searchable, and the wait for the archive after the last append. It also counts what the archive handed the text encoder, by what it is for: items' own texts
(a turn's pieces; those of tool turns apart), their context texts and their sentences, with their
characters, and the time triple extraction took on its own thread (beside the encoder's). ``--profile``
writes a cProfile of the appends (the calling thread's) and prints where the time went (cumulative, the
archive's steps). Timings vary with the machine's load: compare two trees side by side, alternating.
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from wm_trajectories import trajectories  # noqa: E402

from agent_memory.conversation import messages as msgs  # noqa: E402

# The archive's steps whose cumulative time --profile prints (function names, as cProfile records them).
STEPS = ("add_message", "archive", "ingest_turns", "turn_context_texts", "_store_items", "point_vectors",
         "embed_documents", "encode_documents", "stamp_terms", "extract_triples", "write_facts", "upsert",
         "_refresh_next_contexts", "split", "_maybe_compact")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else float("nan")


def count_encoder_texts(tally: Counter) -> None:
    """Wrap ``point_vectors`` (as the pipeline calls it) to tally the texts it embeds, by what they are for,
    and ``extract_triples`` to time it."""
    from agent_memory.index.sentences import sentence_texts
    from agent_memory.ingest import pipeline

    inner = pipeline.point_vectors

    def counted(embedder, items, texts, spaces, contexts, settings):
        for item, text in zip(items, texts):
            what = "tool turn" if item.metadata.get("tools") or "[tool_result:" in item.text else "turn"
            tally[f"{what} pieces"] += 1
            tally[f"{what} pieces chars"] += len(text)
            context = contexts.get(item.id) or text
            if item.kind == "turn" and context != text:
                tally[f"{what} contexts"] += 1
                tally[f"{what} contexts chars"] += len(context)
            found = sentence_texts(item, settings)
            tally[f"{what} sentences"] += len(found)
            tally[f"{what} sentences chars"] += sum(map(len, found))
        return inner(embedder, items, texts, spaces, contexts, settings)

    pipeline.point_vectors = counted
    extract = pipeline.extract_triples

    def timed_extraction(*args, **kwargs):  # runs on the pipeline's own thread, beside the embedder
        t0 = time.perf_counter()
        try:
            return extract(*args, **kwargs)
        finally:
            tally["triples thread ms"] += round((time.perf_counter() - t0) * 1000)

    pipeline.extract_triples = timed_extraction


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--scale", type=float, default=1.0, help="< 1 for shorter trajectories (a quick run)")
    parser.add_argument("--window", type=int, default=8000)
    parser.add_argument("--profile", type=Path, help="write a cProfile of the appends here and print its steps")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")
    from agent_memory import Memory
    from agent_memory.core.config import load_settings

    tally: Counter = Counter()
    count_encoder_texts(tally)
    times: dict[str, list[float]] = {"all": [], "tool result": [], "fact asked": []}
    found = 0
    profiler = cProfile.Profile() if args.profile else None
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(data_dir=Path(tmp) / "data", triple_extractor="rules", llm_model=None,
                                 qdrant_url=None, neo4j_uri=None, postgres_url=None)
        with Memory(settings=settings) as memory:
            memory.add_message("warm-up", {"role": "user", "content": "Loads the models before the clock runs."})
            for traj in trajectories(args.seed, args.scale):
                memory.session("run", tenant=traj.name).configure(window_tokens=args.window)
                planted = {fact.seq: fact for fact in traj.facts}
                for n, (message, retention) in enumerate(traj.events):
                    if profiler is not None:
                        profiler.enable()
                    t0 = time.perf_counter()
                    memory.add_message("run", message, retention=retention, tenant=traj.name)
                    spent = (time.perf_counter() - t0) * 1000
                    if profiler is not None:
                        profiler.disable()
                    times["all"].append(spent)
                    if msgs.result_ids(message):
                        times["tool result"].append(spent)
                    if n in planted:
                        t0 = time.perf_counter()
                        prompt = memory.prompt(planted[n].question, budget=2000, session_id="run", tenant=traj.name)
                        times["fact asked"].append((time.perf_counter() - t0) * 1000)
                        found += planted[n].value in prompt.prompt
            t0 = time.perf_counter()
            memory.working_memory.flush()
            drained_ms = (time.perf_counter() - t0) * 1000
            lags = [lag * 1000 for lag in memory.working_memory.archive_lags]
    figures = {kind: {"appends": len(v), "p50_ms": round(percentile(v, 0.5), 1), "p95_ms": round(percentile(v, 0.95), 1),
                      "total_s": round(sum(v) / 1000, 1)} for kind, v in times.items()}
    for kind, row in figures.items():
        print(f"{kind:<12} {row['appends']:>5} calls    p50 {row['p50_ms']:>7.1f} ms  p95 {row['p95_ms']:>7.1f} ms  "
              f"total {row['total_s']:>6.1f} s")
    print(f"facts found by a prompt right after the append that planted them: {found} of {len(times['fact asked'])}; "
          f"append to searchable p50 {percentile(lags, 0.5):.1f} ms p95 {percentile(lags, 0.95):.1f} ms; "
          f"the archive's wait after the last append {drained_ms:.0f} ms")
    print("texts embedded by the archive:", ", ".join(f"{k} {v:,}" for k, v in sorted(tally.items())))
    if profiler is not None:
        profiler.dump_stats(str(args.profile))
        stats = pstats.Stats(profiler)
        steps = [(cum, f"{name} ({Path(path).name}:{line})")
                 for (path, line, name), (_, _, _, cum, _) in stats.stats.items()  # type: ignore[attr-defined]
                 if name in STEPS and "agent_memory" in path]
        for cum, where in sorted(steps, reverse=True):
            print(f"  {cum:>8.1f} s cumulative  {where}")
    if args.json:
        args.json.write_text(json.dumps({"appends": figures, "facts_found": found, "encoder_texts": dict(tally),
                                         "searchable_ms": {"p50": round(percentile(lags, 0.5), 1),
                                                           "p95": round(percentile(lags, 0.95), 1)},
                                         "drained_ms": round(drained_ms)}, indent=2))


if __name__ == "__main__":
    main()
