"""Run one benchmark: ingest as the product would, then score the product and the baselines.

The store is built once and reused for every budget. Per question and system one JSON
line is written (question id, evidence and cited source IDs, the prompt, its token
count, the scores), so every figure can be recomputed without this harness.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from agent_memory.core.config import load_settings
from agent_memory.core.errors import ConfigError, StoreError
from agent_memory.core.progress import progress_shown
from agent_memory.evaluation.baselines import Baselines
from agent_memory.evaluation.datasets import EvalSet, Material, Question, load_dataset
from agent_memory.evaluation.metric import cited_ids, score_question
from agent_memory.evaluation.report import PRODUCT, Tally, run_summary, write_report
from agent_memory.ingest.pipeline import IngestionPipeline
from agent_memory.ingest.report import IngestReport
from agent_memory.ingest.upgrade import open_services
from agent_memory.retrieval.config import load_preset
from agent_memory.retrieval.pipeline import RetrievalPipeline
from agent_memory.retrieval.render import question_text
from agent_memory.services import Services

log = logging.getLogger(__name__)
INGEST_BATCH = 64


@dataclass
class Compare:
    """One more product system scored in the same run: ``preset`` with ``overrides``, reported as
    ``product:<label>``."""

    label: str
    preset: str = "default"
    overrides: dict[str, Any] = field(default_factory=dict)

    @property
    def system(self) -> str:
        return f"{PRODUCT}:{self.label}"


_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,39}$")


def parse_compare(values: list[str], preset: str = "default") -> list[Compare]:
    """``--compare`` values: a preset name, or ``LABEL=JSON`` overrides of ``preset``; each checked at once
    (a bad key or value is a ConfigError naming it, before anything is ingested)."""
    out: list[Compare] = []
    for value in values:
        label, sep, rest = value.partition("=")
        label = label.strip()
        if sep:
            try:
                overrides = json.loads(rest)
            except ValueError as exc:
                raise ConfigError(f"--compare {value!r}: the overrides are not JSON ({exc})") from None
            if not isinstance(overrides, dict):
                raise ConfigError(f"--compare {value!r}: the overrides must be a JSON object, got {rest!r}")
            compare = Compare(label, preset, overrides)
        else:
            compare = Compare(label, label)
        if not _LABEL.match(label):
            raise ConfigError(f"--compare {value!r}: the label {label!r} must be letters, digits, '_.+-' (at most 40)")
        if any(c.label == label for c in out):
            raise ConfigError(f"--compare {value!r}: the label {label!r} is used twice")
        try:
            load_preset(compare.preset, compare.overrides)
        except ConfigError as exc:
            raise ConfigError(f"--compare {value!r}: {exc}") from None
        out.append(compare)
    return out


@dataclass
class RunConfig:
    dataset: Path
    budgets: list[int]
    limit: int | None = None
    out_dir: Path = Path("reports")
    baselines: bool = True
    product: bool = True
    data_dir: Path | None = None
    preset: str = "default"
    progress: bool = True
    compare: list[Compare] = field(default_factory=list)


@dataclass
class RunResult:
    report: dict[str, Any]
    paths: dict[str, Path] = field(default_factory=dict)


def _disabled(progress: bool) -> bool:
    return not progress_shown(progress)


def settings_for(data_dir: Path) -> Any:
    """The served settings (environment, ``.env``), with only the data dir set: the harness measures
    what ``serve`` and the CLI run, with no model or preset chosen by dataset."""
    return load_settings(data_dir=data_dir)


def ingest(services: Services, evalset: EvalSet, tenants: list[str], progress: bool) -> dict[str, Any]:
    """Ingest every tenant's material through the product's pipeline; returns the job's counts."""
    report = IngestReport()
    started = time.perf_counter()
    for tenant in tenants:
        ingest_material(services, evalset.material(tenant), progress, report)  # one tenant in memory at a time
    return {"tenants": len(tenants), "chunks": report.chunks, "turns": report.turns, "summaries": report.summaries,
            "triples": report.triples, "unchanged": report.sources_unchanged,
            "warnings": len(report.warnings), "seconds": round(time.perf_counter() - started, 1)}


def ingest_material(services: Services, material: Material, progress: bool,
                    report: IngestReport | None = None) -> IngestReport:
    """One tenant's documents and turns through the product's ingestion pipeline, in batches."""
    report = report if report is not None else IngestReport()
    pipeline = IngestionPipeline(services)
    with tqdm(total=material.size, unit="item", desc=f"ingest {material.tenant}", disable=_disabled(progress)) as bar:
        for batch in _batches(material):
            if batch and hasattr(batch[0], "turn_id"):
                pipeline.ingest_turns(batch, report)
            else:
                pipeline.ingest_documents(batch, report)
            bar.update(len(batch))
            if report.store_error:
                raise StoreError(report.store_error)
    return report


def _batches(material: Material):
    """Documents in fixed batches; turns in whole sessions (a session summary needs all its turns)."""
    for start in range(0, len(material.documents), INGEST_BATCH):
        yield material.documents[start : start + INGEST_BATCH]
    batch: list = []
    for turn in material.turns:
        if batch and turn.session_id != batch[-1].session_id and len(batch) >= INGEST_BATCH:
            yield batch
            batch = []
        batch.append(turn)
    if batch:
        yield batch


def _product(services: Services, preset: str):
    return RetrievalPipeline.from_services(services, preset=preset), "ran"


def evaluate(config: RunConfig) -> RunResult:
    evalset = load_dataset(config.dataset)
    questions = evalset.select(config.limit)
    tenants = evalset.tenants_for(questions)
    temp_dir = None
    env_dir = os.environ.get("AGENT_MEMORY_DATA_DIR")
    data_dir = config.data_dir or (Path(env_dir) if env_dir else None)
    if data_dir is None:
        temp_dir = Path(tempfile.mkdtemp(prefix=f"am-eval-{evalset.name}-"))
        data_dir = temp_dir
    try:
        settings = settings_for(data_dir)
        with open_services(settings) as services:
            ingest_counts = ingest(services, evalset, tenants, config.progress)
            report = _score_all(services, evalset, questions, config)
            report.update(ingest=ingest_counts, preset=config.preset,
                          compare=[{"label": c.label, "preset": c.preset, "overrides": c.overrides}
                                   for c in config.compare],
                          embedding_model=services.embedder.name,
                          triple_extractor=settings.triple_extractor, data_dir=str(data_dir),
                          data_dir_kept=temp_dir is None)
    finally:
        if temp_dir is not None:
            shutil.rmtree(temp_dir, ignore_errors=True)
    paths = write_report(report, config.out_dir, report["stem"])
    return RunResult(report, paths)


def _score_all(services: Services, evalset: EvalSet, questions: list[Question], config: RunConfig) -> dict:
    product, product_status = (None, "not run (--no-product)")
    if config.product:
        product, product_status = _product(services, config.preset)
        if product is None:
            log.warning("product pipeline %s; scoring baselines only", product_status)
    baselines = Baselines(services, evalset.kind) if config.baselines else None
    # The compared configurations answer from the same stores in the same pass over the questions.
    compared = [(c, RetrievalPipeline.from_services(services, c.preset, c.overrides))
                for c in config.compare] if product is not None else []
    counter = services.counter
    # The baselines are framed as the product's prompt is (its instructions and the question count
    # against the same budget), so that the comparison is one of what fills the rest.
    instructions = (product.config if product is not None else load_preset(config.preset)).instructions
    stem = evalset.name + (f"-limit{config.limit}" if config.limit else "")
    config.out_dir.mkdir(parents=True, exist_ok=True)
    budgets = list(dict.fromkeys(config.budgets))
    tallies = {b: {} for b in budgets}
    latencies: dict[int, list[float]] = {b: [] for b in budgets}
    flags = {b: {"over_budget": 0, "errors": 0, "compare_errors": {"errors": 0}} for b in budgets}
    files = {b: config.out_dir / f"{stem}-{b}.jsonl" for b in budgets}
    handles = {b: files[b].open("w", encoding="utf-8") for b in budgets}
    try:
        for question in tqdm(questions, unit="q", desc="questions", disable=_disabled(config.progress)):
            rankings = baselines.rankings(question.text, question.tenant) if baselines else {}
            for budget in budgets:
                if product is not None:
                    prompt, tokens, ms = _run_product(product, question, budget, flags[budget])
                    tokens = max(tokens, counter.count(prompt))  # trust, but recount
                    if tokens > budget:
                        flags[budget]["over_budget"] += 1
                    latencies[budget].append(ms)
                    _record(tallies[budget], handles[budget], evalset, question, PRODUCT, budget, prompt, tokens,
                            latency_ms=ms)
                for compare, pipeline in compared:
                    prompt, tokens, ms = _run_product(pipeline, question, budget, flags[budget]["compare_errors"])
                    _record(tallies[budget], handles[budget], evalset, question, compare.system, budget, prompt,
                            max(tokens, counter.count(prompt)), latency_ms=ms)
                for name, ranked in rankings.items():
                    packed = baselines.pack(ranked, question.tenant, budget, instructions=instructions,
                                            question=question_text(question.text, question.question_date))
                    _record(tallies[budget], handles[budget], evalset, question, name, budget, packed.prompt,
                            packed.tokens)
    finally:
        for handle in handles.values():
            handle.close()
        for _, pipeline in compared:
            pipeline.close()
    runs = [run_summary(b, tallies[b], latencies[b], {**flags[b], "compare_errors": flags[b]["compare_errors"]["errors"],
                                                       "questions_file": str(files[b])}) for b in budgets]
    if baselines is not None and evalset.kind != "conversation":
        for run in runs:
            run["baselines"]["recency"] = None  # n/a for document sets
    return {"dataset": evalset.name, "file": str(config.dataset), "stem": stem, "n_questions": len(questions),
            "limit": config.limit, "tokenizer": counter.name, "product_status": product_status, "runs": runs}


def _run_product(product, question: Question, budget: int, flags: dict) -> tuple[str, int, float]:
    started = time.perf_counter()
    try:
        result = product.run(question.text, tenant=question.tenant, session_id=None, budget=budget,
                             question_date=question.question_date)
    except Exception as exc:  # noqa: BLE001 - one failing question is scored 0 and counted, not fatal
        log.error("product pipeline failed on %s: %s", question.qid, exc)
        flags["errors"] += 1
        return "", 0, (time.perf_counter() - started) * 1000
    return result.prompt, int(result.total_tokens), (time.perf_counter() - started) * 1000


def _record(tallies: dict[str, Tally], handle, evalset: EvalSet, question: Question, system: str, budget: int,
            prompt: str, tokens: int, latency_ms: float | None = None) -> None:
    score = score_question(evalset.name, question, prompt)
    tallies.setdefault(system, Tally()).add(question.category, score, tokens)
    row = {"qid": question.qid, "system": system, "budget": budget, "category": question.category,
           "question": question.text, "evidence": [e.source_id for e in question.evidence],
           "cited": cited_ids(prompt), "tokens": tokens, "soft": round(score.soft, 4), "strict": score.strict,
           "present": score.present}
    if score.answer_in_prompt is not None:
        row["answer_in_prompt"] = score.answer_in_prompt
    if latency_ms is not None:
        row["latency_ms"] = round(latency_ms, 1)
    row["prompt"] = prompt
    handle.write(json.dumps(row, ensure_ascii=False) + "\n")
