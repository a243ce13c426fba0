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

from agent_memory.services import build_services
from retrieval.pipeline import RetrievalPipeline

from .datasets import EvalSet, Material, Question, load_dataset
from .metric import score_question
from .report import Tally
from .runner import ingest_material, settings_for

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
    with build_services(settings_for(config.data_dir)) as services:
        for mixed_set in sets:
            for material in mixed_set.material:
                ingest_material(services, _retenant(material, f"single-{mixed_set.evalset.name}"), config.progress)
                ingest_material(services, _retenant(material, MIXED_TENANT), config.progress)
        ingest_seconds = round(time.perf_counter() - started, 1)
        rows = []
        with RetrievalPipeline.from_services(services, preset=config.preset) as product:
            config.out_dir.mkdir(parents=True, exist_ok=True)
            with (config.out_dir / "mixed.jsonl").open("w", encoding="utf-8") as handle:
                for mixed_set in sets:
                    rows.append(_score_set(product, mixed_set, handle))
    report = {"datasets": [str(p) for p in config.datasets], "preset": config.preset,
              "embedding_model": services.embedder.name, "ingest_seconds": ingest_seconds, "sets": rows,
              }
    (config.out_dir / "mixed.json").write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    return report


def _score_set(product: RetrievalPipeline, mixed_set: MixedSet, handle) -> dict[str, Any]:
    name = mixed_set.evalset.name
    tallies = {"single": Tally(), "mixed": Tally()}
    for question in mixed_set.questions:
        for where, tenant in (("single", f"single-{name}"), ("mixed", MIXED_TENANT)):
            result = product.run(question.text, tenant=tenant, budget=mixed_set.budget,
                                 question_date=question.question_date)
            score = score_question(name, question, result.prompt)
            tallies[where].add(question.category, score, result.total_tokens)
            handle.write(json.dumps({"set": name, "where": where, "qid": question.qid, "soft": score.soft,
                                     "strict": score.strict, "tokens": result.total_tokens,
                                     "prompt": result.prompt}, ensure_ascii=False) + "\n")
    single, mixed = tallies["single"].summary(), tallies["mixed"].summary()
    return {"set": name, "budget": mixed_set.budget, "questions": len(mixed_set.questions),
            "single": {"soft": single["soft"], "strict": single["strict"]},
            "mixed": {"soft": mixed["soft"], "strict": mixed["strict"]},
            "delta_soft": round(mixed["soft"] - single["soft"], 4)}


def markdown(report: dict[str, Any]) -> str:
    lines = [f"Mixed memory ({report['embedding_model']}, preset {report['preset']}): each set's questions "
             "against its own tenant and against one tenant holding every set", "",
             "| set (budget) | questions | single soft / strict | mixed soft / strict | delta soft |",
             "| --- | --- | --- | --- | --- |"]
    for row in report["sets"]:
        lines.append(f"| {row['set']} ({row['budget']}) | {row['questions']} | "
                     f"{row['single']['soft']:.3f} / {row['single']['strict']:.3f} | "
                     f"{row['mixed']['soft']:.3f} / {row['mixed']['strict']:.3f} | {row['delta_soft']:+.3f} |")
    return "\n".join(lines)
