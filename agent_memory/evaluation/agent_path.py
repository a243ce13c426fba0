"""``agent-memory eval DATASET --agent-path``: the conversations appended as an agent appends them.

The transcript path (today's eval) ingests a conversation set's turns as transcript files are
ingested. An agent instead appends messages one by one to a session. This mode does both in one
run, on one set of services built as ``serve`` builds them: the material is ingested into its
tenant as ever, and streamed into a second tenant (``agent-<tenant>``) through ``Memory`` exactly
as an agent streams it: a session per conversation session, messages in order, each with its
speaker as ``name`` (LoCoMo's names; LongMemEval's user/assistant are roles) and its session's
date as ``timestamp``, archived off the request path as under the HTTP API (``background``).
Then each question is asked three ways at the same budget: the transcript tenant without a
session (today's figure), the agent tenant without a session, and the agent tenant inside the
conversation's last session.

Gold labels never enter the stores: an archived turn's source ID is ``<session>/m<seq>``, with the
seq the append returned; the harness maps each evidence turn's transcript source ID to it.
Reported beside recall: append latency (the request path: validate, store, judge, compaction) and
archive lag (from an append's return until its pass has stored it). The lag is measured while
streaming as fast as the machine appends, so a queue builds: it is an upper bound of what an
agent that waits for a model between messages sees.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from dataclasses import dataclass, field
from datetime import timezone
from pathlib import Path
from typing import Any

from tqdm import tqdm

from agent_memory.conversation.archived_turns import session_key
from agent_memory.conversation.working_memory import WorkingMemory
from agent_memory.core.errors import ConfigError
from agent_memory.core.records import TurnRecord
from agent_memory.evaluation.datasets import EvalSet, Evidence, Material, Question, load_dataset
from agent_memory.evaluation.metric import score_question
from agent_memory.evaluation.report import Tally, percentile
from agent_memory.evaluation.runner import _disabled, ingest, settings_for
from agent_memory.ingest.archive import archiver
from agent_memory.ingest.pipeline import IngestionPipeline
from agent_memory.ingest.upgrade import open_services
from agent_memory.retrieval.pipeline import RetrievalPipeline
from agent_memory.retrieval.when import parse_stamp

SYSTEMS = ("transcript", "agent", "agent+session")
PROBES = 20  # single messages appended on an idle archive, each timed until it is stored
TURN_ROLES = ("user", "assistant")


@dataclass
class AgentPathConfig:
    dataset: Path
    budget: int
    data_dir: Path
    out_dir: Path = Path("reports")
    limit: int | None = None
    preset: str = "default"
    progress: bool = True


@dataclass
class Streamed:
    """One tenant's material as appended: where each dataset turn went, and the last session."""

    tenant: str
    source_ids: dict[str, str] = field(default_factory=dict)  # transcript source ID -> archived source ID
    last_session: str | None = None


def session_name(session_id: str) -> str:
    """A dataset session ID as a session path segment (no '/': it separates tenant and session)."""
    return session_id.replace("/", "_") or "session"


def message_for(turn: TurnRecord, roles: dict[str, str], offset: int) -> dict[str, Any]:
    """The message an agent appends for ``turn``: a transcript's named speakers become ``name`` on the
    user (first speaker seen) or assistant role; the session's date, ``offset`` seconds on, its time."""
    if turn.speaker in TURN_ROLES:
        message: dict[str, Any] = {"role": turn.speaker, "content": turn.text}
    else:
        role = roles.setdefault(turn.speaker, "user" if not roles else "assistant")
        message = {"role": role, "content": turn.text, "name": turn.speaker}
    when = parse_stamp(turn.timestamp)  # the dataset's date text, read as the product reads it
    if when is not None:
        message["timestamp"] = when.replace(tzinfo=timezone.utc).timestamp() + offset
    return message


def refuse_earlier_run(services, memory: WorkingMemory, tenants: list[str]) -> None:
    """ConfigError where a tenant the agent path appends to already holds sessions or sources, from an earlier run
    on this data dir: every message would be appended a second time, and a question's evidence, mapped to the
    newest copy, read as missing where de-duplication kept the older (zh_users_preferences seed 13 at 500, asked
    again on one data dir: 0.427 on the transcript, 0.177 on the agent path)."""
    for tenant in tenants:
        if memory.sessions.store.session_rows(session_key(tenant, "")) or services.catalog.count(tenant):
            raise ConfigError(f"--agent-path appends into tenant {tenant!r}, which this data dir already holds from "
                              f"an earlier run: its messages would be appended twice. Use a fresh --data-dir, or "
                              f"remove it first: agent-memory --data-dir {services.settings.data_dir} forget --all "
                              f"--tenant {tenant}")


def stream(services, memory: WorkingMemory, material: Material, tenant: str, append_ms: list[float],
           progress: bool) -> Streamed:
    """Append ``material``'s turns to sessions of ``tenant`` as an agent does; documents are added."""
    out = Streamed(tenant)
    if material.documents:
        IngestionPipeline(services).ingest_documents([dataclasses.replace(d, tenant=tenant)
                                                      for d in material.documents])
    roles: dict[str, str] = {}
    position: dict[str, int] = {}
    for turn in tqdm(material.turns, unit="msg", desc=f"append {tenant}", disable=_disabled(progress)):
        session = session_name(turn.session_id)
        offset = position[session] = position.get(session, -1) + 1
        message = message_for(turn, roles, offset)
        started = time.perf_counter()
        seq = memory.session(tenant, session).append(message)
        append_ms.append((time.perf_counter() - started) * 1000)
        out.source_ids[turn.source_id] = f"{session}/m{seq}"
        out.last_session = session
    return out


def probe_lags(memory: WorkingMemory, tenant: str = "agent-probe") -> list[float]:
    """Milliseconds from an append's return until its turn is stored, one message at a time on an idle
    archive (its own tenant: the probes never meet the questions)."""
    lags = []
    for n in range(PROBES):
        memory.flush()
        session = memory.session(tenant, "probe")
        session.append({"role": "user", "content": f"Probe {n}: the locker code is {4100 + n}."})
        started = time.perf_counter()
        memory.flush()
        lags.append((time.perf_counter() - started) * 1000)
    return lags


def stream_all(services, plan: list[tuple[str, Material]], progress: bool) -> dict[str, Streamed]:
    """``--mixed --agent-path``: each (tenant, material) appended as an agent does (documents ingested), on
    a WorkingMemory built as Memory builds it, archived off the request path; returns when all is stored.
    A tenant that several materials go to gets one ``Streamed`` holding all their turns' source IDs."""
    memory = WorkingMemory(services, promote=archiver(services, threading.Lock()))
    memory.background = True
    out: dict[str, Streamed] = {}
    try:
        refuse_earlier_run(services, memory, sorted({tenant for tenant, _ in plan}))
        for tenant, material in plan:
            got = stream(services, memory, material, tenant, [], progress)
            into = out.setdefault(tenant, Streamed(tenant))
            into.source_ids.update(got.source_ids)
            into.last_session = got.last_session or into.last_session
        memory.flush()
    finally:
        memory.close()
    return out


def agent_question(question: Question, streamed: Streamed) -> Question:
    evidence = [Evidence(streamed.source_ids.get(e.source_id, e.source_id), e.text) for e in question.evidence]
    return dataclasses.replace(question, tenant=streamed.tenant, evidence=evidence)


def evaluate_agent_path(config: AgentPathConfig) -> dict[str, Any]:
    evalset = load_dataset(config.dataset)
    if evalset.kind != "conversation":
        raise ConfigError(f"--agent-path streams conversations; {evalset.name} holds documents")
    questions = evalset.select(config.limit)
    tenants = evalset.tenants_for(questions)
    config.out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"{evalset.name}-agent-path" + (f"-limit{config.limit}" if config.limit else "")
    with open_services(settings_for(config.data_dir)) as services:
        ingest_counts = ingest(services, evalset, tenants, config.progress)  # the transcript path
        # The agent path's parts as Memory builds them (agent_memory/memory/memory.py), from the same services.
        memory = WorkingMemory(services, promote=archiver(services, threading.Lock()))
        memory.background = True  # as under serve: the archive off the request path
        pipeline = RetrievalPipeline.from_services(services, config.preset, recent_turns=memory.recent_turns,
                                                   session_summaries=memory.summaries)
        try:
            refuse_earlier_run(services, memory, [f"agent-{t}" for t in tenants])
            append_ms: list[float] = []
            started = time.perf_counter()
            streamed = {t: stream(services, memory, evalset.material(t), f"agent-{t}", append_ms, config.progress)
                        for t in tenants}
            appended_s = time.perf_counter() - started
            memory.flush()
            archive_s = time.perf_counter() - started
            lags = [lag * 1000 for lag in memory.archive_lags]
            archived = memory.promoted
            idle = probe_lags(memory)
            tallies = {s: Tally() for s in SYSTEMS}
            with (config.out_dir / f"{stem}-{config.budget}.jsonl").open("w", encoding="utf-8") as handle:
                for question in tqdm(questions, unit="q", desc="questions", disable=_disabled(config.progress)):
                    _score(pipeline, evalset, question, streamed[question.tenant], config.budget, tallies, handle)
        finally:
            pipeline.close()
            memory.close()
    report = {
        "dataset": evalset.name, "file": str(config.dataset), "budget": config.budget, "preset": config.preset,
        "n_questions": len(questions), "limit": config.limit, "ingest": ingest_counts,
        "systems": {name: tally.summary() for name, tally in tallies.items()},
        "appended": len(append_ms), "append_seconds": round(appended_s, 1), "archived_seconds": round(archive_s, 1),
        "append_ms": {"p50": percentile(append_ms, 50), "p95": percentile(append_ms, 95),
                      "max": percentile(append_ms, 100)},
        "archive_lag_ms": {"p50": percentile(lags, 50), "p95": percentile(lags, 95), "max": percentile(lags, 100),
                           "n": len(lags)},
        "archive_lag_idle_ms": {"p50": percentile(idle, 50), "p95": percentile(idle, 95), "n": len(idle)},
        "archived_turns": archived,
    }
    (config.out_dir / f"{stem}-{config.budget}.json").write_text(json.dumps(report, indent=2, ensure_ascii=False),
                                                                 encoding="utf-8")
    return report


def _score(pipeline: RetrievalPipeline, evalset: EvalSet, question: Question, streamed: Streamed, budget: int,
           tallies: dict[str, Tally], handle) -> None:
    appended = agent_question(question, streamed)
    asks = (("transcript", question, None), ("agent", appended, None),
            ("agent+session", appended, streamed.last_session))
    for system, asked, session in asks:
        result = pipeline.run(asked.text, tenant=asked.tenant, session_id=session, budget=budget,
                              question_date=question.question_date)
        score = score_question(evalset.name, asked, result.prompt)
        tallies[system].add(asked.category, score, result.total_tokens)
        handle.write(json.dumps({"qid": question.qid, "system": system, "category": question.category,
                                 "evidence": [e.source_id for e in asked.evidence], "soft": round(score.soft, 4),
                                 "strict": score.strict, "tokens": result.total_tokens, "prompt": result.prompt},
                                ensure_ascii=False) + "\n")


def markdown(report: dict[str, Any]) -> str:
    systems = report["systems"]
    categories = sorted({c for s in systems.values() for c in s["by_category"]})
    lines = [f"{report['dataset']} at {report['budget']} tokens, {report['n_questions']} questions: the transcript "
             "path beside the agent path (appended message by message)", "",
             "| system | soft | strict | " + " | ".join(categories) + " |",
             "| --- | --- | --- | " + " | ".join("---" for _ in categories) + " |"]
    for name, s in systems.items():
        cells = " | ".join(f"{s['by_category'].get(c, {}).get('soft', 0):.3f}" for c in categories)
        lines.append(f"| {name} | {s['soft']:.3f} | {s['strict']:.3f} | {cells} |")
    lines += ["", f"append: {report['appended']} messages, p50 {report['append_ms']['p50']} ms, "
                  f"p95 {report['append_ms']['p95']} ms (request path; archival on its own thread)",
              f"archive lag (append returned → stored), one message on an idle archive: "
              f"p50 {report['archive_lag_idle_ms']['p50']} ms, p95 {report['archive_lag_idle_ms']['p95']} ms; "
              f"streamed as fast as appends go: p50 {report['archive_lag_ms']['p50']} ms, "
              f"p95 {report['archive_lag_ms']['p95']} ms, all archived {report['archived_seconds']} s after the "
              "first append"]
    return "\n".join(lines)

