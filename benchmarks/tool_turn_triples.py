"""The entity graph of an agent's tool loops: what it holds from archived tool turns and from plain turns.

    python benchmarks/tool_turn_triples.py [--scale 0.25] [--seed 7] [--window 8000] [--json out.json]

Appends the working-memory trajectories (``wm_trajectories.py``: coding loops and support chats, English and
Chinese) through ``Memory.add_message`` as ``bench_working_memory.py`` does, then reads the graph back. Per
trajectory and kind of source (a tool turn: ``metadata["tools"]``; a plain turn): the relations, how many are
noise, a sample of the others; the graph's entities and relations; for each of the trajectory's questions,
whether its value is in ``Memory.prompt`` and the lines of the prompt's "Known facts" section.

Noise, judged on each side of a relation against its source's stored text (a rule of this script, kept apart
from the one ingestion applies, index/triples/prose.py): code (a bracket, ``=``, ``;``, a quote or a
backslash), a bare line number ("7.9"), a JSON key of the text (``"name":``) or a role or marker word, or a
piece of a longer path or identifier (every mention of it in the text touches ``/ _ . -``). It errs towards
noise: "p95 latency" beside "p95-..." counts as a piece. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from wm_trajectories import trajectories  # noqa: E402

MARKERS = {"assistant", "user", "system", "tool", "tool_use", "tool_result"}
FACTS = re.compile(r"## Known facts\n(.*?)(?:\n## |\Z)", re.S)


def noise(name: str, text: str) -> str | None:
    """Why a side of a relation is noise (see the module's account), or None."""
    name = name.strip()
    if re.search(r"[(){}\[\]=<>;\"\\]", name):
        return "code"
    if re.fullmatch(r"[\d.:]+", name):
        return "line number"
    if name.casefold() in MARKERS or re.search(r'"%s"\s*:' % re.escape(name), text):
        return "JSON key or marker"
    if "/" in name:
        return None  # a whole path is a name
    mentions = list(re.finditer(re.escape(name), text, re.IGNORECASE))
    if mentions and all((m.start() > 0 and text[m.start() - 1] in "/_.-")
                        or (m.end() < len(text) and text[m.end()] in "/_.-") for m in mentions):
        return "piece of a path or identifier"
    return None


def graph_rows(memory, tenant: str) -> tuple[list[dict], dict[str, dict]]:
    """The tenant's relations and its archived turns' sources (source ID -> tools, text)."""
    from agent_memory.core.records import SearchFilter

    sources: dict[str, dict] = {}
    for item in memory.services.vectors.scroll(SearchFilter(tenant=tenant, kinds=["turn"])):
        entry = sources.setdefault(item.source_id, {"tools": item.metadata.get("tools"), "text": []})
        entry["text"].append(item.text)
    graph = memory.services.graph
    rows = graph.subject_facts(tenant, graph.entity_names(tenant))
    unique = {row["key"]: row for row in rows}
    return list(unique.values()), {sid: {**s, "text": "\n".join(s["text"])} for sid, s in sources.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=0.25, help="trajectory length (1.0: the full benchmark)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--window", type=int, default=8000)
    parser.add_argument("--prompt-budget", type=int, default=2000)
    parser.add_argument("--json", type=Path, help="write every relation and prompt here")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")
    from agent_memory import Memory
    from agent_memory.core.config import load_settings

    out: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(data_dir=Path(tmp) / "data", triple_extractor="rules", llm_model=None,
                                 qdrant_url=None, neo4j_uri=None, postgres_url=None)
        with Memory(settings=settings) as memory:
            for traj in trajectories(args.seed, args.scale):
                tenant = traj.name
                memory.session("run", tenant=tenant).configure(window_tokens=args.window)
                for message, retention in traj.events:
                    memory.add_message("run", message, retention=retention, tenant=tenant)
                memory.settle()
                rows, sources = graph_rows(memory, tenant)
                counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
                kept: dict[str, list] = collections.defaultdict(list)
                for row in rows:
                    source = sources.get(row["source_id"], {"tools": None, "text": ""})
                    kind = "tool" if source["tools"] else "plain"
                    why = noise(row["subject"], source["text"]) or noise(row["object"], source["text"])
                    counts[kind]["relations"] += 1
                    counts[kind][why or "not noise"] += 1
                    if not why:
                        kept[kind].append(f"{row['subject']} | {row['relation']} | {row['object']}")
                prompts = []
                for fact in traj.facts:
                    text = memory.prompt(fact.question, budget=args.prompt_budget, session_id="run",
                                         tenant=tenant).prompt
                    found = FACTS.search(text)
                    prompts.append({"question": fact.question, "value": fact.value, "in_prompt": fact.value in text,
                                    "facts": found.group(1).splitlines() if found else []})
                stats = memory.services.graph.stats(tenant)
                out[tenant] = {"graph": stats, "counts": {k: dict(v) for k, v in counts.items()},
                               "sample": {k: collections.Counter(v).most_common(5) for k, v in kept.items()},
                               "prompts": prompts}
                print(f"{tenant}: {stats['entities']} entities, {stats['relations']} relations; "
                      f"{sum(p['in_prompt'] for p in prompts)}/{len(prompts)} values in the prompt, "
                      f"{sum(len(p['facts']) for p in prompts)} fact lines")
                for kind in ("tool", "plain"):
                    print(f"  {kind:<5} {dict(counts[kind])}")
                    for line, n in collections.Counter(kept[kind]).most_common(3):
                        print(f"        {n} x {line}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
