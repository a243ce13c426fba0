"""Working memory on agent trajectories: what an agent can still see and reach, against two baselines.

    python benchmarks/bench_working_memory.py [--windows 8000 32000] [--prompt-budget 2000] [--seed 7]
        [--scale 1.0] [--json out.json]

Trajectories (``wm_trajectories.py``): coding-agent tool loops (6 user turns, 216 tool calls) and
support chats, English and Chinese, with planted facts (error codes, paths, numbers, user
constraints, decisions). For each window, three methods see the same appends:

- ``memory``: this project's session (``Memory.add_message``; the session's window set to the
  window): levels, markers, summaries; promotion to long-term memory as the branch has it.
- ``truncate``: keep-newest truncation (whole messages, newest first, instructions kept).
- ``micro+summary``: micro-compaction (tool results older than the newest 3 cleared to a bare
  ``[old tool result cleared, N chars]``, as common designs do) plus one rolling
  structural summary when the view passes 75% of the window (the older part summarized, the
  newest quarter kept), then keep-newest truncation if still over.

Measured at the end: ``visible`` (share of facts whose value is in the final view), ``prompt``
(in ``Memory.prompt(question, session_id=...)``: memory only), ``reachable`` (visible or in the
prompt; for the baselines, which have no recall, the view), ``silent`` (messages gone from the
view with no summary, marker or note covering them), ``orphans`` (tool calls without results
or results without calls, summed over views taken at each user message and at the end),
``compact_ms`` (time spent compacting, all appends). Nothing is asserted: it prints the table.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from wm_trajectories import Trajectory, trajectories  # noqa: E402

from agent_memory.conversation import StructuralSummarizer  # noqa: E402
from agent_memory.conversation import messages as msgs  # noqa: E402
from agent_memory.core.tokens import TiktokenCounter  # noqa: E402

COUNTER = TiktokenCounter("cl100k_base")
OVERHEAD = 4  # tokens a provider adds per message (CompactionConfig.message_overhead)
SPAN = re.compile(r"m(\d+)(?:-m(\d+))?")


def tokens(message: dict[str, Any]) -> int:
    return _count(msgs.serialize(message)) + OVERHEAD


@functools.lru_cache(maxsize=65536)
def _count(text: str) -> int:  # cached: the baselines recount their whole view on every append
    return COUNTER.count(text)


def view_text(view: list[dict[str, Any]]) -> str:
    return "\n".join(msgs.serialize(m) for m in view)


def orphans(view: list[dict[str, Any]]) -> int:
    calls = {c for m in view for c in msgs.call_ids(m)}
    results = {r for m in view for r in msgs.result_ids(m)}
    return len(calls ^ results)


def facts_in(text: str, traj: Trajectory) -> list[bool]:
    return [fact.value in text for fact in traj.facts]


# -- baselines --------------------------------------------------------------------------------------
def keep_newest(history: list[dict[str, Any]], window: int) -> tuple[list[dict[str, Any]], set[int]]:
    """Instructions, then the newest messages that fit; returns the view and the indices shown."""
    systems = [i for i, m in enumerate(history) if msgs.is_instruction(m)]
    room = window - sum(tokens(history[i]) for i in systems)
    kept: list[int] = []
    for i in range(len(history) - 1, -1, -1):
        if i in systems:
            continue
        cost = tokens(history[i])
        if cost > room:
            break
        kept.append(i)
        room -= cost
    shown = sorted(systems + kept)
    return [history[i] for i in shown], set(shown)


def plain_micro(messages: list[dict[str, Any]], keep: int = 3) -> list[dict[str, Any]]:
    """The common micro-compaction: tool results older than the ``keep`` newest become a bare marker."""
    order = [rid for m in messages for rid in msgs.result_ids(m)]
    old = set(order[: max(0, len(order) - keep)])
    out = []
    for message in messages:
        if message.get("role") == "tool" and str(message.get("tool_call_id")) in old:
            message = {**message, "content": f"[old tool result cleared, {len(msgs.text_of(message))} chars]"}
        out.append(message)
    return out


class MicroSummary:
    """Micro-compaction plus one rolling summary at a threshold (a common two-stage design)."""

    def __init__(self, window: int, threshold: float = 0.75, keep_share: float = 0.25) -> None:
        self.window, self.threshold, self.keep_share = window, threshold, keep_share
        self.history: list[dict[str, Any]] = []
        self.start = 0  # messages before this index are in the summary
        self.summary = ""
        self.seconds = 0.0
        self.summarizer = StructuralSummarizer()

    def append(self, message: dict[str, Any]) -> None:
        self.history.append(message)
        t0 = time.perf_counter()
        if sum(tokens(m) for m in self._body()) > self.threshold * self.window:
            self._summarize()
        self.seconds += time.perf_counter() - t0

    def _live(self) -> list[dict[str, Any]]:
        return [m for m in self.history[self.start:] if not msgs.is_instruction(m)]

    def _body(self) -> list[dict[str, Any]]:
        systems = [m for m in self.history if msgs.is_instruction(m)]
        head = [{"role": "system", "content": "[Summary]\n" + self.summary}] if self.summary else []
        return systems + head + plain_micro(self._live(), 3)

    def _summarize(self) -> None:
        keep, cut = int(self.window * self.keep_share), len(self.history)
        while cut > self.start and tokens(self.history[cut - 1]) <= keep:
            keep -= tokens(self.history[cut - 1])
            cut -= 1
        while cut < len(self.history) and msgs.result_ids(self.history[cut]):
            cut += 1  # never start the kept part with a result whose call was summarized
        if cut <= self.start:
            return
        span = ([{"role": "system", "content": self.summary}] if self.summary else []) + [
            m for m in self.history[self.start:cut] if not msgs.is_instruction(m)]
        self.summary = self.summarizer.summarize(span, max_tokens=int(self.window * 0.15))
        self.start = cut

    def view(self) -> tuple[list[dict[str, Any]], int]:
        """The view and how many messages it lost silently (truncated past the window, no summary)."""
        body = self._body()
        view, shown = keep_newest(body, self.window)
        return view, len(body) - len(shown)


# -- this project ------------------------------------------------------------------------------------
def covered_by_notes(session, view: list[dict[str, Any]]) -> set[int]:
    seqs: set[int] = set()
    for row in session.summaries() + session.markers():
        seqs |= set(range(row["first_seq"], row["last_seq"] + 1))
    for message in view:  # "[Not in this view (budget), m3-m40: ...]" and "[Earlier, m1-m90, ...]"
        content = message.get("content")
        if isinstance(content, str) and content.startswith(("[Not in this view", "[Context Compressed]")):
            for line in content.splitlines():
                if line.startswith(("[Not in this view", "[Earlier")):
                    match = SPAN.search(line)
                    if match:
                        seqs |= set(range(int(match.group(1)), int(match.group(2) or match.group(1)) + 1))
    return seqs


def summaries_section(prompt: str) -> str:
    return prompt.partition("## Summaries\n")[2].partition("\n\n## ")[0]


def run_memory(memory, traj: Trajectory, window: int, budget: int, tenant: str,
               overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    session = memory.session("run", tenant=tenant)
    session.configure(window_tokens=window)
    spent = [0.0]
    inner = session._maybe_compact

    def timed(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - t0

    session._maybe_compact = timed  # the scheduler, timed where it runs (on append)
    broken = 0
    for message, retention in traj.events:
        memory.add_message("run", message, retention=retention, tenant=tenant)
        if msgs.is_user_turn(message):
            broken += orphans(session.view(window))
    memory.working_memory.flush()
    view = session.view(window)
    broken += orphans(view)
    visible = facts_in(view_text(view), traj)
    in_prompt, in_summaries, asked_ms = [], 0, []
    for fact in traj.facts:
        t0 = time.perf_counter()
        prompt = memory.prompt(fact.question, budget=budget, session_id="run", tenant=tenant, overrides=overrides).prompt
        asked_ms.append((time.perf_counter() - t0) * 1000)
        in_prompt.append(fact.value in prompt)
        in_summaries += fact.value in summaries_section(prompt)
    shown = {e.seq for e in session._log.entries if e.shown in view or e.is_system}
    silent = len({e.seq for e in session._log.entries} - shown - covered_by_notes(session, view))
    stats = session.stats()
    facts = [{"kind": f.kind, "value": f.value, "seq": f.seq, "question": f.question, "visible": v, "prompt": p}
             for f, v, p in zip(traj.facts, visible, in_prompt)]
    return {"visible": visible, "prompt": in_prompt, "reachable": [a or b for a, b in zip(visible, in_prompt)],
            "facts": facts, "silent": silent, "orphans": broken, "compact_ms": spent[0] * 1000, "tiers": stats["tiers"],
            "in_summaries": in_summaries, "question_ms": asked_ms,
            "markers": stats["drop_markers"], "summaries": stats["summaries"], "view_tokens": session.count_view(view)}


def run_truncate(traj: Trajectory, window: int) -> dict[str, Any]:
    history: list[dict[str, Any]] = []
    broken, seconds = 0, 0.0
    for message, _ in traj.events:
        history.append(message)
        t0 = time.perf_counter()
        view, shown = keep_newest(history, window)
        seconds += time.perf_counter() - t0
        if msgs.is_user_turn(message):
            broken += orphans(view)
    broken += orphans(view)
    visible = facts_in(view_text(view), traj)
    return {"visible": visible, "prompt": None, "reachable": visible, "silent": len(history) - len(shown),
            "orphans": broken, "compact_ms": seconds * 1000}


def run_micro_summary(traj: Trajectory, window: int) -> dict[str, Any]:
    method, broken = MicroSummary(window), 0
    for message, _ in traj.events:
        method.append(message)
        if msgs.is_user_turn(message):
            broken += orphans(method.view()[0])
    view, silent = method.view()
    broken += orphans(view)
    visible = facts_in(view_text(view), traj)
    return {"visible": visible, "prompt": None, "reachable": visible, "silent": silent, "orphans": broken,
            "compact_ms": method.seconds * 1000}


def share(flags: list[bool] | None) -> float | None:
    return None if flags is None else round(sum(flags) / len(flags), 3) if flags else 1.0


def table(rows: list[dict[str, Any]]) -> str:
    head = f"{'trajectory':<12} {'window':>6} {'method':<14} {'visible':>7} {'prompt':>6} {'reach':>6} " \
           f"{'silent':>6} {'orphans':>7} {'compact ms':>10}"
    lines = [head, "-" * len(head)]
    for r in rows:
        prompt = "-" if r["prompt"] is None else f"{r['prompt']:.2f}"
        lines.append(f"{r['trajectory']:<12} {r['window']:>6} {r['method']:<14} {r['visible']:>7.2f} {prompt:>6} "
                     f"{r['reachable']:>6.2f} {r['silent']:>6} {r['orphans']:>7} {r['compact_ms']:>10.1f}")
    return "\n".join(lines)


def pooled(rows: list[dict[str, Any]], flags: dict[tuple, dict[str, list[bool]]]) -> list[dict[str, Any]]:
    """Per window and method: facts pooled over every trajectory, counts summed."""
    out = []
    for window in sorted({r["window"] for r in rows}):
        for method in dict.fromkeys(r["method"] for r in rows):
            mine = [r for r in rows if r["window"] == window and r["method"] == method]
            f = flags[(window, method)]
            out.append({"trajectory": "ALL", "window": window, "method": method, "visible": share(f["visible"]),
                        "prompt": share(f["prompt"]) if f["prompt"] else None, "reachable": share(f["reachable"]),
                        "silent": sum(r["silent"] for r in mine), "orphans": sum(r["orphans"] for r in mine),
                        "compact_ms": sum(r["compact_ms"] for r in mine)})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--windows", type=int, nargs="+", default=[8000, 32000])
    parser.add_argument("--prompt-budget", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--scale", type=float, default=1.0, help="< 1 for shorter trajectories (a quick run)")
    parser.add_argument("--json", type=Path, help="write every row here")
    parser.add_argument("--summaries-dense", type=float, help=(
        "the weight of meaning in ranking the live summaries (live_summaries.dense; default: the served setting); "
        "above 0 the archive pass embeds each summary's lines as compaction writes it"))
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")
    from agent_memory import Memory
    from agent_memory.core.config import load_settings

    trajs = trajectories(args.seed, args.scale)
    for traj in trajs:
        print(f"{traj.name}: {len(traj.events)} messages, {traj.tool_calls} tool calls, "
              f"{sum(tokens(m) for m, _ in traj.events):,} tokens, {len(traj.facts)} facts", file=sys.stderr)
    rows: list[dict[str, Any]] = []
    flags: dict[tuple, dict[str, list[bool]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(data_dir=Path(tmp) / "data", triple_extractor="rules", llm_model=None,
                                 qdrant_url=None, neo4j_uri=None, postgres_url=None)
        with Memory(settings=settings) as memory:
            overrides = None
            if args.summaries_dense is not None:
                overrides = {"live_summaries": {"dense": args.summaries_dense}}
                memory.working_memory.embed_summary_lines = args.summaries_dense > 0
            asked_ms: list[float] = []
            in_summaries = 0
            for window in args.windows:
                for traj in trajs:
                    tenant = f"{traj.name}-{window}"
                    for method in ("memory", "truncate", "micro+summary"):
                        if method == "memory":
                            result = run_memory(memory, traj, window, args.prompt_budget, tenant, overrides)
                            asked_ms += result.pop("question_ms")
                            in_summaries += result["in_summaries"]
                        elif method == "truncate":
                            result = run_truncate(traj, window)
                        else:
                            result = run_micro_summary(traj, window)
                        slot = flags.setdefault((window, method), {"visible": [], "prompt": [], "reachable": []})
                        for key in ("visible", "prompt", "reachable"):
                            slot[key] += result[key] or []
                        rows.append({"trajectory": traj.name, "window": window, "method": method,
                                     **{k: share(v) if k in ("visible", "prompt", "reachable") else v
                                        for k, v in result.items()}})
                        for fact in result.get("facts", []):
                            if not (fact["visible"] or fact["prompt"]):
                                print(f"    unreachable: {traj.name} {window} {fact['kind']} {fact['value']!r} "
                                      f"(message {fact['seq']})", file=sys.stderr)
                        print(f"  {traj.name} {window} {method}: done", file=sys.stderr)
    total = pooled(rows, flags)
    print(table(rows + total))
    for window in args.windows:
        mine = {r["method"]: r for r in total if r["window"] == window}
        best = max(mine["truncate"]["reachable"], mine["micro+summary"]["reachable"])
        gap = (mine["memory"]["reachable"] - best) * 100
        print(f"window {window}: reachable {mine['memory']['reachable']:.2f} vs best baseline {best:.2f} "
              f"({gap:+.0f} points; target +20: {'met' if gap >= 20 else 'MISSED'}), silent drops "
              f"{mine['memory']['silent']}, orphans {mine['memory']['orphans']}")
    ordered = sorted(asked_ms)
    print(f"memory's questions: {len(ordered)}, p50 {ordered[len(ordered) // 2]:.0f} ms, p95 "
          f"{ordered[int(0.95 * (len(ordered) - 1))]:.0f} ms; facts in the summaries section {in_summaries}")
    if args.json:
        args.json.write_text(json.dumps(rows + total, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
