"""Benchmark files → material to ingest (per tenant) and questions with their evidence.

The format is recognized by content, never by file name: LoCoMo (list of records with
``conversation`` + ``qa``), LongMemEval (list of records with ``haystack_sessions``),
HotpotQA IRCoT JSONL (records with ``contexts`` carrying ``is_supporting``) and
CMRC 2018 / SQuAD (``{"data": [{"paragraphs": [{"context", "qas"}]}]}``).

Evidence is expressed as the source IDs the product gives the same material at
ingestion (see ``agent_memory.ingest.transcripts`` and ``agent_memory.ingest.sources``), plus the evidence text,
so the metric can check both the citation and the words.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from agent_memory.core.errors import ConfigError
from agent_memory.core.records import Document, TurnRecord
from agent_memory.ingest.paragraph_ids import ParagraphIds
from agent_memory.ingest.transcripts import locomo_turns, longmemeval_turns

LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_EVIDENCE_SPLIT = re.compile(r"[;\s]+")
_TENANT_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass
class Evidence:
    """One evidence item: the source ID it must be cited under and the words it must carry."""

    source_id: str
    text: str


@dataclass
class Question:
    qid: str
    text: str
    tenant: str
    category: str
    evidence: list[Evidence] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    question_date: str | None = None


@dataclass
class Material:
    """What one tenant's store holds: documents or conversation turns."""

    tenant: str
    documents: list[Document] = field(default_factory=list)
    turns: list[TurnRecord] = field(default_factory=list)

    @property
    def size(self) -> int:
        return len(self.documents) + len(self.turns)


@dataclass
class EvalSet:
    """A recognized benchmark: its questions, and the material of each tenant built on demand.

    ``kind`` is "conversation" (turn memory; the recency baseline applies) or "documents".
    Material is built lazily per tenant so a ``--limit`` run only touches what it needs.
    """

    name: str
    kind: str
    questions: list[Question]
    _material: dict[str, Callable[[], Material]] = field(default_factory=dict, repr=False)

    def select(self, limit: int | None) -> list[Question]:
        return self.questions if limit is None else self.questions[: max(0, limit)]

    def tenants_for(self, questions: list[Question]) -> list[str]:
        return list(dict.fromkeys(q.tenant for q in questions))

    def material(self, tenant: str) -> Material:
        try:
            return self._material[tenant]()
        except KeyError:
            raise ConfigError(f"dataset {self.name!r} has no tenant {tenant!r}") from None


def _tenant(prefix: str, name: str) -> str:
    return f"{prefix}-{_TENANT_UNSAFE.sub('_', name)}"


# ---- loading and detection ---------------------------------------------------------------------------


def read_any(path: Path) -> Any:
    """Whole-file JSON, else JSON Lines (a list of records)."""
    raw = path.read_text(encoding="utf-8")
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        pass
    records = []
    for lineno, line in enumerate(raw.splitlines(), 1):
        if line.strip():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{path}: neither JSON nor JSON Lines (line {lineno}: {exc.msg})") from exc
    return records


def detect_format(data: Any) -> str:
    """'locomo' | 'longmemeval' | 'hotpotqa' | 'cmrc'; raises ConfigError for anything else."""
    if isinstance(data, dict) and isinstance(data.get("data"), list):
        articles = data["data"]
        if articles and all(isinstance(a, dict) and isinstance(a.get("paragraphs"), list) for a in articles):
            para = next((p for a in articles for p in a["paragraphs"]), None)
            if isinstance(para, dict) and "context" in para and "qas" in para:
                return "cmrc"
    if isinstance(data, list) and data and all(isinstance(x, dict) for x in data):
        first = data[0]
        if isinstance(first.get("conversation"), dict) and isinstance(first.get("qa"), list):
            return "locomo"
        if isinstance(first.get("haystack_sessions"), list):
            return "longmemeval"
        contexts = first.get("contexts")
        if isinstance(contexts, list) and contexts and isinstance(contexts[0], dict) and "is_supporting" in contexts[0]:
            return "hotpotqa"
    shape = type(data).__name__
    keys = sorted(data[0].keys())[:8] if isinstance(data, list) and data and isinstance(data[0], dict) else (
        sorted(data.keys())[:8] if isinstance(data, dict) else [])
    raise ConfigError(f"unrecognized benchmark format: top level {shape}, keys {keys}; expected LoCoMo, "
                      "LongMemEval, HotpotQA (contexts/is_supporting) or SQuAD-style CMRC")


def load_dataset(path: str | Path) -> EvalSet:
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"dataset file {str(path)!r} does not exist")
    return parse_dataset(read_any(path))


def parse_dataset(data: Any) -> EvalSet:
    fmt = detect_format(data)
    return {"locomo": _locomo, "longmemeval": _longmemeval, "hotpotqa": _hotpotqa, "cmrc": _cmrc}[fmt](data)


# ---- LoCoMo --------------------------------------------------------------------------------------------


def _record_documents(record: dict, tenant: str) -> dict[str, Document]:
    """A pooled memory: a LoCoMo record may also carry ``documents`` ([{id, title?, text}]) that share
    the conversation's tenant; ``qa.evidence`` may name a document's ``id`` beside dialog ids."""
    out: dict[str, Document] = {}
    names = ParagraphIds()
    for index, doc in enumerate(record.get("documents") or []):
        text, title = str(doc.get("text", "")), str(doc.get("title", ""))
        if text.strip():
            out[str(doc.get("id", f"doc{index}"))] = Document(source_id=names(title, text), text=text,
                                                              title=title, tenant=tenant, metadata={"title": title})
    return out


def _locomo(records: list[dict]) -> EvalSet:
    questions: list[Question] = []
    builders: dict[str, Callable[[], Material]] = {}
    for rec in records:
        sample = str(rec.get("sample_id", f"conv{len(builders)}"))
        tenant = _tenant("locomo", sample)
        turns = locomo_turns(rec, tenant)
        by_dia: dict[str, TurnRecord | Document] = {**_record_documents(rec, tenant), **{t.turn_id: t for t in turns}}
        builders[tenant] = (lambda rec=rec, tenant=tenant: Material(
            tenant, turns=locomo_turns(rec, tenant), documents=list(_record_documents(rec, tenant).values())))
        for index, qa in enumerate(rec.get("qa") or []):
            category = qa.get("category")
            if category not in LOCOMO_CATEGORIES:  # 5 = adversarial (no answer): left out
                continue
            ids = [e for raw in qa.get("evidence") or [] for e in _EVIDENCE_SPLIT.split(str(raw)) if e]
            evidence = [Evidence(by_dia[e].source_id, by_dia[e].text) for e in dict.fromkeys(ids) if e in by_dia]
            if not evidence:  # only malformed/unknown ids: nothing to measure
                continue
            questions.append(Question(qid=f"{sample}:q{index}", text=str(qa.get("question", "")), tenant=tenant,
                                      category=LOCOMO_CATEGORIES[category], evidence=evidence,
                                      answers=[str(qa["answer"])] if "answer" in qa else [],
                                      question_date=qa.get("question_date")))  # when a set dates its questions
    return EvalSet("locomo", "conversation", questions, builders)


# ---- LongMemEval -----------------------------------------------------------------------------------------


def _longmemeval_evidence(record: dict, turns: list) -> list[Evidence]:
    """The ``has_answer`` turns, read from the benchmark record: a gold label stays in the harness
    and never reaches a stored item (the product's reader does not carry it)."""
    turns_by_position = {}
    for turn in turns:
        turns_by_position.setdefault(turn.session_id, []).append(turn)
    ids = record.get("haystack_session_ids") or []
    out = []
    for s_index, session in enumerate(record.get("haystack_sessions") or []):
        session_id = str(ids[s_index]) if s_index < len(ids) else f"session_{s_index}"
        stored = turns_by_position.get(session_id, [])
        for t_index, turn in enumerate(session if isinstance(session, list) else []):
            if isinstance(turn, dict) and turn.get("has_answer") and t_index < len(stored):
                out.append(Evidence(stored[t_index].source_id, stored[t_index].text))
    return out


def _longmemeval(records: list[dict]) -> EvalSet:
    questions: list[Question] = []
    builders: dict[str, Callable[[], Material]] = {}
    for index, rec in enumerate(records):
        qid = str(rec.get("question_id", f"q{index}"))
        tenant = _tenant("lme", qid)
        turns = longmemeval_turns(rec, tenant)
        evidence = _longmemeval_evidence(rec, turns)
        builders[tenant] = (lambda rec=rec, tenant=tenant: Material(tenant, turns=longmemeval_turns(rec, tenant)))
        if not evidence:
            continue
        questions.append(Question(qid=qid, text=str(rec.get("question", "")), tenant=tenant,
                                  category=str(rec.get("question_type", "all")), evidence=evidence,
                                  answers=[str(rec.get("answer", ""))], question_date=rec.get("question_date")))
    return EvalSet("longmemeval", "conversation", questions, builders)


# ---- HotpotQA ----------------------------------------------------------------------------------------------


def _paragraphs(records: list[dict]) -> Iterator[tuple[dict, str, str]]:
    """Each record's titled paragraphs, in file order: (record context, title, text)."""
    for rec in records:
        for ctx in rec.get("contexts") or []:
            text = ctx.get("paragraph_text") or ctx.get("text") or ""
            if text.strip():
                yield ctx, str(ctx.get("title", "")), text


def _hotpot_docs(records: list[dict], tenant: str, names: ParagraphIds) -> Iterator[Document]:
    seen: set[str] = set()
    for _, title, text in _paragraphs(records):
        sid = names(title, text)
        if sid in seen:  # the same paragraph serves several questions: stored once
            continue
        seen.add(sid)
        yield Document(source_id=sid, text=text, title=title, tenant=tenant, metadata={"title": title})


def _hotpotqa(records: list[dict]) -> EvalSet:
    tenant = "hotpotqa"
    # Named once over the whole file, in its order, as the product names one file's paragraphs: a
    # question's evidence is the paragraph it gives, not another of the same title stored first.
    names = ParagraphIds()
    for _, title, text in _paragraphs(records):
        names(title, text)
    questions: list[Question] = []
    for index, rec in enumerate(records):
        evidence = []
        for ctx, title, text in _paragraphs([rec]):
            if ctx.get("is_supporting"):
                evidence.append(Evidence(names(title, text), text))
        answers = [s for obj in rec.get("answers_objects") or [] for s in obj.get("spans") or [] if str(s).strip()]
        if not evidence:
            continue
        questions.append(Question(qid=str(rec.get("question_id", f"q{index}")),
                                  text=str(rec.get("question_text") or rec.get("question") or ""), tenant=tenant,
                                  category=str(rec.get("type") or "all"), evidence=evidence,
                                  answers=[str(a) for a in answers]))
    return EvalSet("hotpotqa", "documents", questions,
                   {tenant: lambda: Material(tenant, documents=list(_hotpot_docs(records, tenant, names)))})


# ---- CMRC 2018 (SQuAD format) ---------------------------------------------------------------------------


def _cmrc(data: dict) -> EvalSet:
    tenant = "cmrc2018"
    questions: list[Question] = []
    names = ParagraphIds()  # a paragraph without an ID: its article's title, told apart by order
    for article in data["data"]:
        for para in article.get("paragraphs") or []:
            context = str(para.get("context", ""))
            pid = para.get("id") or names(str(article.get("title", "")), context)
            for qa in para.get("qas") or []:
                answers = list(dict.fromkeys(str(a.get("text", "")) for a in qa.get("answers") or []))
                answers = [a for a in answers if a.strip()]
                if not answers:
                    continue
                # Evidence is the answer string itself, found under the paragraph's source ID.
                questions.append(Question(qid=str(qa.get("id", f"{pid}:q{len(questions)}")),
                                          text=str(qa.get("question", "")), tenant=tenant, category="all",
                                          evidence=[Evidence(str(pid), a) for a in answers], answers=answers))

    def build() -> Material:
        docs, seen = [], set()
        for article in data["data"]:
            for para in article.get("paragraphs") or []:
                text = str(para.get("context", ""))
                pid = str(para.get("id") or names(str(article.get("title", "")), text))
                if text.strip() and pid not in seen:
                    seen.add(pid)
                    docs.append(Document(source_id=pid, text=text, tenant=tenant,
                                         title=str(article.get("title", ""))))
        return Material(tenant, documents=docs)

    return EvalSet("cmrc", "documents", questions, {tenant: build})
