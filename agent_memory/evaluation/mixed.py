"""Mixed memory: several benchmark sets in one tenant, each set's questions scored against all of it.

A real agent's memory holds its conversations and its documents, in English and Chinese, in one
tenant. ``agent-memory eval --mixed A B C`` ingests every set's material twice through the
product's pipeline: once into a tenant of its own (``single-<set>``) and once into the shared
tenant ``mixed``. Each question runs against both with the same served configuration and the
set's own budget, so the report puts each set's mixed figure beside its single-set figure from
the same run. A conversation set contributes its first conversation (LoCoMo) or haystack
(LongMemEval) and that one's questions; a document set all of its material and questions
(``--limit`` caps the questions per set).
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_memory.evaluation.agent_path import Streamed, agent_question, stream_all
from agent_memory.evaluation.datasets import EvalSet, Material, Question, load_dataset
from agent_memory.evaluation.metric import score_question
from agent_memory.evaluation.report import Tally
from agent_memory.evaluation.runner import ingest_material, settings_for
from agent_memory.ingest.upgrade import open_services
from agent_memory.retrieval.pipeline import RetrievalPipeline

MIXED_TENANT = "mixed"


@dataclass
class MixedSet:
    evalset: EvalSet
    questions: list[Question]
    material: list[Material]
    budget: int


@dataclass
class MixedConfig:
    datasets: list[Path]
    budgets: dict[str, int]
    data_dir: Path
    out_dir: Path = Path("reports")
    preset: str = "default"
    limit: int | None = None
    progress: bool = True
    # --agent-path: the conversation sets also appended message by message (agent_path.py) into
    # ``agent-single-<set>`` and, with every set's documents, ``agent-mixed``; scored beside the others.
    agent_path: bool = False


def _retenant(material: Material, tenant: str) -> Material:
    return Material(tenant, documents=[dataclasses.replace(d, tenant=tenant) for d in material.documents],
                    turns=[dataclasses.replace(t, tenant=tenant) for t in material.turns])


def _select(evalset: EvalSet, limit: int | None) -> tuple[list[Question], list[str]]:
    """A conversation set: its first tenant (one conversation); a document set: everything."""
    tenants = evalset.tenants_for(evalset.questions)
    if evalset.kind == "conversation":
        tenants = tenants[:1]
    questions = [q for q in evalset.questions if q.tenant in tenants]
    return (questions[:limit] if limit else questions), tenants


def evaluate_mixed(config: MixedConfig) -> dict[str, Any]:
    sets = []
    for path in config.datasets:
        evalset = load_dataset(path)
        questions, tenants = _select(evalset, config.limit)
        sets.append(MixedSet(evalset, questions, [evalset.material(t) for t in tenants],
                             config.budgets[evalset.name]))
    started = time.perf_counter()
    with open_services(settings_for(config.data_dir)) as services:
        for mixed_set in sets:
            for material in mixed_set.material:
                ingest_material(services, _retenant(material, f"single-{mixed_set.evalset.name}"), config.progress)
                ingest_material(services, _retenant(material, MIXED_TENANT), config.progress)
        ingest_seconds = round(time.perf_counter() - started, 1)
        streamed: dict[str, Streamed] = {}
        if config.agent_path:
            plan = [(tenant, material) for mixed_set in sets for material in mixed_set.material
                    for tenant in ((f"agent-single-{mixed_set.evalset.name}", "agent-mixed")
                                   if mixed_set.evalset.kind == "conversation" else ("agent-mixed",))]
            streamed = stream_all(services, plan, config.progress)
        rows = []
        with RetrievalPipeline.from_services(services, preset=config.preset) as product:
            config.out_dir.mkdir(parents=True, exist_ok=True)
            with (config.out_dir / "mixed.jsonl").open("w", encoding="utf-8") as handle:
                for mixed_set in sets:
                    rows.append(_score_set(product, mixed_set, handle, streamed))
    report = {"datasets": [str(p) for p in config.datasets], "preset": config.preset,
              "embedding_model": services.embedder.name, "ingest_seconds": ingest_seconds, "sets": rows,
              }
    (config.out_dir / "mixed.json").write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    return report


def _score_set(product: RetrievalPipeline, mixed_set: MixedSet, handle,
               streamed: dict[str, Streamed] | None = None) -> dict[str, Any]:
    name = mixed_set.evalset.name
    tallies = {"single": Tally(), "mixed": Tally()}
    agents = [(where, streamed[tenant]) for where, tenant in (("agent-single", f"agent-single-{name}"),
                                                              ("agent-mixed", "agent-mixed"))
              if streamed and tenant in streamed and mixed_set.evalset.kind == "conversation"]
    tallies.update((where, Tally()) for where, _ in agents)
    for question in mixed_set.questions:
        asks = [("single", f"single-{name}", question), ("mixed", MIXED_TENANT, question)]
        asks += [(where, into.tenant, agent_question(question, into)) for where, into in agents]
        for where, tenant, asked in asks:
            result = product.run(asked.text, tenant=tenant, budget=mixed_set.budget,
                                 question_date=question.question_date)
            score = score_question(name, asked, result.prompt)
            tallies[where].add(question.category, score, result.total_tokens)
            handle.write(json.dumps({"set": name, "where": where, "qid": question.qid, "soft": score.soft,
                                     "strict": score.strict, "tokens": result.total_tokens,
                                     "prompt": result.prompt}, ensure_ascii=False) + "\n")
    single, mixed = tallies["single"].summary(), tallies["mixed"].summary()
    row = {"set": name, "budget": mixed_set.budget, "questions": len(mixed_set.questions),
           "single": {"soft": single["soft"], "strict": single["strict"]},
           "mixed": {"soft": mixed["soft"], "strict": mixed["strict"]},
           "delta_soft": round(mixed["soft"] - single["soft"], 4)}
    for where, _ in agents:
        summary = tallies[where].summary()
        row[where] = {"soft": summary["soft"], "strict": summary["strict"]}
    return row


def markdown(report: dict[str, Any]) -> str:
    lines = [f"Mixed memory ({report['embedding_model']}, preset {report['preset']}): each set's questions "
             "against its own tenant and against one tenant holding every set", "",
             "| set (budget) | questions | single soft / strict | mixed soft / strict | delta soft |",
             "| --- | --- | --- | --- | --- |"]
    for row in report["sets"]:
        lines.append(f"| {row['set']} ({row['budget']}) | {row['questions']} | "
                     f"{row['single']['soft']:.3f} / {row['single']['strict']:.3f} | "
                     f"{row['mixed']['soft']:.3f} / {row['mixed']['strict']:.3f} | {row['delta_soft']:+.3f} |")
    agent_rows = [row for row in report["sets"] if "agent-mixed" in row]
    if agent_rows:
        lines += ["", "Agent path (conversations appended message by message, eval --agent-path):", "",
                  "| set | single soft / strict | agent-single soft / strict | agent-mixed soft / strict |",
                  "| --- | --- | --- | --- |"]
        for row in agent_rows:
            lines.append(f"| {row['set']} | {row['single']['soft']:.3f} / {row['single']['strict']:.3f} | "
                         f"{row['agent-single']['soft']:.3f} / {row['agent-single']['strict']:.3f} | "
                         f"{row['agent-mixed']['soft']:.3f} / {row['agent-mixed']['strict']:.3f} |")
    return "\n".join(lines)
