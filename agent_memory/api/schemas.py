"""Request and response bodies (with the examples the OpenAPI page shows); the sessions' are in
``schemas_sessions.py``, the health and upkeep views' in ``schemas_upkeep.py``, the check's in
``schemas_check.py``, the bulk forgets' in ``schemas_bulk.py``. Request bodies are ``ClosedBody``
(api/strict.py): an unknown key is a 422 naming it."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from agent_memory.api.strict import ClosedBody
from agent_memory.core.limits import (
    MAX_ANSWER_TOKENS,
    MAX_QUESTION_CHARS,
    MAX_SEARCH_LIMIT,
    check_document_text,
    question_problem,
)
from agent_memory.core.names import MAX_NAME_CHARS, SESSION_ID_PATTERN
from agent_memory.core.storable import check_text
from agent_memory.core.tokens import MAX_PROMPT_BUDGET
from agent_memory.memory.arguments import check_metadata
from agent_memory.retrieval.config import PRESETS


def _question(text: str) -> str:
    # Past the length the Field checks (and shows in the schema): blank, or holding a NUL or a lone
    # surrogate, as Memory refuses it (core/limits.py), so the 422 names the field.
    problem = question_problem(text)
    if problem is not None:
        raise ValueError(problem)
    return text


# What every store holds (core/storable.py): NUL in a document's text, title or metadata is a 422 naming the
# field, as strict JSON (api/strict.py) refuses Infinity and NaN before parsing; a blank text stores nothing
# and is refused as "" is; Memory.add checks the same. Annotated, so every model that takes a document
# (DocumentIn, the MCP tool ``remember``) checks it alike.
DOCUMENT_TEXT = AfterValidator(check_document_text)  # after a model's own length bounds, where it sets them
DocumentText = Annotated[str, DOCUMENT_TEXT]
DocumentTitle = Annotated[str, AfterValidator(lambda title: check_text(title, "title"))]
DocumentMetadata = Annotated[dict[str, Any], AfterValidator(check_metadata)]


# A question or a search query; Annotated, so that a model made from AskIn's fields (the MCP tool
# ``recall``) checks it too: a field_validator would stay behind on AskIn.
QuestionText = Annotated[str, Field(min_length=1, max_length=MAX_QUESTION_CHARS), AfterValidator(_question)]


class ErrorDetail(BaseModel):
    code: str = Field(examples=["not_found"])
    message: str = Field(examples=["no session 'demo' for this tenant"])


class ErrorOut(BaseModel):
    error: ErrorDetail
    similar: list[str] | None = Field(default=None, description="The 404 of a source ID: the stored IDs that "
                                      "look like it, best first (maybe none)")
    jobs: list[str] | None = Field(default=None, description="The 409 source_busy of a delete: the IDs of the "
                                   "jobs, queued or running, that will store the source")


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI entries for the error statuses a route can answer."""
    words = {400: "Bad input", 401: "Missing or invalid API key", 403: "Not allowed with API keys",
             404: "Unknown session, source or job",
             409: "Conflicts with work in progress", 413: "Body too large", 422: "Invalid request body or parameters", 502: "The LLM endpoint failed",
             503: "A store is unreachable or the service is not ready"}
    return {s: {"model": ErrorOut, "description": words.get(s, "Error")} for s in statuses}


def queued_response(what: str) -> dict[int, dict[str, Any]]:
    """The OpenAPI entry of a write queued behind a running job that holds the write lock (202)."""
    return {202: {"model": JobAccepted, "description": f"A running job holds the write lock: {what} is queued "
                                                         "behind it; the job's result is this answer"}}


# ---- documents ------------------------------------------------------------------------------------

class DocumentIn(ClosedBody):
    model_config = ConfigDict(json_schema_extra={"examples": [{
        "source_id": "notes/greenhouse", "title": "Greenhouse notes",
        "text": "The X-300 sensor replaced the X-200 in 2025.", "metadata": {"team": "ops"}}]})

    text: DocumentText = Field(min_length=1, description="The document's text.")
    source_id: str = Field(min_length=1, max_length=512, description="Stable ID; re-posting it replaces the source.")
    title: DocumentTitle = ""
    metadata: DocumentMetadata = Field(default_factory=dict)


class IngestOut(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{
        "source_ids": ["notes/greenhouse"], "report": {"sources_written": 1, "chunks": 1, "ok": True}}]})

    source_ids: list[str]
    report: dict[str, Any] = Field(description="IngestReport.to_dict(): counts, skips, warnings, seconds.")


class JobAccepted(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{
        "job_id": "3f9c2a1e7b4d", "status": "queued", "url": "/v1/jobs/3f9c2a1e7b4d"}]})

    job_id: str
    status: str
    url: str


class JobOut(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{
        "job_id": "3f9c2a1e7b4d", "status": "done", "stage": "done", "units_done": 12, "units_total": 12,
        "bytes": 2400000, "result": {"source_ids": ["big.jsonl"], "report": {"ok": True}}, "error": None}]})

    job_id: str
    status: Literal["queued", "running", "done", "failed"]
    stage: str
    units_done: int
    units_total: int
    # Inside a unit (a whole PDF, a large Markdown file is one): chunks of the upload embedded and stored so
    # far, of those split so far; 0 where nothing was split (a transcript's turns, a forget).
    chunks_done: int = 0
    chunks_total: int = 0
    # Inside a unit, after (and beside) its chunks: its texts read for the entity graph's facts so far, of those
    # to read; equal once the facts are written into the graph. 0 where no facts are read (triple_extractor none).
    graph_done: int = 0
    graph_total: int = 0
    bytes: int
    created_at: float
    started_at: float | None = None
    finished_at: float | None = None
    result: dict[str, Any] | None = None
    error: ErrorDetail | None = None


class ForgetOut(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{
        "source_id": "notes/greenhouse", "sources": 1, "items": 2, "triples": 3}]})

    source_id: str
    sources: int
    items: int
    triples: int


# ---- ask / prompt ---------------------------------------------------------------------------------

class Filters(ClosedBody):
    source_ids: list[str] | None = Field(default=None, description="Only these sources.")
    kinds: list[Literal["chunk", "summary", "turn"]] | None = None
    created_after: float | None = Field(default=None, allow_inf_nan=False, description="Unix time.")
    created_before: float | None = Field(default=None, allow_inf_nan=False, description="Unix time.")
    metadata: dict[str, Any] | None = Field(
        default=None, examples=[{"team": "ops", "lang": ["en", "de"], "version": {"gte": 2},
                                 "published": {"gte": "2024-03-01", "lte": "2024-06-30"}}],
        description="The items' own metadata keys: a value (equality), a list (membership), "
                    "{'gte': n, 'lte': m} (numeric range) or ISO dates/datetimes as bounds (date range; a "
                    "date alone as 'lte' includes that whole day); every route applies it.")


class AskIn(ClosedBody):
    model_config = ConfigDict(json_schema_extra={"examples": [{
        "question": "Which vector store does agent-memory embed, and why?", "budget": 1200,
        "session_id": None, "filters": {"kinds": ["chunk", "turn"]}}]})

    question: QuestionText
    session_id: str | None = Field(default=None, description="Adds that session's recent turns to the prompt.",
                                   json_schema_extra={"maxLength": MAX_NAME_CHARS, "pattern": SESSION_ID_PATTERN})
    budget: int = Field(default=1800, ge=1, le=MAX_PROMPT_BUDGET, description="Token budget of the assembled prompt.")
    filters: Filters = Field(default_factory=Filters)
    max_answer_tokens: int = Field(default=512, ge=1, le=MAX_ANSWER_TOKENS)
    question_date: str | None = Field(
        default=None, max_length=64, examples=["2024-08-01"],
        description="When the question is asked (default: now): 'in March' or '2 weeks ago' count from it.")
    # The names as the schema's enum; an unknown one stays the retrieval config's 400 naming the known ones.
    preset: Annotated[str, Field(max_length=64, json_schema_extra={"enum": sorted(PRESETS)})] | None = Field(
        default=None, examples=["conversation"], description="A named retrieval preset instead of the served default.")
    overrides: dict[str, Any] | None = Field(
        default=None, examples=[{"turn_weights": {"dense": 0.8}, "shares": {"facts": 0.0}}],
        description="Retrieval settings for this request, merged deeply over the preset; an unknown or "
                    "misspelled name, or a value of the wrong type, is a 400 naming it and the value given "
                    "(see agent_memory/retrieval/config.py).")


class PassageOut(BaseModel):
    source_id: str
    text: str
    kind: str
    score: float = Field(description="The reranker's raw score: higher is better, not bounded, may be negative.")
    relevance: float = Field(default=0.5, description="The score as a relevance in 0..1, higher is better "
                             "(the logistic of the score: 0.5 is this question's average candidate).")
    tokens: int
    section: str


class CitationOut(BaseModel):
    source_id: str
    passages: list[str] = Field(description="The prompt text that carries this [S:id] tag.")


class UsageOut(BaseModel):
    prompt_tokens: int = Field(description="Prompt tokens the LLM billed (the assembled prompt's size without LLM).")
    completion_tokens: int
    context_tokens: int = Field(description="Tokens of the assembled memory prompt, by the configured tokenizer.")
    budget: int


class AskOut(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{
        "mode": "llm", "answer": "An embedded Qdrant (qdrant-edge) [S:samples/docs/embedded-stores.md].",
        "citations": [{"source_id": "samples/docs/embedded-stores.md", "passages": ["agent-memory runs on ..."]}],
        "unknown_citations": [], "unknown_citation_count": 0,
        "usage": {"prompt_tokens": 812, "completion_tokens": 24, "context_tokens": 781, "budget": 1200},
        "timings_ms": {"retrieval": 61.2, "llm": 840.0, "total": 901.2}, "passages": [], "prompt": None}]})

    mode: Literal["llm", "retrieval-only"]
    answer: str | None = Field(description="The generated answer; null in retrieval-only mode.")
    citations: list[CitationOut]
    unknown_citations: list[str] = Field(description="[S:id] markers the LLM invented; stripped from the answer.")
    unknown_citation_count: int
    usage: UsageOut
    timings_ms: dict[str, float]
    passages: list[PassageOut] = Field(description="The best supporting passages, best first.")
    prompt: str | None = Field(default=None, description="The assembled prompt (always in retrieval-only mode).")
    model: str | None = None
    llm_error: str | None = Field(default=None, description="Why the LLM answer fell back to retrieval-only.")
    debug: dict[str, Any] | None = Field(default=None, description="PromptResult.debug_dict() with ?debug=true.")


class SearchIn(ClosedBody):
    query: QuestionText = Field(description="What to look for.")
    limit: int = Field(default=10, ge=1, le=MAX_SEARCH_LIMIT, description="At most this many passages.")
    session_id: str | None = Field(default=None, min_length=1, max_length=256, pattern=r"^[^/]+$",
                                   json_schema_extra={"pattern": SESSION_ID_PATTERN},
                                   description="Also search that session's recent turns.")
    filters: Filters = Field(default_factory=Filters)


class SearchHit(BaseModel):
    source_id: str
    text: str
    kind: str
    score: float = Field(description="Relevance in 0..1, higher is better (see the API description).")
    section: str = Field(description="Where the prompt would place it: passages, facts, recent ...")


class SearchOut(BaseModel):
    passages: list[SearchHit] = Field(description="Ranked passages, best first.")


class PromptPassage(BaseModel):
    model_config = ConfigDict(extra="allow")
    source_id: str
    text: str
    kind: str
    score: float = Field(description="The reranker's raw score (higher is better; not bounded).")
    tokens: int
    compressed: bool
    original_tokens: int
    item_ids: list[str]
    section: str


class DecisionOut(BaseModel):
    stage: str
    target: str
    action: str = Field(description="kept, dropped, merged, compressed, trimmed ...")
    reason: str
    tokens_before: int = 0
    tokens_after: int = 0


class PromptOut(BaseModel):
    """PromptResult.debug_dict(): the assembled prompt and how it was made."""

    model_config = ConfigDict(extra="allow")
    question: str
    prompt: str = Field(description="The assembled prompt; every passage tagged [S:<source id>].")
    budget: int
    total_tokens: int = Field(description="The prompt's size by the configured tokenizer (never above budget).")
    tokenizer: str
    sections: dict[str, int] = Field(description="Tokens per prompt section.")
    passages: list[PromptPassage]
    used_source_ids: list[str]
    assembly_drops: list[DecisionOut] = Field(description="What assembly left out for the budget or a share.")
    decisions: list[DecisionOut] = Field(description="Every other cut, merge or compression, with why.")
    timings_ms: dict[str, float]
    routes: dict[str, list[dict[str, Any]]] = Field(description="Each retrieval route's candidates, ranked.")
    fused: list[dict[str, Any]] = Field(description="The candidates after fusion and reranking.")
