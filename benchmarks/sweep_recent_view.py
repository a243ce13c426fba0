"""Re-ask LoCoMo dev questions inside each conversation's last session over kept agent-path stores,
with retrieval overrides: a dev-time sweep of the recent view (docs/journal/2026-12-03-relevance-gated-recent-view.md).

The stores and the no-session figures come from one `agent-memory eval --agent-path` run (its data
dir and its --out folder); the questions are asked with the served pipeline, the working memory of
those stores as its recent route, as `eval --agent-path` asks them inside the last session.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/sweep_recent_view.py --data-dir /tmp/h31a-agent2 \
        --rows /tmp/h31a/agent2/locomo-agent-path-1800.jsonl --limit 250 '{}' '{"recent_view": {"always": 2}}'
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json

from agent_memory.conversation.working_memory import WorkingMemory
from agent_memory.core.config import load_settings
from agent_memory.evaluation.datasets import Evidence, load_dataset
from agent_memory.evaluation.metric import score_question
from agent_memory.retrieval.pipeline import RetrievalPipeline
from agent_memory.services import build_services


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", required=True, help="the data dir of an `eval --agent-path` run")
    parser.add_argument("--rows", required=True, help="that run's locomo-agent-path-<budget>.jsonl")
    parser.add_argument("--dataset", default="/work/shared/eval/locomo_dev.json")
    parser.add_argument("--limit", type=int, default=250, help="the first this many questions")
    parser.add_argument("--budget", type=int, default=1800)
    parser.add_argument("--out", help="write each question's inside-session outcome per config here (jsonl)")
    parser.add_argument("configs", nargs="+", help="retrieval overrides as JSON, one sweep row each")
    args = parser.parse_args()
    rows: dict[str, dict] = collections.defaultdict(dict)
    with open(args.rows) as f:
        for line in f:
            r = json.loads(line)
            rows[r["qid"]][r["system"]] = r
    questions = [q for q in load_dataset(args.dataset).questions if q.qid in rows][: args.limit]
    out = open(args.out, "w") if args.out else None
    outcomes: dict[str, dict[str, tuple[float, float]]] = {}  # config -> qid -> (soft, strict)
    with build_services(load_settings(data_dir=args.data_dir)) as services:
        memory = WorkingMemory(services)
        last: dict[str, list[str]] = {}
        for key, _agent in memory.sessions.store.sessions():
            tenant, sid = key.split("/", 1)
            last.setdefault(tenant, []).append(sid)
        for config in args.configs:
            overrides = json.loads(config)
            pipeline = RetrievalPipeline.from_services(services, "default", overrides, recent_turns=memory.recent_turns,
                                                       session_summaries=memory.summaries)
            soft, strict, base_soft, base_strict = [], [], [], []
            for q in questions:
                agent = rows[q.qid]["agent"]
                asked = dataclasses.replace(q, tenant="agent-" + q.tenant,
                                            evidence=[Evidence(i, e.text) for i, e in zip(agent["evidence"], q.evidence)])
                session = sorted(last[asked.tenant], key=lambda s: int(s.rsplit("S", 1)[1]))[-1]
                result = pipeline.run(asked.text, tenant=asked.tenant, session_id=session, budget=args.budget,
                                      question_date=q.question_date)
                score = score_question("locomo", asked, result.prompt)
                soft.append(score.soft)
                strict.append(float(score.strict))
                base_soft.append(agent["soft"])
                base_strict.append(float(agent["strict"]))
                outcomes.setdefault(config, {})[q.qid] = (score.soft, float(score.strict))
                if out:
                    out.write(json.dumps({"config": overrides, "qid": q.qid, "soft": score.soft,
                                          "strict": score.strict, "no_session_soft": agent["soft"],
                                          "recent": result.prompt.count("## Recent conversation")}) + "\n")
            n = len(soft)
            lost = sum(1 for a, b in zip(soft, base_soft) if a < b - 1e-3)
            gained = sum(1 for a, b in zip(soft, base_soft) if a > b + 1e-3)
            print(json.dumps(overrides), "inside", round(sum(soft) / n, 4), round(sum(strict) / n, 4),
                  "no-session", round(sum(base_soft) / n, 4), round(sum(base_strict) / n, 4), n,
                  f"lost {lost} gained {gained}", flush=True)
            pipeline.close()
        memory.close()
    if out:
        out.close()
    print_held_out(outcomes)


def print_held_out(outcomes: dict[str, dict[str, tuple[float, float]]]) -> None:
    """Leave one conversation out: for each conversation, the config the other conversations score
    best (soft, then strict) answers its questions; the held-out mean beside the in-sample best."""
    if len(outcomes) < 2:
        return

    def mean(config: str, qids: list[str]) -> tuple[float, float]:
        values = [outcomes[config][q] for q in qids]
        return sum(v[0] for v in values) / len(values), sum(v[1] for v in values) / len(values)

    qids = list(next(iter(outcomes.values())))
    conversations = sorted({q.split(":")[0] for q in qids})
    held: list[tuple[float, float]] = []
    for conversation in conversations:
        train = [q for q in qids if not q.startswith(conversation + ":")]
        chosen = max(outcomes, key=lambda c: mean(c, train))
        held += [outcomes[chosen][q] for q in qids if q.startswith(conversation + ":")]
        print(f"held out {conversation}: chose {chosen}", flush=True)
    best = max(outcomes, key=lambda c: mean(c, qids))
    in_sample = mean(best, qids)
    print(f"leave-one-conversation-out: {sum(v[0] for v in held) / len(held):.4f} / "
          f"{sum(v[1] for v in held) / len(held):.4f}; in-sample best {best}: {in_sample[0]:.4f} / {in_sample[1]:.4f}")


if __name__ == "__main__":
    main()
